"""Sort 100-byte records by key and write them out (DataFrame API, TeraSort-like).

spark-submit sort.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sort").getOrCreate()
    records = spark.read.csv(source, schema="key STRING, payload STRING")
    records.orderBy("key").write.mode("overwrite").csv(target)
    print("sorted records:", spark.read.csv(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
