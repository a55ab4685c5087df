"""Active days and the largest day's spend of each customer, per country (DataFrame API):
orders (Parquet) summed per customer and day, then per customer (two hash aggregations, each
under spark.sql.shuffle.partitions), joined with the customers on the id, written as
Parquet, one file per task with rows, and the rows written counted back.

spark-submit customer_days.py TABLES_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    tables, out = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("customer-days").getOrCreate()
    orders = spark.read.parquet(f"{tables}/orders")
    customers = spark.read.parquet(f"{tables}/customers")
    days = orders.groupBy("customer_id", "day").agg(
        F.sum(F.col("price") * F.col("quantity")).alias("spend")
    )
    active = days.groupBy("customer_id").agg(
        F.count("*").alias("active_days"),
        F.max("spend").alias("best_day"),
        F.sum("spend").alias("spend"),
    )
    active.join(customers, "customer_id").write.mode("overwrite").parquet(out)
    print("customers:", spark.read.parquet(out).count())
    spark.stop()


if __name__ == "__main__":
    main()
