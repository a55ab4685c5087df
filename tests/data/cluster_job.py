"""A tiny shuffle job for the cluster test: JVM work (hashing) on every executor, a shuffle
between them, and a Python stage, so samples of both samplers land on both hosts."""

import sys

from pyspark.sql import SparkSession

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
spark = SparkSession.builder.appName("perfmodel-cluster-test").getOrCreate()
df = spark.range(rows, numPartitions=8).selectExpr(
    "id % 997 AS k", "sha2(CAST(id AS STRING), 256) AS h"
)
counts = df.groupBy("k").agg({"h": "max"}).count()
total = spark.sparkContext.parallelize(range(rows // 10), 8).map(lambda x: x * x % 7).sum()
print(f"groups={counts} total={total}")
spark.stop()
