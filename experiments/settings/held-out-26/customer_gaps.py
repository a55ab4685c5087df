"""How long customers wait between orders, per country (DataFrame API): orders (Parquet)
ordered per customer by day (a window: every order row shuffled by customer and sorted),
each order's gap in days from the customer's previous one (``lag``), the gaps joined to the
customers' countries (a join the sizes decide), then bucketed by week and counted per
country and bucket (a hash aggregation of a few hundred keys), collected in order.

spark-submit customer_gaps.py TABLES_DIR
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    tables = sys.argv[1]
    spark = SparkSession.builder.appName("customer-gaps").getOrCreate()
    orders = spark.read.parquet(f"{tables}/orders")
    customers = spark.read.parquet(f"{tables}/customers")
    by_customer = Window.partitionBy("customer_id").orderBy("day", "order_id")
    gaps = (
        orders.select("customer_id", "day", "order_id", "price")
        .withColumn("gap", F.col("day") - F.lag("day").over(by_customer))
        .where(F.col("gap").isNotNull())
    )
    buckets = (
        gaps.join(customers.select("customer_id", "country"), "customer_id")
        .groupBy("country", F.least(F.floor(F.col("gap") / 7), F.lit(52)).alias("weeks"))
        .agg(F.count("*").alias("orders"), F.avg("price").alias("mean_price"))
        .orderBy("country", "weeks")
        .collect()
    )
    print("buckets:", len(buckets), "first:", buckets[0]["orders"] if buckets else 0)
    spark.stop()


if __name__ == "__main__":
    main()
