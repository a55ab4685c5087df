"""How evenly each item's ratings spread over the rating scale (DataFrame API): ratings
(Parquet) counted per item and rating value, pivoted into one column per value (a pivot:
a hash aggregation by item and value, then one by item), each item's entropy over the ten
values computed, and the 100 items of most ratings and entropy sorted and collected.

spark-submit rating_entropy.py RATINGS_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

VALUES = [v / 2 for v in range(1, 11)]


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("rating-entropy").getOrCreate()
    ratings = spark.read.parquet(source)
    counts = ratings.groupBy("item").pivot("rating", VALUES).count().na.fill(0)
    total = sum(F.col(f"`{v}`") for v in VALUES)
    entropy = -sum(
        F.when(
            F.col(f"`{v}`") > 0, F.col(f"`{v}`") / total * F.log2(F.col(f"`{v}`") / total)
        ).otherwise(0.0)
        for v in VALUES
    )
    top = (
        counts.select("item", total.alias("ratings"), entropy.alias("entropy"))
        .orderBy(F.desc("ratings"), F.desc("entropy"), "item")
        .limit(100)
        .collect()
    )
    print("items:", len(top), "most rated:", top[0]["ratings"] if top else 0)
    spark.stop()


if __name__ == "__main__":
    main()
