"""Count records by key prefix and write the counts out as Parquet (DataFrame API): a wide
aggregation whose reduce tasks each write an output file, so the partition count sets how
many files the job writes.

spark-submit prefix_counts.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("prefix-counts").getOrCreate()
    records = spark.read.csv(source, schema="key STRING, payload STRING")
    counts = records.groupBy(F.substring("key", 1, 4).alias("prefix")).agg(
        F.count("*").alias("records"), F.min("payload").alias("first_payload")
    )
    counts.write.mode("overwrite").parquet(target)
    print("prefixes:", spark.read.parquet(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
