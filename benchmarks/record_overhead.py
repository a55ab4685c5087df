"""Recording overhead of `perfmodel record`: the same PySpark job with and without it.

Runs tests/data/record/job.py alternately plain and under `perfmodel record` (as it records
by default: the plugin's JVM sampler and py-spy every 50 ms, per-thread CPU, the process
monitor), N times each; the order is swapped every pair so
slow drifts in machine load cancel. The plain run writes its event log too (through a
``SPARK_CONF_DIR``, as a cluster with a history server does), so the application's own
runtime can be compared. Three figures, each a median of per-pair ratios:

* **application**: start to end event in the event log — what recording costs the job;
* **command**: until the command exits — what the user waits for the job;
* **total**: `perfmodel record` until the bundle is written (JVM exit for the JFR dump,
  reading JFR and py-spy output, writing Parquet).

The spread of the plain runs is printed as the noise floor, and each median ratio comes with
a distribution-free 95% confidence interval (order statistics of the per-pair ratios). Each
recorded run's bundle also says what its samplers cost in CPU time (``recording_cost`` in the
manifest, counted by the kernel, far less noisy than wall-clock): the median share of the
machine is printed too.

``--parts`` instead splits the application figure by component: each round runs the job
plain, with the plugin and process monitor only, with JFR only (``--jvm-sampler jfr``), with
py-spy only and with everything `perfmodel record` does by default (plus any ``--variant
NAME=OPTIONS``), in an order rotated and reversed from round
to round, and prints each one's median against the plain median after every round. A
variant's ``VAR=value`` words set its runs' environment; ``--plain-variant`` adds plain runs
with an environment of their own (e.g. another JDK: ``plain25="JAVA_HOME=/usr/lib/jvm/..."``
next to ``--variant full25="JAVA_HOME=/usr/lib/jvm/..."``). ``--cpu`` adds, per variant, the
CPU time the job's own JVM threads (by kind: JIT compilers, GC, task threads, py4j, JFR) and
Python workers took inside the application's window: far less noisy than the runtimes, it
shows whether recording makes the job itself work more or only adds the samplers' time.

``--spare-core`` (either mode) measures what recording would cost on a machine with a core
to spare: every job, plain or recorded, is confined to all CPUs but the last (``taskset``),
and `perfmodel record`, its py-spy processes and the JVM's JFR and plugin threads to the last
one, so the samplers take no CPU from the job and only their other effects (threads stopped
for stack walks, the job's own extra work) remain. On 2 cores that makes the job a 1-core job.
``--parts --also-spare-core`` runs every variant both ways in one rotation (``NAME:spare``
against ``plain:spare``), so the two settings are compared under the same machine drift.

``--job dataframe`` (either mode) runs tests/data/record/dataframe_job.py instead: DataFrame
operations only, no Python workers, so py-spy samples only the driver. ``--spec SPEC`` runs a
study spec's script instead (e.g. the fit workloads, experiments/wordcount.toml), at
``--size-mb``, on ``--master`` (``local[2]`` keeps both of a 2-core host's cores busy: the
saturated case; ``local[1]`` leaves one to spare) with a ``--memory`` heap.

``--pool OUTPUT ...`` runs nothing: it pools the pairs of earlier runs of this benchmark (their
saved output, e.g. one per workload and master) into one median with its interval, since a
few pairs of one workload bound the overhead only to the plain runs' spread.

``--parts --only NAME,...`` also takes the recorder's components one at a time (`COMPONENTS`:
the event log and the plugin's task events alone, then each of the process monitor, the
per-thread CPU sampler, JFR or the plugin's sampler at a period, py-spy at a period) and
``old``, `perfmodel record` as it recorded before its default became the plugin's sampler
every 50 ms. Every mode prints, per recorded variant, what its bundles say the samplers took
in CPU (``recording_cost``), which prices each component far more precisely than runtimes.

    python benchmarks/record_overhead.py [--runs 5] [--scale 3] [--interval-ms 20]
        [--job mixed|dataframe | --spec experiments/wordcount.toml --size-mb 24 --master local[2]]
    python benchmarks/record_overhead.py --pool wordcount-local2.txt sql_join-local2.txt ...
    python benchmarks/record_overhead.py --parts --runs 8 --only old,full --spec ...
    python benchmarks/record_overhead.py --parts --runs 4 --spec ...
        --only events,monitor,threads,jfr20,plugin20,plugin50,pyspy20,pyspy50,pyspy100
    python benchmarks/record_overhead.py --parts [--runs 8] [--variant "jfr20=--no-pyspy
        --native-interval-ms 20"] [--only plugin,full] [--plain-variant "NAME=VAR=value"] [--cpu]
    python benchmarks/record_overhead.py --spare-core [--parts ...]
    python benchmarks/record_overhead.py --parts --also-spare-core [--only full] [--cpu]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from job_cpu import JobCpuWatcher

    from perfmodel.dag.model import ApplicationProfile

REPO = Path(__file__).resolve().parents[1]
JOB = REPO / "tests" / "data" / "record" / "job.py"
JOBS = {"mixed": JOB, "dataframe": JOB.with_name("dataframe_job.py")}
"""``--job``: the mixed job (RDD lambdas and a Python UDF: py-spy samples every worker) and
one with no Python on the executors (DataFrame operations only, like most SQL jobs)."""
sys.path.insert(0, str(REPO))


@dataclass(frozen=True, slots=True)
class Cores:
    """Where jobs and samplers run: ``job`` None means anywhere (the default)."""

    job: list[int] | None = None
    samplers: list[int] | None = None

    @classmethod
    def split(cls, spare: bool) -> Cores:
        """All usable CPUs but the last for the job, the last for the samplers."""
        if not spare:
            return cls()
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            sys.exit("--spare-core needs at least 2 usable CPUs")
        return cls(cpus[:-1], cpus[-1:])

    def job_command(self, cmd: list[str]) -> list[str]:
        return cmd if self.job is None else ["taskset", "-c", _cpu_list(self.job), *cmd]

    def record_command(self, cmd: list[str]) -> list[str]:
        """`perfmodel record` on the samplers' CPUs (its py-spy processes inherit them)."""
        return cmd if self.samplers is None else ["taskset", "-c", _cpu_list(self.samplers), *cmd]

    def watcher(self) -> JobCpuWatcher:
        """A watcher that moves the JVM's recording threads onto the samplers' CPUs."""
        from job_cpu import JobCpuWatcher

        return JobCpuWatcher(
            recording_cpus=set(self.samplers) if self.samplers else None, ancestor=os.getpid()
        )


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


def run_watched(
    cmd: list[str], env: dict[str, str], cores: Cores, *, cpu: bool = False, jfr: bool = False
) -> tuple[float, JobCpuWatcher | None]:
    """`run`, with a watcher of the job's CPU when ``cpu`` is asked for or the samplers have
    a core of their own (the watcher moves the JVM's recording threads there). A recorded run
    with JFR whose recording threads could not be moved says so: its figure would be that of
    a shared machine."""
    if not cpu and cores.job is None:
        return run(cmd, env), None
    with cores.watcher() as watcher:
        seconds = run(cmd, env)
    if jfr and cores.job is not None and not watcher.moved:
        print("warning: no JFR thread was moved to the spare core in this run", file=sys.stderr)
    return seconds, watcher


def record_command(
    args: argparse.Namespace, out: Path, options: list[str], cores: Cores, job: list[str]
) -> tuple[list[str], bool]:
    """`perfmodel record` of ``job`` into ``out`` with the run's and the variant's options, on
    the given cores; and whether it records with JFR."""
    perfmodel = str(Path(sys.executable).parent / "perfmodel")
    cmd = [perfmodel, "record", "--out", str(out)]
    if args.interval_ms is not None:
        cmd += ["--interval-ms", str(args.interval_ms)]
    cmd += [*args.record_option, *options, "--", *cores.job_command(job)]
    return cores.record_command(cmd), "--no-jfr" not in [*args.record_option, *options]


def spec_job(
    spec_path: str, size_mb: int | None, master: str, memory: str, scratch: Path
) -> list[str]:
    """``--spec``: spark-submit of a study spec's script (its data prepared, at ``size_mb``
    where the spec has that parameter) on ``master`` with a ``memory`` heap, the spec's plan
    settings (parallelism, shuffle partitions) kept; its output goes under ``scratch``, which
    `run` empties before every run."""
    from dataclasses import replace

    from perfmodel.experiment.runner import build_command, prepare, run_environment
    from perfmodel.experiment.spec import load_spec

    spec = load_spec(Path(spec_path).resolve())
    if spec.script is None:
        sys.exit(f"{spec_path}: a spec with a `script` is needed, not a plain command")
    if size_mb is not None and "size_mb" in spec.params:
        spec = spec.with_overrides(params={"size_mb": str(size_mb)})
    prepare(spec, run_environment())
    config = replace(spec.configs[0], name=master, master=master, driver_memory=memory)
    # Spark refuses to write over an earlier run's output: the shell empties the directory and
    # then becomes spark-submit (exec: the same process, as `perfmodel record` sees it).
    empty_then_run = ["sh", "-c", 'rm -rf "$0" && exec "$@"', str(scratch)]
    return empty_then_run + build_command(spec, config, scratch)


def run(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-15:]
        sys.exit(f"{' '.join(cmd[:3])}... exited with {proc.returncode}:\n" + "\n".join(tail))
    return time.perf_counter() - start


def _app_profile(log_dir: Path) -> ApplicationProfile:
    """The profile of the one application whose event log is in ``log_dir``, which must have
    a start and an end."""
    from perfmodel.spark.load import build_profile

    (log,) = [p for p in log_dir.iterdir() if not p.name.startswith(".")]
    profile = build_profile(log).profile
    if profile.start_ms is None or profile.end_ms is None:
        sys.exit(f"{log}: the application has no start or no end event")
    return profile


def app_window(log_dir: Path) -> tuple[float, float]:
    """Start and end (epoch milliseconds) of the one application whose event log is in
    ``log_dir``."""
    profile = _app_profile(log_dir)
    return profile.start_ms, profile.end_ms


def app_phases(log_dir: Path) -> dict[str, float]:
    """Where an application's time went, in seconds from its start: until its first
    executor registered (``executor``; on a cluster, the executor JVM's start-up), until its
    first task started (``first_task``), and from then to the end (``tasks``). A recording
    that slows start-up shows in the first two; one that slows the work, in the last."""
    profile = _app_profile(log_dir)
    start, end = profile.start_ms, profile.end_ms
    added = [
        e.added_ms
        for e in profile.executors.values()
        if e.added_ms is not None and e.executor_id != "driver"
    ]
    launches = [float(s.table.launch_ms.min()) for s in profile.stages.values() if len(s.table)]
    first_task = min(launches) if launches else end
    return {
        "executor": ((min(added) if added else start) - start) / 1000.0,
        "first_task": (first_task - start) / 1000.0,
        "tasks": (end - first_task) / 1000.0,
    }


def app_seconds(log_dir: Path) -> float:
    """Runtime of the one application whose event log is in ``log_dir``."""
    start, end = app_window(log_dir)
    return (end - start) / 1000.0


def environments(tmp: Path) -> tuple[dict[str, str], dict[str, str], Path]:
    """The job's environment (no event log of its own: `record` adds one), the plain runs'
    (their event log goes to the returned directory through a ``SPARK_CONF_DIR``, as on a
    cluster with a history server) and that directory."""
    conf = tmp / "conf"
    conf.mkdir()
    events = tmp / "events"
    (conf / "spark-defaults.conf").write_text(
        f"spark.eventLog.enabled true\nspark.eventLog.dir {events.as_uri()}\n"
    )
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("JOB_FAIL", None)
    env.pop("SPARK_CONF_DIR", None)
    return env, {**env, "SPARK_CONF_DIR": str(conf)}, events


def rotation(names: list[str], round_index: int) -> list[str]:
    """The order of one round: rotated by the round's number and reversed every other round,
    so drifts of the machine hit every variant alike."""
    k = round_index % len(names)
    order = names[k:] + names[:k]
    return order if round_index % 2 == 0 else order[::-1]


def print_round(
    round_index: int, apps: dict[str, list[float]], notes: dict[str, str] | None = None
) -> None:
    """Each variant's median application runtime against the plain median, so far (a
    ``…:spare`` variant against ``plain:spare``)."""
    print(f"after round {round_index + 1}, load average {os.getloadavg()[0]:.2f}:", flush=True)
    for name, values in apps.items():
        base = statistics.median(apps[plain_of(name, apps)])
        median = statistics.median(values)
        note = (notes or {}).get(name, "")
        print(
            f"  {name:12s} application median {median:6.2f} s {median / base - 1:+6.1%}  "
            f"{note}{[round(x, 2) for x in values]}",
            flush=True,
        )


SPARE = ":spare"
"""`--parts --also-spare-core`: the suffix of the variants run with a core to spare."""


def plain_of(name: str, names: Collection[str]) -> str:
    """The plain runs a variant is compared with: those with the same cores."""
    spare = "plain" + SPARE
    return spare if name.endswith(SPARE) and spare in names else "plain"


PARTS = {
    "plugin": ["--no-jfr", "--no-pyspy"],
    "jfr": ["--no-pyspy", "--jvm-sampler", "jfr"],
    "pyspy": ["--no-jfr"],
    "full": [],
}
"""`--parts`: what each variant adds to the default `perfmodel record` options."""

_NOTHING = ["--no-jfr", "--no-pyspy", "--no-thread-cpu", "--no-monitor"]
_NO_PYTHON = ["--no-pyspy", "--no-thread-cpu", "--no-monitor"]
_NO_JVM = ["--no-jfr", "--no-thread-cpu", "--no-monitor"]
COMPONENTS = {
    "events": _NOTHING,
    "monitor": [*_NOTHING, "--monitor"],
    "threads": [*_NOTHING, "--thread-cpu"],
    "jfr20": [*_NO_PYTHON, "--jvm-sampler", "jfr", "--interval-ms", "20"],
    "plugin20": [*_NO_PYTHON, "--jvm-sampler", "plugin", "--interval-ms", "20"],
    "plugin50": [*_NO_PYTHON, "--jvm-sampler", "plugin", "--interval-ms", "50"],
    "pyspy20": [*_NO_JVM, "--python-interval-ms", "20"],
    "pyspy50": [*_NO_JVM, "--python-interval-ms", "50"],
    "pyspy100": [*_NO_JVM, "--python-interval-ms", "100"],
    "old": ["--jvm-sampler", "jfr", "--interval-ms", "20"],
}
"""`--parts --only NAME,...`: one component of a recording at a time, by what it adds to a
recording of the event log and the plugin's task events alone (``events``): the process
monitor, the per-thread CPU sampler, each JVM sampler at a period, py-spy at a period; and
``old``, every part as `perfmodel record` recorded before its default became the plugin's
sampler every 50 ms (JFR every 20 ms, py-spy every 20 ms)."""


def variant_options(text: str) -> tuple[str, tuple[list[str], dict[str, str]]]:
    """``NAME=words`` as (name, (record options, environment)): a word ``VAR=value`` whose
    ``VAR`` is an upper-case name goes to the environment, any other word is an option."""
    name, _, words = text.partition("=")
    options: list[str] = []
    env: dict[str, str] = {}
    for word in words.split():
        var, eq, value = word.partition("=")
        if eq and var.isidentifier() and var.isupper():
            env[var] = value
        else:
            options.append(word)
    return name.strip(), (options, env)


Variants = dict[str, tuple[list[str], dict[str, str]]]
"""`--parts` record variants: name → (record options, environment)."""


def part_variants(args: argparse.Namespace) -> tuple[dict[str, dict[str, str]], Variants]:
    """The plain runs (name → environment) and record variants `--parts` rotates over; exits
    with a message on an unknown ``--only`` part or a ``--plain-variant`` with options."""
    only = [k for k in args.only.split(",") if k]
    known = PARTS | COMPONENTS
    if unknown := sorted(set(only) - set(known)):
        sys.exit(f"--only: unknown part(s) {', '.join(unknown)}; the parts are {', '.join(known)}")
    variants: Variants = (
        {k: (known[k], {}) for k in only} if only else {k: (v, {}) for k, v in PARTS.items()}
    )
    variants |= dict(variant_options(text) for text in args.variant)
    plains: dict[str, dict[str, str]] = {"plain": {}}
    for text in args.plain_variant:
        name, (options, extra_env) = variant_options(text)
        if options:
            sys.exit(f"--plain-variant {name}: only VAR=value words, not {' '.join(options)}")
        plains[name] = extra_env
    return plains, variants


def parts(
    args: argparse.Namespace,
    tmp: Path,
    job: list[str],
    env: dict[str, str],
    plain_env: dict[str, str],
    cores: Cores,
) -> None:
    """Rounds over plain and the record variants, each round in a rotated order."""
    plains, variants = part_variants(args)
    names = [*plains, *variants]
    cores_of = dict.fromkeys(names, cores)
    if args.also_spare_core:
        spare = Cores.split(True)
        cores_of |= {name + SPARE: spare for name in names}
        plains |= {name + SPARE: extra for name, extra in plains.items()}
        variants |= {name + SPARE: v for name, v in variants.items()}
        names = list(cores_of)
    everywhere = os.sched_getaffinity(0)
    apps: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    cpu_run: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    costs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    events = tmp / "events"
    for i in range(args.runs):
        for name in rotation(names, i):
            placed = cores_of[name]
            # This script's watcher runs beside the samplers: its thread inherits this one's CPUs.
            os.sched_setaffinity(0, placed.samplers or everywhere)
            if name in plains:
                shutil.rmtree(events, ignore_errors=True)
                events.mkdir()
                cmd, cmd_env = placed.job_command(job), {**plain_env, **plains[name]}
                log_dir, jfr = events, False
            else:
                out = tmp / "bundle"
                shutil.rmtree(out, ignore_errors=True)
                options, extra_env = variants[name]
                cmd, jfr = record_command(args, out, options, placed, job)
                cmd_env, log_dir = {**env, **extra_env}, out / "eventlog"
            _, watcher = run_watched(cmd, cmd_env, placed, cpu=args.cpu, jfr=jfr)
            if name not in plains:
                manifest = json.loads((tmp / "bundle" / "manifest.json").read_text())
                costs[name].append(manifest.get("recording_cost") or {})
            start, end = app_window(log_dir)  # one reading of the event log serves both
            if watcher is not None and args.cpu:
                cpu[name].append(watcher.series.window(start, end))
                cpu_run[name].append(watcher.series.at(float("inf")))
            apps[name].append((end - start) / 1000.0)
        print_round(i, apps)
    print_costs(costs)
    if not args.cpu:
        return
    where = ("in the application's window", "over the whole command (JVM start-up included)")
    for text, table in zip(where, (cpu, cpu_run), strict=True):
        for base in ("plain", "plain" + SPARE):  # each table against plain runs on its cores
            group = {n: c for n, c in table.items() if plain_of(n, table) == base}
            if group:
                print_cpu(group, text)


def print_costs(costs: dict[str, list[dict[str, float]]]) -> None:
    """Per recorded variant, the medians of what its bundles say the samplers took
    (``recording_cost``, counted by the kernel): far less noisy than runtimes, it prices each
    component in CPU."""
    keys = ("pyspy_cpu_s", "jvm_recording_cpu_s", "perfmodel_cpu_s", "cpu_s", "share_of_machine")
    rows = {n: [c for c in v if "cpu_s" in c] for n, v in costs.items()}
    rows = {n: v for n, v in rows.items() if v}
    if not rows:
        return
    print("samplers' CPU per run (recording_cost), median:", flush=True)
    print(f"  {'':12s}" + "".join(f"{k.removesuffix('_cpu_s'):>18s}" for k in keys))
    for name, values in rows.items():
        cells = [statistics.median(float(c.get(k, 0.0)) for c in values) for k in keys]
        text = [f"{v:.3f} s" for v in cells[:-1]] + [f"{cells[-1]:.2%}"]
        print(f"  {name:12s}" + "".join(f"{t:>18s}" for t in text), flush=True)


def print_cpu(cpu: dict[str, list[dict[str, float]]], where: str) -> None:
    """Median CPU seconds of the job's parts, per variant, and each variant's difference from
    the first (plain) one; ``all`` is the sum of the medians."""
    from job_cpu import GROUPS

    names = list(cpu)
    if not cpu[names[0]]:
        return
    medians = {
        n: {g: statistics.median(w.get(g, 0.0) for w in cpu[n]) for g in GROUPS}
        for n in names
        if cpu[n]
    }
    base = medians[names[0]]
    print(f"CPU seconds of the job's processes {where}, median:", flush=True)
    print(f"  {'':16s}" + "".join(f"{n:>16s}" for n in medians))
    for group in [*GROUPS, "all"]:
        ref = sum(base.values()) if group == "all" else base[group]
        cells = []
        for n, m in medians.items():
            value = sum(m.values()) if group == "all" else m[group]
            cells.append(f"{value:.2f}" + ("" if n == names[0] else f" ({value - ref:+.2f})"))
        print(f"  {group:16s}" + "".join(f"{c:>16s}" for c in cells), flush=True)


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """Distribution-free confidence interval of the median: the k-th smallest and k-th
    largest value, k the largest with P(Binomial(n, 1/2) < k) <= (1 - level) / 2. None when
    there are too few values for that level (fewer than 6 at 95%)."""
    n = len(values)
    tail = (1.0 - level) / 2.0
    k, below = 0, 0.0
    while k < n and below + math.comb(n, k) / 2**n <= tail:
        below += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        return None
    ordered = sorted(values)
    return ordered[k - 1], ordered[n - k]


def interval_text(values: list[float], lead: str = "  ") -> str:
    """The median's 95% interval as the benchmarks print it after the median, ``lead`` first;
    nothing when there are too few values for one."""
    interval = median_interval(values)
    return f"{lead}95% CI {interval[0]:+.1%} .. {interval[1]:+.1%}" if interval else ""


RUN_LINE = re.compile(r"^run \d+: plain app ([\d.]+) s, .*?, app ([\d.]+) s", re.MULTILINE)
"""A pair's line as `main` prints it: the plain run's application time, then the recorded."""


def pool(paths: list[str]) -> None:
    """``--pool``: the application overhead of the pairs in earlier outputs of this benchmark
    (saved standard output), per file and all together: one workload's few pairs bound the
    overhead only to the plain runs' spread, several workloads' pairs pooled bound it closer."""
    everything: list[float] = []
    for path in paths:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            sys.exit(f"error: cannot read {path}: {exc.strerror}")
        ratios = [float(rec) / float(plain) - 1 for plain, rec in RUN_LINE.findall(text)]
        if not ratios:
            sys.exit(f"error: {path} holds no pair of runs (lines 'run N: plain app ...')")
        everything += ratios
        _print_overhead(Path(path).name, ratios)
    if len(paths) > 1:
        _print_overhead("all", everything)


def _print_overhead(what: str, ratios: list[float]) -> None:
    median = statistics.median(ratios)
    print(f"{what:32s} {len(ratios):3d} pairs  median {median:+.1%}{interval_text(ratios)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pool",
        nargs="+",
        metavar="OUTPUT",
        help="Run nothing: pool the pairs of earlier outputs of this benchmark (its saved "
        "standard output, one file per run of it) and print their application overhead, per "
        "file and together.",
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=float, default=3.0)
    parser.add_argument(
        "--interval-ms",
        type=int,
        default=None,
        help="Passed to every `perfmodel record` (default: record's own default).",
    )
    parser.add_argument(
        "--spec",
        help="Run a study spec's script instead of the job (e.g. experiments/wordcount.toml): "
        "the fit workloads at a size of --size-mb, on --master with a --memory heap.",
    )
    parser.add_argument("--size-mb", type=int, default=None, help="With --spec: its size_mb.")
    parser.add_argument("--master", default="local[2]", help="With --spec: the master.")
    parser.add_argument("--memory", default="2g", help="With --spec: the driver's heap.")
    parser.add_argument(
        "--job",
        choices=sorted(JOBS),
        default="mixed",
        help="The job: mixed (RDD lambdas and a Python UDF, the default) or dataframe "
        "(DataFrame operations only: no Python workers).",
    )
    parser.add_argument(
        "--record-option",
        action="append",
        default=[],
        help="Extra option for `perfmodel record` (repeatable), e.g. --record-option=--no-jfr.",
    )
    parser.add_argument(
        "--parts", action="store_true", help="Split the overhead by component (see above)."
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="With --parts: also the CPU time of the job's JVM threads (by kind) and Python "
        "workers inside the application's window, per variant (benchmarks/job_cpu.py).",
    )
    parser.add_argument(
        "--spare-core",
        action="store_true",
        help="Confine every job to all CPUs but the last and the samplers (perfmodel, py-spy, "
        "the JVM's JFR and plugin threads) to the last one: the cost on a machine with a core "
        "to spare (see above).",
    )
    parser.add_argument(
        "--also-spare-core",
        action="store_true",
        help="With --parts: run every variant both ways, on all CPUs and with a core to spare "
        "(NAME:spare, compared with plain:spare), in the same rotation.",
    )
    parser.add_argument(
        "--only",
        default="",
        help="With --parts: only these of plugin,jfr,pyspy,full (comma-separated).",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help='With --parts: one more variant, NAME="[VAR=value ...] record options" (repeatable).',
    )
    parser.add_argument(
        "--plain-variant",
        action="append",
        default=[],
        help='With --parts: more plain runs, NAME="VAR=value ..." (repeatable).',
    )
    args = parser.parse_args()
    if args.pool:
        pool(args.pool)
        return
    if (args.cpu or args.also_spare_core) and not args.parts:
        sys.exit("--cpu and --also-spare-core go with --parts")
    if args.also_spare_core and args.spare_core:
        sys.exit("--also-spare-core already runs every variant with a core to spare")
    if args.parts:
        part_variants(args)  # bad options end the run before the warm-up, not after it
    cores = Cores.split(args.spare_core)
    if cores.samplers is not None:
        os.sched_setaffinity(0, cores.samplers)  # this script's own polling stays off the job
    tmp = Path(tempfile.mkdtemp(prefix="perfmodel-overhead-"))
    env, plain_env, events = environments(tmp)
    figures: dict[str, list[float]] = {
        k: [] for k in ("plain app", "plain command", "app", "command", "total")
    }
    costs: list[dict[str, float]] = []
    try:
        job = (
            spec_job(args.spec, args.size_mb, args.master, args.memory, tmp / "scratch")
            if args.spec
            else [sys.executable, str(JOBS[args.job]), str(tmp / "work"), str(args.scale)]
        )
        print(f"job: {' '.join(job)}", flush=True)
        run(cores.job_command(job), env)  # warm-up: page cache, the input file
        if args.parts:
            parts(args, tmp, job, env, plain_env, cores)
            return
        for i in range(args.runs):
            out = tmp / f"bundle-{i}"
            rec, rec_jfr = record_command(args, out, [], cores, job)
            shutil.rmtree(events, ignore_errors=True)
            events.mkdir()
            pair = [("plain", cores.job_command(job), plain_env), ("recorded", rec, env)]
            for name, cmd, e in pair if i % 2 == 0 else pair[::-1]:
                seconds, _ = run_watched(cmd, e, cores, jfr=name == "recorded" and rec_jfr)
                if name == "plain":
                    figures["plain command"].append(seconds)
                    figures["plain app"].append(app_seconds(events))
                else:
                    figures["total"].append(seconds)
            manifest = json.loads((out / "manifest.json").read_text())
            figures["command"].append(
                (manifest["command_ended_ms"] - manifest["started_ms"]) / 1000.0
            )
            figures["app"].append(app_seconds(out / "eventlog"))
            costs.append(manifest.get("recording_cost") or {})
            shutil.rmtree(out, ignore_errors=True)
            print(
                f"run {i + 1}: "
                + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in figures.items())
                + f", samplers' CPU {costs[-1].get('cpu_s', 0):.2f} s",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    plain_app, plain_cmd = figures["plain app"], figures["plain command"]
    spread = (max(plain_app) - min(plain_app)) / statistics.median(plain_app)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}, runs: {args.runs}")
    for key, values in figures.items():
        print(
            f"{key:14s} median {statistics.median(values):6.2f} s  {[round(x, 2) for x in values]}"
        )
    overheads = {
        "application (event log runtimes)": (plain_app, figures["app"]),
        "command (until it exits)": (plain_cmd, figures["command"]),
        "total, bundle written": (plain_cmd, figures["total"]),
    }
    for what, (plain, recorded) in overheads.items():
        ratios = [y / x - 1 for x, y in zip(plain, recorded, strict=True)]
        median = statistics.median(ratios)
        print(f"overhead, {what:34s} {median:+.1%}{interval_text(ratios)}")
    print(f"plain application spread (max-min)/median: {spread:.1%} (noise floor)")
    counted = [c for c in costs if "share_of_machine" in c]  # a perfmodel without the key
    if counted:
        shares = [c["share_of_machine"] for c in counted]
        keys = ("pyspy_cpu_s", "jvm_recording_cpu_s", "perfmodel_cpu_s", "cpu_s")
        medians = ", ".join(f"{k} {statistics.median(c[k] for c in counted):.2f}" for k in keys)
        print(
            f"samplers' CPU (manifest recording_cost), median: {medians}; share of the machine "
            f"over the command {statistics.median(shares):.2%} "
            f"(range {min(shares):.2%} .. {max(shares):.2%})"
        )


if __name__ == "__main__":
    main()
