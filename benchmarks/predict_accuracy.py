"""Predict real PySpark re-runs from each other's event logs and print the errors.

Why this exists: unit tests check the simulator's laws against hand-made answers, but
only real runs say whether those laws describe Spark. This runs one PySpark workload
(Python CPU work, a shuffle, a JVM sort that spills when memory is short) at
``local[1]`` and ``local[2]`` and at two driver memory sizes, then predicts each run
from the other's event log with `perfmodel.simulate.replay` and prints the error.

It takes a few minutes (four Spark runs). Run: ``python benchmarks/predict_accuracy.py``.
Use ``--workdir`` to keep the logs, ``--reuse`` to skip runs whose logs exist.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

JOB_PARTITIONS = 8


def run_job(master: str, driver_memory: str, log_dir: Path, scale: float) -> None:
    """The workload itself, run in a fresh Python process (fresh JVM per configuration)."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .appName(f"perfmodel-accuracy-{master}-{driver_memory}")
        .config("spark.driver.memory", driver_memory)
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", str(log_dir))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(JOB_PARTITIONS))
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    sc = spark.sparkContext
    n = int(400_000 * scale)

    def burn(x: int) -> tuple[int, int]:
        acc = x
        for i in range(60):
            acc = (acc * 1103515245 + 12345 + i) % 2147483648
        return (acc % 1000, acc)

    # 1. Python CPU work feeding a shuffle.
    sc.parallelize(range(n), JOB_PARTITIONS).map(burn).reduceByKey(lambda a, b: a ^ b).count()
    # 2. JVM CPU work (no Python): wide aggregation.
    rows = int(6_000_000 * scale)
    spark.range(rows, numPartitions=JOB_PARTITIONS).selectExpr(
        "id % 50000 as k", "sqrt(id) * sin(id) as v"
    ).groupBy("k").agg({"v": "sum"}).write.format("noop").mode("overwrite").save()
    # 3. A sort large enough to spill at small memory.
    srt = int(3_000_000 * scale)
    spark.range(srt, numPartitions=JOB_PARTITIONS).selectExpr(
        "id", "rand(7) as r", "repeat(cast(id as string), 4) as s"
    ).orderBy("r").write.format("noop").mode("overwrite").save()
    spark.stop()


@dataclass(frozen=True)
class Run:
    master: str
    memory: str

    @property
    def name(self) -> str:
        return f"{self.master.replace('[', '').replace(']', '')}-{self.memory}"


def launch(run: Run, workdir: Path, scale: float, reuse: bool) -> Path:
    """Run one configuration in a subprocess and return its event log file."""
    log_dir = workdir / run.name
    existing = sorted(log_dir.glob("*")) if log_dir.exists() else []
    if reuse and existing:
        return existing[0]
    log_dir.mkdir(parents=True, exist_ok=True)
    for old in existing:
        old.unlink()
    cmd = [
        sys.executable,
        __file__,
        "--job",
        run.master,
        run.memory,
        str(log_dir),
        str(scale),
    ]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    print(f"ran {run.name} in {time.monotonic() - t0:.1f} s", flush=True)
    logs = sorted(log_dir.glob("*"))
    if not logs:
        raise SystemExit(f"no event log written in {log_dir}")
    return logs[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument(
        "--host-cores", type=int, default=None, help="cores of this host (default: all)"
    )
    parser.add_argument("--job", nargs=4, metavar=("MASTER", "MEM", "LOGDIR", "SCALE"))
    args = parser.parse_args()
    if args.job:
        master, memory, log_dir, scale = args.job
        run_job(master, memory, Path(log_dir), float(scale))
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="perfmodel-accuracy-"))
    runs = [Run("local[1]", "2g"), Run("local[2]", "2g"), Run("local[2]", "512m")]
    logs = {run: launch(run, workdir, args.scale, args.reuse) for run in runs}
    print(f"event logs in {workdir}")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1) * 1.2:
        print(
            f"warning: load average {load:.1f} on {os.cpu_count()} cores: other work "
            "shared the host during the runs, so their times are noisy"
        )
    report(logs, args.host_cores or os.cpu_count() or 1)


def report(logs: dict[Run, Path], host_cores: int) -> None:
    """Predict each run from its partner's log; print per-pair and mean absolute errors."""
    from perfmodel.simulate.config import BaselineOverrides, WhatIf, baseline_config
    from perfmodel.simulate.replay import replay
    from perfmodel.simulate.units import parse_size
    from perfmodel.spark.load import build_profile

    profiles = {run: build_profile(path).profile for run, path in logs.items()}
    pairs = [
        (Run("local[1]", "2g"), Run("local[2]", "2g")),
        (Run("local[2]", "2g"), Run("local[1]", "2g")),
        (Run("local[2]", "2g"), Run("local[2]", "512m")),
        (Run("local[2]", "512m"), Run("local[2]", "2g")),
    ]
    print(f"host cores given to the model: {host_cores}")
    header = f"{'from':>14} → {'to':<14} {'actual':>8} {'predicted':>9} {'error':>7}"
    print(header + f" {'slot-only':>9} {'error':>7} {'model err':>9}")
    errors: list[float] = []
    slot_errors: list[float] = []
    for src, dst in pairs:
        profile = profiles[src]
        cores = int(dst.master[len("local[") : -1])
        change = WhatIf(cores=cores, memory_bytes=parse_size(dst.memory))
        known = baseline_config(profile, BaselineOverrides(host_cores=host_cores))
        p = replay(profile, change, baseline=known)
        # The slot-only replay: host assumed to have a core per slot (no contention).
        slot_only = replay(profile, change)
        actual = profiles[dst].duration_ms / 1000.0
        err = (p.predicted_s - actual) / actual
        s_err = (slot_only.predicted_s - actual) / actual
        errors.append(abs(err))
        slot_errors.append(abs(s_err))
        print(
            f"{src.name:>14} → {dst.name:<14} {actual:>7.1f}s {p.predicted_s:>8.1f}s "
            f"{err:>+7.1%} {slot_only.predicted_s:>8.1f}s {s_err:>+7.1%} {p.model_error:>+9.1%}"
        )
    print(
        f"mean absolute error: {sum(errors) / len(errors):.1%} "
        f"(slot-only replay: {sum(slot_errors) / len(slot_errors):.1%})"
    )


if __name__ == "__main__":
    main()
