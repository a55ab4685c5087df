"""Revenue per country and day, written as Parquet partitioned by country (DataFrame API):
orders joined to their customers (a broadcast join: the customers are small), a hash
aggregation by country and day, and a write with ``partitionBy("country")``, where each
reduce task writes a file for each country it holds rows of. Nothing is read back.

spark-submit country_days.py TABLES_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("country-days").getOrCreate()
    orders = spark.read.parquet(f"{source}/orders")
    customers = spark.read.parquet(f"{source}/customers")
    daily = (
        orders.join(customers, "customer_id")
        .groupBy("country", "day")
        .agg(
            F.round(F.sum(F.col("quantity") * F.col("price")), 2).alias("revenue"),
            F.count("*").alias("orders"),
            F.countDistinct("customer_id").alias("customers"),
        )
    )
    daily.write.mode("overwrite").partitionBy("country").parquet(target)
    spark.stop()


if __name__ == "__main__":
    main()
