"""Which items users rate above their own average (DataFrame API): each user's mean rating
(an aggregation), joined back to the ratings, then each item's mean lift over its raters'
means (a second aggregation); the twenty items of most lift among those rated at least 50
times are collected. Nothing is written.

spark-submit item_lift.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("item-lift").getOrCreate()
    ratings = spark.read.parquet(source)
    users = ratings.groupBy("user").agg(F.avg("rating").alias("user_mean"))
    lift = (
        ratings.join(users, "user")
        .groupBy("item")
        .agg(F.avg(F.col("rating") - F.col("user_mean")).alias("lift"), F.count("*").alias("n"))
        .where(F.col("n") >= 50)
        .orderBy(F.desc("lift"))
        .limit(20)
        .collect()
    )
    print("top items:", [(r["item"], round(r["lift"], 2)) for r in lift[:5]])
    spark.stop()


if __name__ == "__main__":
    main()
