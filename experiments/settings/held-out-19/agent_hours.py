"""Requests per browser family and hour, one column per response status (DataFrame API):
web events read from CSV, each user agent put in a family (a chain of string tests), counted
by family, hour and status with a pivot (a hash aggregation whose keys are a few hundred),
then sorted by family and hour (a range exchange) and collected. Nothing is written.

spark-submit agent_hours.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def family(agent: F.Column) -> F.Column:
    return (
        F.when(agent.contains("Googlebot"), "bot")
        .when(agent.startswith("curl"), "cli")
        .when(agent.contains("Firefox"), "firefox")
        .when(agent.contains("iPhone"), "mobile")
        .when(agent.contains("Chrome"), "chrome")
        .otherwise("other")
    )


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("agent-hours").getOrCreate()
    events = spark.read.csv(source, header=True)
    hours = events.select(
        family(F.col("user_agent")).alias("family"),
        F.substring("ts", 12, 2).alias("hour"),
        "status",
    )
    table = hours.groupBy("family", "hour").pivot("status").count().orderBy("family", "hour")
    rows = table.collect()
    print("rows:", len(rows), rows[0])
    spark.stop()


if __name__ == "__main__":
    main()
