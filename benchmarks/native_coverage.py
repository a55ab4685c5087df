"""JVM sample coverage of tasks against JFR's native sampling period.

JFR takes one sample per native period from *one* thread in native code, round-robin, so how
often a PySpark task thread (waiting on its Python worker in an NIO select) is seen depends
on the period and on how many other threads sit in native code. This records
tests/data/record/job.py under `perfmodel record` with each ``--native-interval-ms`` given,
``--runs`` times each (periods interleaved), and prints per period:

* tasks of >= 100 ms (and >= 300 ms) that got no JVM sample by task id: the coverage the
  record tests ask for;
* native samples per second of task time on task threads, and the share of all native samples
  that went to task threads.

``--compare-exclusion`` also runs every period with the plugin's idle-thread exclusion off
(``spark.perfmodel.excludeIdleThreads false`` in a user ``SPARK_CONF_DIR``).

    python benchmarks/native_coverage.py [--periods 2,5,10,20] [--runs 3] [--scale 1]
        [--compare-exclusion] [--record-option=--no-pyspy]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.compute as pc

REPO = Path(__file__).resolve().parents[1]
JOB = REPO / "tests" / "data" / "record" / "job.py"
sys.path.insert(0, str(REPO))

from perfmodel.profile import bundle  # noqa: E402
from perfmodel.profile.jfr import TASK_THREAD_PREFIX  # noqa: E402
from perfmodel.spark.load import build_profile  # noqa: E402


def coverage(out: Path) -> dict[str, float]:
    """Coverage figures of one recorded bundle."""
    profile = build_profile(bundle.find_event_log(out)).profile
    samples = bundle.load_samples(out)
    jvm = samples.filter(pc.equal(samples.column("source"), "jfr"))
    sampled = set(pc.drop_null(jvm.column("task_id")).to_pylist())
    tasks = [t for t in profile.tasks() if t.metrics.run_ms >= 100]
    missing = [t for t in tasks if t.task_id not in sampled]
    native = jvm.filter(pc.equal(jvm.column("kind"), "native"))
    on_tasks = pc.starts_with(native.column("thread"), TASK_THREAD_PREFIX)
    task_native = pc.sum(pc.cast(on_tasks, "int64")).as_py() or 0
    task_seconds = sum(t.metrics.run_ms for t in profile.tasks()) / 1000.0
    manifest = bundle.read_manifest(out)
    excluded = sum(len(r.excluded_threads) for r in manifest.recordings)
    return {
        "tasks_100ms": len(tasks),
        "missing_100ms": len(missing),
        "missing_300ms": sum(1 for t in missing if t.metrics.run_ms >= 300),
        "task_native_per_s": task_native / task_seconds if task_seconds else 0.0,
        "task_share": task_native / native.num_rows if native.num_rows else 0.0,
        "excluded_threads": excluded,
        "app_s": profile.duration_ms / 1000.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--periods", default="2,5,10,20", help="Native periods in ms.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--record-option", action="append", default=[])
    parser.add_argument("--compare-exclusion", action="store_true")
    args = parser.parse_args()
    periods = [int(p) for p in args.periods.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="perfmodel-coverage-"))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("JOB_FAIL", None)
    env.pop("SPARK_CONF_DIR", None)
    conf = tmp / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.perfmodel.excludeIdleThreads false\n")
    envs = {"": env}
    if args.compare_exclusion:
        envs["no exclusion"] = {**env, "SPARK_CONF_DIR": str(conf)}
    variants = [(p, name) for p in periods for name in envs]
    perfmodel = str(Path(sys.executable).parent / "perfmodel")
    results: dict[tuple[int, str], list[dict[str, float]]] = {v: [] for v in variants}
    try:
        for i in range(args.runs):
            for period, name in variants if i % 2 == 0 else variants[::-1]:
                out = tmp / "bundle"
                shutil.rmtree(out, ignore_errors=True)
                cmd = [perfmodel, "record", "--out", str(out), "--native-interval-ms", str(period)]
                cmd += [*args.record_option, "--", sys.executable, str(JOB), str(tmp / "w")]
                cmd.append(str(args.scale))
                proc = subprocess.run(cmd, env=envs[name], capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"record failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
                figures = coverage(out)
                results[(period, name)].append(figures)
                print(f"run {i + 1}, native {period:3d} ms {name}: {figures}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{args.runs} run(s) per period, scale {args.scale}, cores {os.cpu_count()}")
    print("native  tasks>=100ms  missing>=100ms  missing>=300ms  task native/s  task share")
    for (period, name), runs in results.items():
        tasks = sum(r["tasks_100ms"] for r in runs)
        missing = sum(r["missing_100ms"] for r in runs)
        missing_300 = sum(r["missing_300ms"] for r in runs)
        rate = statistics.median(r["task_native_per_s"] for r in runs)
        share = statistics.median(r["task_share"] for r in runs)
        print(
            f"{period:4d} ms  {tasks:12d}  {missing:8d} ({missing / max(tasks, 1):4.0%})  "
            f"{missing_300:14d}  {rate:13.1f}  {share:10.0%}  {name}"
        )


if __name__ == "__main__":
    main()
