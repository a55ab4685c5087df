"""Items their raters like more than they usually do (DataFrame API): ratings (Parquet)
grouped by user for each user's mean, joined back to the ratings on the user (a sort-merge
join of the two, both under spark.sql.shuffle.partitions), each rating's lift over its
user's mean averaged and counted per item, the items with at least twenty ratings sorted by
lift (a range exchange) and the top fifty collected. Nothing is written.

spark-submit item_affinity.py RATINGS_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    spark = SparkSession.builder.appName("item-affinity").getOrCreate()
    ratings = spark.read.parquet(sys.argv[1])
    users = ratings.groupBy("user").agg(F.avg("rating").alias("usual"))
    lifts = (
        ratings.join(users, "user")
        .withColumn("lift", F.col("rating") - F.col("usual"))
        .groupBy("item")
        .agg(F.avg("lift").alias("lift"), F.count("*").alias("ratings"))
        .where(F.col("ratings") >= 20)
        .orderBy(F.desc("lift"), "item")
    )
    top = lifts.limit(50).collect()
    print("items:", len(top), top[0])
    spark.stop()


if __name__ == "__main__":
    main()
