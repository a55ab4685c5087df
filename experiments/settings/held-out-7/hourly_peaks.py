"""Hourly statistics per sensor written as CSV, read back for each hour's peak (DataFrame
API): a hash aggregation by sensor and hour whose reduce tasks each write a CSV file, then
a read of those files (with their header) and a second aggregation, collected.

spark-submit hourly_peaks.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("hourly-peaks").getOrCreate()
    readings = spark.read.parquet(source)
    hourly = readings.groupBy("sensor", (F.col("minute") / 60).cast("int").alias("hour")).agg(
        F.avg("value").alias("mean"),
        F.max("value").alias("peak"),
        F.stddev("temperature").alias("temperature_sd"),
    )
    hourly.write.mode("overwrite").option("header", True).csv(target)
    back = spark.read.option("header", True).csv(target)
    peaks = (
        back.groupBy("hour")
        .agg(F.max(F.col("peak").cast("double")).alias("peak"), F.count("*").alias("sensors"))
        .orderBy(F.desc("peak"))
        .limit(5)
        .collect()
    )
    print("top hours:", [(r["hour"], round(r["peak"], 1)) for r in peaks])
    spark.stop()


if __name__ == "__main__":
    main()
