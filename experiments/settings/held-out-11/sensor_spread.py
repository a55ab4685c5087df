"""Each sensor's spread (DataFrame API): the number of distinct days it reported on (a
distinct aggregation: a shuffle by sensor and day, then one by sensor), its 99th percentile
reading (an object hash aggregation) and mean temperature; the ten sensors of widest
spread are collected. Nothing is written.

spark-submit sensor_spread.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("sensor-spread").getOrCreate()
    readings = spark.read.parquet(source)
    spread = (
        readings.groupBy("sensor")
        .agg(
            F.countDistinct((F.col("minute") / 1440).cast("int")).alias("days"),
            F.percentile_approx("value", 0.99).alias("p99"),
            F.avg("temperature").alias("temperature"),
        )
        .orderBy(F.desc("p99"))
        .limit(10)
        .collect()
    )
    print("widest:", [(r["sensor"], r["days"], round(r["p99"], 1)) for r in spread[:3]])
    spark.stop()


if __name__ == "__main__":
    main()
