"""The five most visited URLs of each response status (DataFrame API): web events read
from CSV, counted by status and URL (a hash aggregation), then ranked within each status (a
window over four statuses: a shuffle whose four keys leave every other partition empty),
the top five of each collected. Nothing is written.

spark-submit top_urls.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("top-urls").getOrCreate()
    events = spark.read.csv(source, header=True)
    counts = events.groupBy("status", "url").count()
    by_status = Window.partitionBy("status").orderBy(F.desc("count"), "url")
    top = counts.withColumn("rank", F.row_number().over(by_status)).where("rank <= 5").collect()
    print("top:", sorted((r["status"], r["rank"], r["url"]) for r in top)[:3])
    spark.stop()


if __name__ == "__main__":
    main()
