"""Window functions over partitions: per-customer order history and per-country ranking.

spark-submit window.py TABLES_DIR OUTPUT_DIR

Over the ``orders`` of the ``tables`` dataset: for each customer, ordered by day, the
order's running number, the gap since the previous order (lag), a rolling 7-order revenue
sum and average, and its share of the customer's revenue; then each country's customers
ranked by revenue (rank, dense_rank, percent_rank) after a join. Each window is a shuffle
and a sort by (partition key, order key): sort- and memory-heavy, with skew from the
Zipf-distributed customers.
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("window").getOrCreate()
    orders = spark.read.parquet(f"{source}/orders").withColumn(
        "revenue", F.col("quantity") * F.col("price")
    )
    customers = spark.read.parquet(f"{source}/customers")
    history = Window.partitionBy("customer_id").orderBy("day", "order_id")
    rolling = history.rowsBetween(-6, 0)
    whole = Window.partitionBy("customer_id")
    enriched = (
        orders.withColumn("n", F.row_number().over(history))
        .withColumn("gap_days", F.col("day") - F.lag("day", 1).over(history))
        .withColumn("revenue_7", F.sum("revenue").over(rolling))
        .withColumn("avg_price_7", F.avg("price").over(rolling))
        .withColumn("share", F.col("revenue") / F.sum("revenue").over(whole))
    )
    enriched.write.mode("overwrite").parquet(f"{target}/history")
    per_customer = (
        spark.read.parquet(f"{target}/history")
        .groupBy("customer_id")
        .agg(
            F.sum("revenue").alias("revenue"),
            F.max("n").alias("orders"),
            F.avg("gap_days").alias("mean_gap"),
        )
        .join(customers, "customer_id")
    )
    by_country = Window.partitionBy("country").orderBy(F.desc("revenue"))
    ranked = (
        per_customer.withColumn("rank", F.rank().over(by_country))
        .withColumn("dense_rank", F.dense_rank().over(by_country))
        .withColumn("percentile", F.percent_rank().over(by_country))
        .where(F.col("rank") <= 1000)
    )
    ranked.write.mode("overwrite").parquet(f"{target}/ranked")
    print("ranked:", spark.read.parquet(f"{target}/ranked").count())
    spark.stop()


if __name__ == "__main__":
    main()
