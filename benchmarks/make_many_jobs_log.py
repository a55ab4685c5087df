"""Generate a real many-job event log (≥ 2,000 jobs, ≥ 5,000 stages) for the scale benchmark.

    .venv/bin/python benchmarks/make_many_jobs_log.py [--jobs 2200] [--out build/bench]

A data engineer's long-running application (a notebook, an iterative or streaming-style
driver) is many small actions, not one big one: thousands of jobs of a few stages each, most
of them SQL executions. That is the shape where per-stage or per-job costs that grow with the
log (list scans, repeated passes) show up. This runs a real local PySpark application of such
actions on tiny data with two partitions per stage, so the run is minutes on two cores:

- DataFrame aggregations (one SQL execution, two stages: map + shuffle reduce);
- DataFrame joins without broadcast, then an aggregation (three or four stages);
- a repartition followed by a distinct (three stages);
- RDD ``reduceByKey`` jobs with Python functions (two stages, no SQL execution);
- every tenth step, a job that reads a cached shuffle again, so it has skipped stages.

The event log is zstd-compressed by Spark itself, as Spark 4 writes it. Not committed.
"""

from __future__ import annotations

import argparse
import operator
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2200, help="stop after this many jobs")
    parser.add_argument("--codec", choices=("zstd", "lz4", "none"), default="zstd")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench")
    parser.add_argument("--name", default="many-jobs-eventlog", help="file name, without suffix")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    args.out = args.out.resolve()  # Spark needs an absolute URI for its event log dir
    logs = args.out / f"{args.name}.spark-logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-many-jobs")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", logs.as_uri())
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
    )
    if args.codec == "none":
        builder = builder.config("spark.eventLog.compress", "false")
    else:
        builder = builder.config("spark.eventLog.compress", "true").config(
            "spark.eventLog.compression.codec", args.codec
        )
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    started = time.monotonic()
    try:
        # A shuffled RDD kept around: later jobs on it skip its map stage.
        cached = sc.parallelize(range(400), 2).map(lambda x: (x % 7, x)).reduceByKey(operator.add)
        cached.count()
        jobs = 1
        step = 0
        while jobs < args.jobs:
            kind = step % 10
            n = 200 + (step % 13) * 10
            left = spark.range(0, n, 1, numPartitions=2)
            if kind in (0, 3, 6):
                left.groupBy((F.col("id") % 11).alias("k")).count().collect()
                jobs += 1
            elif kind in (1, 4, 7):
                right = spark.range(0, n // 2, 1, numPartitions=2).withColumnRenamed("id", "r")
                joined = left.join(right, left.id == right.r)
                if kind == 7:
                    joined.groupBy((F.col("id") % 5).alias("k")).agg(F.sum("r")).collect()
                else:
                    joined.count()
                jobs += 1
            elif kind in (2, 5):
                left.repartition(2, F.col("id") % 3).select(
                    (F.col("id") % 17).alias("v")
                ).distinct().collect()
                jobs += 1
            elif kind == 8:
                rdd = sc.parallelize(range(n), 2).map(lambda x: (x % 5, 1))
                rdd.reduceByKey(operator.add).collect()
                jobs += 1
            else:
                cached.mapValues(lambda v: v + 1).collect()
                jobs += 1
            step += 1
            if jobs % 100 == 0:
                print(f"{jobs} jobs, {time.monotonic() - started:.0f} s", flush=True)
    finally:
        spark.stop()
    produced = [p for p in logs.iterdir() if p.is_file() and not p.name.startswith(".")]
    suffix = "" if args.codec == "none" else f".{args.codec}"
    target = args.out / f"{args.name}{suffix}"
    shutil.move(str(produced[0]), target)
    shutil.rmtree(logs, ignore_errors=True)
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB on disk)")


if __name__ == "__main__":
    main()
