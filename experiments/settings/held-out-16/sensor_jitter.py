"""Each sensor's jitter, written as JSON (DataFrame API): each reading's change from the
sensor's previous one in time (a window: a shuffle by sensor and a sort by minute in each
partition), averaged per sensor, and written, a JSON file per task. Nothing is read back.

spark-submit sensor_jitter.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sensor-jitter").getOrCreate()
    readings = spark.read.parquet(source)
    in_time = Window.partitionBy("sensor").orderBy("minute")
    jitter = (
        readings.withColumn("change", F.abs(F.col("value") - F.lag("value").over(in_time)))
        .groupBy("sensor")
        .agg(F.avg("change").alias("jitter"), F.count("*").alias("readings"))
    )
    jitter.write.mode("overwrite").json(target)
    spark.stop()


if __name__ == "__main__":
    main()
