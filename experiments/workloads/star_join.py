"""A star join: a generated fact table joined to two dimensions, aggregated and ranked.

spark-submit star_join.py ROWS_MILLIONS OUTPUT_DIR

The fact table (sales lines: item, store, day, quantity, price) is generated from a range,
its columns derived by hashing the row number, so no input files are read. It is joined to
a small store dimension (broadcast) and to an item dimension of a tenth of its rows (a
shuffled join), aggregated to revenue per (category, region, week), and each region's ten
best categories per week are kept by a window rank. The result is written as Parquet and its
row count printed. JVM only: no Python runs in the executors.
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    rows = int(float(sys.argv[1]) * 1_000_000)
    target = sys.argv[2]
    spark = SparkSession.builder.appName("star-join").getOrCreate()
    items = max(rows // 10, 1000)
    fact = spark.range(rows).select(
        (F.abs(F.xxhash64("id", F.lit(1))) % items).alias("item"),
        (F.abs(F.xxhash64("id", F.lit(2))) % 200).alias("store"),
        (F.abs(F.xxhash64("id", F.lit(3))) % 365).alias("day"),
        (F.abs(F.xxhash64("id", F.lit(4))) % 9 + 1).alias("quantity"),
        (F.abs(F.xxhash64("id", F.lit(5))) % 10000 / 100.0).alias("price"),
    )
    stores = spark.range(200).select(F.col("id").alias("store"), (F.col("id") % 12).alias("region"))
    item_dim = spark.range(items).select(
        F.col("id").alias("item"),
        (F.abs(F.xxhash64("id", F.lit(6))) % 150).alias("category"),
        F.sha2(F.col("id").cast("string"), 256).alias("sku"),
    )
    sales = fact.join(F.broadcast(stores), "store").join(item_dim, "item")
    weekly = sales.groupBy("category", "region", (F.col("day") / 7).cast("int").alias("week")).agg(
        F.sum(F.col("quantity") * F.col("price")).alias("revenue"),
        F.countDistinct("sku").alias("skus"),
    )
    rank = F.rank().over(Window.partitionBy("region", "week").orderBy(F.desc("revenue")))
    best = weekly.withColumn("rank", rank).where(F.col("rank") <= 10)
    best.write.mode("overwrite").parquet(target)
    print(f"rows: {spark.read.parquet(target).count()}")
    spark.stop()


if __name__ == "__main__":
    main()
