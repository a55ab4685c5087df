"""Distinct buyers and units sold per product, with how many countries its buyers come from
(DataFrame API): orders (Parquet) deduplicated per product and customer (a hash aggregation
under spark.sql.shuffle.partitions), joined with the customers on the id (a sort-merge or
broadcast join, as the sizes decide), aggregated per product, and the 50 products with the
most buyers sorted and printed.

spark-submit product_reach.py TABLES_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    tables = sys.argv[1]
    spark = SparkSession.builder.appName("product-reach").getOrCreate()
    orders = spark.read.parquet(f"{tables}/orders")
    customers = spark.read.parquet(f"{tables}/customers")
    bought = orders.groupBy("product_id", "customer_id").agg(F.sum("quantity").alias("units"))
    reach = (
        bought.join(customers, "customer_id")
        .groupBy("product_id")
        .agg(
            F.count("*").alias("buyers"),
            F.sum("units").alias("units"),
            F.countDistinct("country").alias("countries"),
        )
        .orderBy(F.desc("buyers"), "product_id")
    )
    top = reach.limit(50).collect()
    print("products:", len(top), "most buyers:", top[0]["buyers"] if top else 0)
    spark.stop()


if __name__ == "__main__":
    main()
