"""Per channel and label, the mean and spread of sixteen features, written as Parquet
(DataFrame API): a wide hash aggregation (thirty-two aggregates) over ten groups, so all
but ten reduce partitions are empty, and the result written, a file per task with rows.
Nothing is read back.

spark-submit feature_summary.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("feature-summary").getOrCreate()
    features = spark.read.parquet(source)
    columns = [c for c in features.columns if c.startswith("f")]
    stats = [F.avg(c).alias(f"{c}_mean") for c in columns]
    stats += [F.stddev(c).alias(f"{c}_sd") for c in columns]
    features.groupBy("channel", "label").agg(*stats).write.mode("overwrite").parquet(target)
    spark.stop()


if __name__ == "__main__":
    main()
