"""Sessions of web users, by hour of the day they start (DataFrame API): web events read
from CSV, each user's events ordered by time (a window: every event shuffled by user and
sorted), a new session wherever 30 minutes pass without an event, the sessions numbered
by a running sum over the same window, each session's events, span and spend summed (a
hash aggregation by user and session), then the sessions counted by starting hour (a
hash aggregation of 24 keys) and collected in order.

spark-submit event_sessions.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("event-sessions").getOrCreate()
    events = spark.read.csv(source, header=True).select(
        F.col("user_id").cast("long").alias("user"),
        F.unix_timestamp(F.to_timestamp("ts")).alias("t"),
        F.regexp_extract("amount", r"(\d+\.\d+)", 1).cast("double").alias("spend"),
    )
    by_user = Window.partitionBy("user").orderBy("t")
    starts = events.withColumn(
        "new", F.when(F.col("t") - F.lag("t").over(by_user) <= 1800, 0).otherwise(1)
    ).withColumn("session", F.sum("new").over(by_user))
    sessions = starts.groupBy("user", "session").agg(
        F.min("t").alias("start"),
        (F.max("t") - F.min("t")).alias("span"),
        F.count("*").alias("events"),
        F.sum("spend").alias("spend"),
    )
    by_hour = (
        sessions.groupBy(F.hour(F.from_unixtime("start")).alias("hour"))
        .agg(
            F.count("*").alias("sessions"),
            F.avg("span").alias("mean_span"),
            F.avg("events").alias("mean_events"),
        )
        .orderBy("hour")
        .collect()
    )
    print("hours:", len(by_hour), "sessions:", sum(r["sessions"] for r in by_hour))
    spark.stop()


if __name__ == "__main__":
    main()
