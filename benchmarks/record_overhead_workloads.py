"""Recording overhead on the study's Python-heavy workloads, in local mode or on the cluster.

`benchmarks/record_overhead.py` measures its own small job; this one runs the validation
study's Python-heavy workloads (experiments/wordcount.toml, pagerank.toml, udf_etl.toml by
default; any spec with a ``script`` works) at a small size, plain and under `perfmodel record`
with each variant of its options, in rounds: every round runs each (plain and every variant)
once, in an order rotated and reversed from round to round so drifts of the machine's load
hit all alike. Per workload and variant it prints the median application runtime (start to
end event in the event log: what recording costs the job), the median of the per-round
ratios to that round's plain run with a distribution-free 95% interval (6+ rounds), and
what the samplers took in CPU (the bundles' ``recording_cost``).

Variants (``--variant NAME="record options"``, repeatable; default below): ``full`` is
`perfmodel record` as is (JFR + plugin, py-spy at every --interval-ms), ``py50`` samples
Python every 50 ms instead of 20 (`--python-interval-ms`), ``nopyspy`` records no Python.

``--cluster``: the same on a 2-worker namespace cluster (docs/cluster.md; needs root), the
workers capped as in the cluster study (``--worker-cpu``, 0.6 cores each) so the samplers
(py-spy and `perfmodel record` run outside the workers' quota) have spare capacity, as the
issue's target assumes; the driver runs in the master's namespace, plain through the
cluster's configuration and recorded with `perfmodel cluster record`.

    python benchmarks/record_overhead_workloads.py [--runs 5] [--size-mb 24]
        [--spec experiments/wordcount.toml ...] [--master local[2]] [--cluster]
        [--variant "py50=--python-interval-ms 50" ...]

``--pool OUTPUT...`` runs nothing: it reads saved outputs of this script and pools their
rounds, per workload and variant (the median of every per-round ratio, with its interval).
Rounds of one variant vary by ±5% on this machine, so one run of a few rounds cannot tell
2% from 4%; outputs of the same setting taken at different times can be pooled.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from record_overhead import app_phases, interval_text, rotation, run, variant_options

if TYPE_CHECKING:
    from perfmodel.experiment.cluster_state import ClusterState

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SPECS = ["experiments/wordcount.toml", "experiments/pagerank.toml", "experiments/udf_etl.toml"]
VARIANTS = ["full=", "py50=--python-interval-ms 50", "nopyspy=--no-pyspy"]
CLUSTER_NAME = "pmo"
CLUSTER_SUBNET = "10.77.3"


def job_command(spec_path: str, args: argparse.Namespace, scratch: Path) -> list[str]:
    """spark-submit of the spec's script on the benchmark's master, the spec's plan settings
    (parallelism, shuffle partitions) kept, its data prepared at ``--size-mb``."""
    from perfmodel.experiment.runner import build_command, prepare, run_environment
    from perfmodel.experiment.spec import load_spec
    from perfmodel.experiment.spec_grid import RunConfig

    spec = load_spec(REPO / spec_path)
    if spec.script is None:
        sys.exit(f"{spec_path}: a spec with a `script` is needed, not a plain command")
    if "size_mb" in spec.params:
        spec = spec.with_overrides(params={"size_mb": str(args.size_mb)})
    prepare(spec, run_environment())
    plan = spec.configs[0]
    if args.cluster:
        config = RunConfig(
            name="cluster",
            master="cluster",
            executor_memory=args.memory,
            shuffle_partitions=plan.shuffle_partitions,
            conf=plan.conf,
            workers=args.workers,
        )
    else:
        config = replace(plan, name=args.master, master=args.master, driver_memory=args.memory)
    return build_command(spec, config, scratch)


def with_event_log(job: list[str], events: Path) -> list[str]:
    """The plain run writes its event log on the command line (a cluster's driver reads the
    cluster's configuration directory, so a ``SPARK_CONF_DIR`` of ours would not be used)."""
    log = [
        "--conf",
        "spark.eventLog.enabled=true",
        "--conf",
        f"spark.eventLog.dir={events.as_uri()}",
    ]
    return [job[0], *log, *job[1:]]


def measure(
    spec_path: str, args: argparse.Namespace, tmp: Path, state: ClusterState | None
) -> None:
    perfmodel = str(Path(sys.executable).parent / "perfmodel")
    job = job_command(spec_path, args, tmp / "scratch")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_CONF_DIR", None)
    variants = dict(variant_options(text) for text in args.variant or VARIANTS)
    names = ["plain", *variants]
    apps: dict[str, list[float]] = {n: [] for n in names}
    phases: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    ratios: dict[str, list[float]] = {n: [] for n in variants}
    costs: dict[str, list[dict[str, float]]] = {n: [] for n in variants}
    events = tmp / "events"
    print(f"== {spec_path} (size_mb={args.size_mb}): {' '.join(job[1:])}", flush=True)
    for i in range(args.runs):
        this_round: dict[str, float] = {}
        for name in rotation(names, i):
            bundle = tmp / "bundle"
            shutil.rmtree(bundle, ignore_errors=True)
            shutil.rmtree(tmp / "scratch", ignore_errors=True)
            if name == "plain":
                shutil.rmtree(events, ignore_errors=True)
                events.mkdir()
                cmd, run_env, log_dir = with_event_log(job, events), env, events
                if state is not None:
                    cmd, run_env = state.driver_command(cmd), state.driver_env(env)
            else:
                options, extra_env = variants[name]
                where = (
                    ["cluster", "record", "--name", CLUSTER_NAME] if args.cluster else ["record"]
                )
                cmd = [perfmodel, *where, "--out", str(bundle), *options, "--", *job]
                run_env, log_dir = {**env, **extra_env}, bundle / "eventlog"
            run(cmd, run_env)
            phases[name].append(app_phases(log_dir))
            this_round[name] = phases[name][-1]["first_task"] + phases[name][-1]["tasks"]
            apps[name].append(this_round[name])
            if name != "plain":
                manifest = json.loads((bundle / "manifest.json").read_text())
                costs[name].append(manifest.get("recording_cost") or {})
        for name in variants:
            ratios[name].append(this_round[name] / this_round["plain"] - 1)
        print(
            f"  round {i + 1} (load {os.getloadavg()[0]:.2f}): "
            + ", ".join(f"{n} {s:.2f} s" for n, s in this_round.items()),
            flush=True,
        )
    for name in names:
        print(
            f"  {name:8s} phases (medians): first executor {_median(phases[name], 'executor')}, "
            f"first task {_median(phases[name], 'first_task')}, "
            f"first task to end {_median(phases[name], 'tasks')}"
        )
    plain = statistics.median(apps["plain"])
    spread = (max(apps["plain"]) - min(apps["plain"])) / plain
    print(f"  plain: application median {plain:.2f} s, spread (max-min)/median {spread:.1%}")
    for name in variants:
        ci = interval_text(ratios[name], ", ")
        counted = [c for c in costs[name] if "cpu_s" in c]
        cpu = (
            f"; samplers' CPU median {statistics.median(c['cpu_s'] for c in counted):.2f} s "
            f"(py-spy {statistics.median(c.get('pyspy_cpu_s', 0.0) for c in counted):.2f} s), "
            f"{statistics.median(c.get('share_of_machine', 0.0) for c in counted):.2%} "
            "of the machine"
            if counted
            else ""
        )
        print(
            f"  {name:8s} application median {statistics.median(apps[name]):.2f} s, "
            f"overhead (median of per-round ratios) {statistics.median(ratios[name]):+.1%}"
            f"{ci}{cpu}",
            flush=True,
        )


_ROUND = re.compile(r"^  round \d+ \(load [\d.]+\): (.*)$")
_SPEC = re.compile(r"^== (\S+) ")


def pool(outputs: list[str]) -> None:
    """Print the per-round ratios of saved outputs, pooled per workload and variant."""
    ratios: dict[tuple[str, str], list[float]] = {}
    for path in outputs:
        spec = "?"
        try:
            text = Path(path).read_text()
        except OSError as exc:
            sys.exit(f"cannot read {path}: {exc.strerror or exc}")
        for line in text.splitlines():
            if (m := _SPEC.match(line)) is not None:
                spec = Path(m.group(1)).stem
            elif (m := _ROUND.match(line)) is not None:
                times = {n: float(t) for n, t in re.findall(r"(\S+) ([\d.]+) s", m.group(1))}
                plain = times.pop("plain", None)
                for name, seconds in times.items():
                    if plain:
                        ratios.setdefault((spec, name), []).append(seconds / plain - 1)
    if not ratios:
        sys.exit("no rounds found in " + ", ".join(outputs))
    for (spec, name), values in sorted(ratios.items()):
        ci = interval_text(values, ", ")
        print(
            f"{spec:16s} {name:12s} {len(values):3d} rounds: overhead (median of per-round "
            f"ratios) {statistics.median(values):+.1%}{ci}"
        )


def _median(rows: list[dict[str, float]], key: str) -> str:
    return f"{statistics.median(r[key] for r in rows):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", action="append", help=f"Spec files (default: {SPECS}).")
    parser.add_argument("--runs", type=int, default=5, help="Rounds (each: plain + variants).")
    parser.add_argument("--size-mb", type=int, default=24, help="The specs' size_mb.")
    parser.add_argument("--master", default="local[2]", help="Local mode's master.")
    parser.add_argument("--memory", default="2g", help="Driver (local) or executor heap.")
    parser.add_argument(
        "--variant",
        action="append",
        help='NAME="record options" (repeatable; default: ' + "; ".join(VARIANTS) + ").",
    )
    parser.add_argument("--cluster", action="store_true", help="On a namespace cluster.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-cpu", type=float, default=0.6, help="Cores per worker.")
    parser.add_argument(
        "--pool",
        nargs="+",
        metavar="OUTPUT",
        help="Run nothing: pool the rounds of saved outputs of this script.",
    )
    args = parser.parse_args()
    if args.pool:
        pool(args.pool)
        return
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    # SIGTERM unwinds like Ctrl-C: the cluster is torn down and the scratch removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="perfmodel-overhead-wl-"))
    state = None
    try:
        if args.cluster:
            from perfmodel.experiment import cluster
            from perfmodel.experiment.cluster_state import ClusterSpec

            cluster.down(CLUSTER_NAME)
            state = cluster.up(
                ClusterSpec(
                    name=CLUSTER_NAME,
                    workers=args.workers,
                    cpu_cores=args.worker_cpu,
                    worker_memory="4g",
                    subnet=CLUSTER_SUBNET,
                )
            )
        for spec_path in args.spec or SPECS:
            measure(spec_path, args, tmp, state)
    finally:
        if args.cluster:
            from perfmodel.experiment import cluster

            cluster.down(CLUSTER_NAME)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
