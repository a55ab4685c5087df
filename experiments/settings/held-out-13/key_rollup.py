"""Counts and the largest payload per key prefix, with subtotals (DataFrame API): the
records' first letter and first two letters rolled up (``rollup``: an ``Expand`` of each
row into three grouping sets, then a hash aggregation over them), the prefixes with most
records collected. Nothing is written.

spark-submit key_rollup.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("key-rollup").getOrCreate()
    records = spark.read.csv(source).toDF("key", "payload")
    top = (
        records.rollup(
            F.substring("key", 1, 1).alias("first"), F.substring("key", 1, 2).alias("two")
        )
        .agg(F.count("*").alias("records"), F.max("payload").alias("largest"))
        .orderBy(F.desc("records"))
        .limit(10)
        .collect()
    )
    print("top:", [(r["first"], r["two"], r["records"]) for r in top[:3]])
    spark.stop()


if __name__ == "__main__":
    main()
