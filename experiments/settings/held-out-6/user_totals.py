"""Totals per user from web events, written out as JSON lines (DataFrame API): the amount
text parsed with a regular expression, then a hash aggregation by user whose reduce tasks
each write a JSON file, so the partition count sets how many files the job writes.

spark-submit user_totals.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("user-totals").getOrCreate()
    events = spark.read.csv(source, header=True, inferSchema=False)
    amount = F.regexp_extract("amount", r"([0-9]+\.[0-9]+)", 1).cast("double")
    totals = (
        events.where(F.col("status") != "404")
        .groupBy(F.col("user_id").cast("int").alias("user_id"))
        .agg(
            F.count("*").alias("events"),
            F.round(F.sum(amount), 2).alias("spent"),
            F.max("ts").alias("last_seen"),
        )
    )
    totals.write.mode("overwrite").json(target)
    print("users:", spark.read.json(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
