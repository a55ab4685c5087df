"""Generate a large real event log (100k+ tasks) for the ingest benchmark; not committed.

    .venv/bin/python benchmarks/make_large_log.py [--tasks 120000] [--out build/bench]

Runs a real local PySpark job whose stages have many tiny tasks (plus a shuffle; JVM-only
operators), with an uncompressed event log, so the benchmark measures JSON ingest, not
decompression.
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
    parser.add_argument("--tasks", type=int, default=120_000)
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    logs = args.out / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-large-log")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", logs.as_uri())
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    try:
        per_job = 20_000
        done = 0
        while done < args.tasks:
            n = min(per_job, args.tasks - done)
            # A shuffle every job: half the tasks map, half reduce. JVM-only operators keep
            # each task to a few milliseconds, so 100k tasks take minutes, not hours.
            spark.conf.set("spark.sql.shuffle.partitions", str(n // 2))
            df = spark.range(0, n * 4, 1, numPartitions=n // 2).selectExpr("id % 97 AS k")
            df.groupBy("k").count().collect()
            done += n
            print(f"{done} tasks", flush=True)
    finally:
        spark.stop()
    produced = [p for p in logs.iterdir() if p.is_file()]
    target = args.out / "large-eventlog.json"
    shutil.move(str(produced[0]), target)
    print(f"wrote {target} ({target.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
