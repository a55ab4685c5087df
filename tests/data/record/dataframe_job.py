"""A PySpark application with no Python on the executors: DataFrame operations only.

Written for this repository (no external source), for `benchmarks/record_overhead.py --job
dataframe`. Many Spark jobs are SQL/DataFrame jobs whose executors never start
a Python worker; recording them costs JFR's sampling and py-spy on the driver only, so their
overhead may differ from the mixed job in tests/data/record/job.py (RDD lambdas and a Python
UDF, sampled by py-spy in every worker). It generates its own input:

1. rows from ``range`` with derived columns, written as Parquet (a stage that writes files);
2. that Parquet read back and aggregated per key (a stage that reads files, then a shuffle);
3. a join with a small dimension table, then a sort (shuffle, sort);
4. a CPU-heavy stage: SHA-512 of every row, then a sort.

Usage: python dataframe_job.py WORK_DIR [SCALE]   (SCALE multiplies the data sizes)
"""

from __future__ import annotations

import os
import shutil
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> int:
    work = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    os.makedirs(work, exist_ok=True)
    facts = os.path.join(work, "facts.parquet")
    shutil.rmtree(facts, ignore_errors=True)

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-dataframe-job")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )

    rows = int(2_000_000 * scale)
    spark.range(0, rows, numPartitions=4).select(
        "id",
        (F.col("id") % 997).alias("key"),
        (F.col("id") * 7 % 10_007).cast("double").alias("amount"),
        F.concat(F.lit("item-"), (F.col("id") % 5003).cast("string")).alias("item"),
    ).write.parquet(facts)

    facts_df = spark.read.parquet(facts)
    per_key = facts_df.groupBy("key").agg(F.sum("amount").alias("total"), F.count("*").alias("n"))
    print("keys:", per_key.count())

    dim = spark.range(0, 997).select(
        F.col("id").alias("key"), F.concat(F.lit("region-"), (F.col("id") % 13)).alias("region")
    )
    top = (
        facts_df.join(F.broadcast(dim), "key")
        .groupBy("region", "item")
        .agg(F.sum("amount").alias("total"))
        .orderBy(F.desc("total"))
        .first()
    )
    print("top region/item:", top["region"], top["item"])

    hashed = spark.range(0, int(1_500_000 * scale), numPartitions=4).selectExpr(
        "id", "sha2(cast(id as string), 512) as h"
    )
    print("first hash:", hashed.orderBy("h").select("h").first()[0][:16])

    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
