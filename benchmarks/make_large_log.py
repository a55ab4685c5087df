"""Generate a large real event log (≥ 200k tasks, ≥ 1 GB raw JSON) for the scale benchmark.

    .venv/bin/python benchmarks/make_large_log.py [--tasks 230000] [--codec zstd] [--out DIR]

Runs a real local PySpark job whose stages have many tiny tasks (plus a shuffle; JVM-only
operators). The event log is compressed by Spark itself (``spark.eventLog.compress`` with the
chosen codec, zstd by default, as Spark 4 writes it), so the benchmark measures what a user
points perfmodel at: decompression and JSON ingest together. ``--codec none`` writes plain
JSON lines. Not committed: about 4.7 KB of raw JSON per task, so 230k tasks make ~1.1 GB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=230_000)
    parser.add_argument("--codec", choices=("zstd", "lz4", "none"), default="zstd")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench")
    parser.add_argument("--name", default="large-eventlog", help="file name, without suffix")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    args.out = args.out.resolve()  # Spark needs an absolute URI for its event log dir
    logs = args.out / f"{args.name}.spark-logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-large-log")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", logs.as_uri())
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.adaptive.enabled", "false")
    )
    if args.codec == "none":
        builder = builder.config("spark.eventLog.compress", "false")
    else:
        builder = builder.config("spark.eventLog.compress", "true").config(
            "spark.eventLog.compression.codec", args.codec
        )
    spark = builder.getOrCreate()
    try:
        per_job = 20_000
        done = 0
        while done < args.tasks:
            n = min(per_job, args.tasks - done)
            # A shuffle every job: half the tasks map, half reduce. JVM-only operators keep
            # each task to a few milliseconds, so 200k tasks take minutes, not hours.
            spark.conf.set("spark.sql.shuffle.partitions", str(n // 2))
            df = spark.range(0, n * 4, 1, numPartitions=n // 2).selectExpr("id % 97 AS k")
            df.groupBy("k").count().collect()
            done += n
            print(f"{done} tasks", flush=True)
    finally:
        spark.stop()
    produced = [p for p in logs.iterdir() if p.is_file() and not p.name.startswith(".")]
    suffix = "" if args.codec == "none" else f".{args.codec}"
    target = args.out / f"{args.name}{suffix}"
    shutil.move(str(produced[0]), target)
    shutil.rmtree(logs, ignore_errors=True)
    print(f"wrote {target} ({target.stat().st_size / 1e6:.0f} MB on disk)")


if __name__ == "__main__":
    main()
