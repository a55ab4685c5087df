"""A PySpark job whose heavy stages take their task counts from the code, for the code-edit
what-if study (`experiments/settings/code/study.py`, docs/settings.md).

Two stages do nearly all the work, each with a count the code passes (``--partitions N``):

1. a DataFrame ``repartition(N)`` of generated ids, then SHA-512 of every row (JVM work);
2. an RDD ``reduceByKey(..., numPartitions=N)``, then a pure-Python function of every group
   (Python workers' work).

Written for this repository (no external source). Usage:
    python code_counts.py --partitions N --event-log-dir DIR [--scale S]
"""

from __future__ import annotations

import argparse
from operator import add

from pyspark.sql import SparkSession


def score(kv: tuple[int, int]) -> int:
    """Pure-Python work per group: a small digit-sum loop (the Python workers' CPU)."""
    key, total = kv
    acc = 0
    for i in range(60):
        acc = (acc * 31 + sum(int(c) for c in str(total + i * key))) % 1_000_003
    return acc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, required=True)
    ap.add_argument("--event-log-dir", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    n = a.partitions
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(f"code-counts-{n}")
        .config("spark.driver.memory", "2g")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", a.event_log_dir)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    rows = int(8_000_000 * a.scale)
    hashed = (
        spark.range(0, rows, numPartitions=4)
        .repartition(n)
        .selectExpr("sha2(cast(id * 7919 as string), 512) as h")
        .selectExpr("max(h)")
        .collect()
    )
    print("max hash:", hashed[0][0][:16])
    keys = int(160_000 * a.scale)
    groups = (
        spark.sparkContext.parallelize(range(keys * 10), 4)
        .map(lambda x: (x % keys, x))
        .reduceByKey(add, numPartitions=n)
        .map(score)
        .sum()
    )
    print("score:", groups)
    spark.stop()


if __name__ == "__main__":
    main()
