"""Bigram counts over a directory of text files (DataFrame API, pyspark.ml.feature).

spark-submit ngrams.py INPUT_DIR OUTPUT_DIR

Tokenizer → NGram(n=2) per line, explode, count each bigram (a wide aggregation: most
bigrams of Zipf text are distinct), keep those seen more than once and write the 1000
most frequent as Parquet. All of it runs in the JVM; no Python worker is started.
"""

import sys

from pyspark.ml.feature import NGram, Tokenizer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("ngrams").getOrCreate()
    lines = spark.read.text(source)
    words = Tokenizer(inputCol="value", outputCol="words").transform(lines)
    bigrams = NGram(n=2, inputCol="words", outputCol="bigrams").transform(words)
    counts = (
        bigrams.select(F.explode("bigrams").alias("bigram"))
        .groupBy("bigram")
        .count()
        .where(F.col("count") > 1)
    )
    counts.orderBy(F.desc("count"), "bigram").limit(1000).write.mode("overwrite").parquet(target)
    top = spark.read.parquet(target).orderBy(F.desc("count")).first()
    print(f"top bigram: {top['bigram']!r} x{top['count']}")
    spark.stop()


if __name__ == "__main__":
    main()
