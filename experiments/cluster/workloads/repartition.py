"""Repartition 100-byte records round-robin across the cluster (a full shuffle, no sort) and
discard the result: the network between the executors is the work.

spark-submit repartition.py INPUT_DIR PARTITIONS
"""

import sys

from pyspark.sql import SparkSession


def main() -> None:
    source, partitions = sys.argv[1], int(sys.argv[2])
    spark = SparkSession.builder.appName("repartition").getOrCreate()
    records = spark.read.csv(source, schema="key STRING, payload STRING")
    # The noop sink runs the whole plan (read, shuffle write, shuffle read) and writes nothing.
    records.repartition(partitions).write.format("noop").mode("overwrite").save()
    spark.stop()


if __name__ == "__main__":
    main()
