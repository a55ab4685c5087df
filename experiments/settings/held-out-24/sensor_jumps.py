"""The largest jump between consecutive hourly means of each sensor, summarised per group of
sensors (DataFrame API): readings (Parquet) averaged per sensor and hour (a hash aggregation
under spark.sql.shuffle.partitions), a window over each sensor's hours in order (an exchange
by sensor and a sort), the largest jump per sensor, then counted and averaged per group of
100 sensors and collected.

spark-submit sensor_jumps.py READINGS_DIR
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    readings = sys.argv[1]
    spark = SparkSession.builder.appName("sensor-jumps").getOrCreate()
    hourly = (
        spark.read.parquet(readings)
        .withColumn("hour", (F.col("minute") / 60).cast("int"))
        .groupBy("sensor", "hour")
        .agg(F.avg("value").alias("mean"), F.max("temperature").alias("hottest"))
    )
    by_sensor = Window.partitionBy("sensor").orderBy("hour")
    jumps = (
        hourly.withColumn("jump", F.abs(F.col("mean") - F.lag("mean").over(by_sensor)))
        .groupBy("sensor")
        .agg(F.max("jump").alias("largest"), F.max("hottest").alias("hottest"))
    )
    groups = (
        jumps.groupBy((F.col("sensor") / 100).cast("int").alias("group"))
        .agg(F.count("*").alias("sensors"), F.avg("largest").alias("mean_largest"))
        .collect()
    )
    print("groups:", len(groups), "sensors:", sum(g["sensors"] for g in groups))
    spark.stop()


if __name__ == "__main__":
    main()
