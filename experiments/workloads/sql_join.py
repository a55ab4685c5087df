"""SQL join + aggregation over Parquet: revenue by country, segment and month, top products.

spark-submit sql_join.py TABLES_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sql-join").getOrCreate()
    spark.read.parquet(f"{source}/orders").createOrReplaceTempView("orders")
    spark.read.parquet(f"{source}/customers").createOrReplaceTempView("customers")
    revenue = spark.sql(
        """
        SELECT c.country, c.segment, CAST(o.day / 30 AS INT) AS month,
               SUM(o.quantity * o.price) AS revenue, COUNT(DISTINCT o.customer_id) AS buyers,
               AVG(o.price) AS avg_price
        FROM orders o JOIN customers c ON o.customer_id = c.customer_id
        GROUP BY c.country, c.segment, CAST(o.day / 30 AS INT)
        """
    )
    revenue.write.mode("overwrite").parquet(f"{target}/revenue")
    top = spark.sql(
        """
        SELECT product_id, SUM(quantity) AS units FROM orders
        GROUP BY product_id ORDER BY units DESC LIMIT 10
        """
    ).collect()
    print("groups:", spark.read.parquet(f"{target}/revenue").count(), "top:", top[:3])
    spark.stop()


if __name__ == "__main__":
    main()
