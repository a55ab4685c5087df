"""Unique visits per response status (DataFrame API): web events read from CSV, each
user's visits to a URL kept once (``dropDuplicates``: a hash aggregation over two
columns), then counted by status (a handful of keys), collected. Nothing is written.

spark-submit unique_visits.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("unique-visits").getOrCreate()
    events = spark.read.csv(source, header=True)
    by_status = events.dropDuplicates(["user_id", "url"]).groupBy("status").count().collect()
    print("by status:", sorted((r["status"], r["count"]) for r in by_status))
    spark.stop()


if __name__ == "__main__":
    main()
