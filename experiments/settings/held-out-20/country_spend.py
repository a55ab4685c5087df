"""Spend and distinct buyers per country, segment and month, written as CSV (DataFrame
API): orders (Parquet) joined with customers on the customer id, revenue summed and
distinct customers counted per group (`countDistinct`: an aggregation in two shuffles, both
under spark.sql.shuffle.partitions), written one file per task with rows.

spark-submit country_spend.py TABLES_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    tables, out = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("country-spend").getOrCreate()
    orders = spark.read.parquet(f"{tables}/orders")
    customers = spark.read.parquet(f"{tables}/customers")
    spend = (
        orders.join(customers, "customer_id")
        .withColumn("month", (F.col("day") / 30).cast("int"))
        .groupBy("country", "segment", "month")
        .agg(
            F.sum(F.col("price") * F.col("quantity")).alias("revenue"),
            F.countDistinct("customer_id").alias("buyers"),
        )
    )
    spend.write.mode("overwrite").csv(out, header=True)
    print("groups:", spark.read.csv(out, header=True).count())
    spark.stop()


if __name__ == "__main__":
    main()
