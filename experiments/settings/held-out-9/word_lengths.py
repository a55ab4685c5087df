"""How often words of each length occur, and how many distinct words each length has
(DataFrame API): lines split into words, a hash aggregation by word (a hot word, Zipf's
law, stays in one partition), then a second aggregation of the words' counts by length, of
a dozen keys, collected. Nothing is written.

spark-submit word_lengths.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("word-lengths").getOrCreate()
    lines = spark.read.text(source)
    words = lines.select(F.explode(F.split(F.lower("value"), " ")).alias("word")).where(
        F.length("word") > 0
    )
    counts = words.groupBy("word").agg(F.count("*").alias("n"))
    by_length = (
        counts.groupBy(F.length("word").alias("length"))
        .agg(
            F.sum("n").alias("occurrences"),
            F.count("*").alias("distinct"),
            F.max("n").alias("most"),
        )
        .orderBy("length")
        .collect()
    )
    print("lengths:", [(r["length"], r["occurrences"], r["distinct"]) for r in by_length[:5]])
    spark.stop()


if __name__ == "__main__":
    main()
