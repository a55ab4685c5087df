"""How many different words follow each word (DataFrame API): lines split into words, each
word paired with the next on its line (``posexplode``, then a self-join on the line and the
position: a sort-merge join, both sides shuffled by the line), the distinct pairs kept (a
hash aggregation over a key of high cardinality, so its map side combines little), then the
successors counted per word and the 20 words with the most printed.

spark-submit bigram_spread.py INPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source = sys.argv[1]
    spark = SparkSession.builder.appName("bigram-spread").getOrCreate()
    lines = spark.read.text(source).select(
        F.monotonically_increasing_id().alias("line"), F.split(F.lower("value"), " ").alias("ws")
    )
    words = lines.select("line", F.posexplode("ws").alias("pos", "word")).where(
        F.length("word") > 0
    )
    following = words.select("line", (F.col("pos") - 1).alias("pos"), F.col("word").alias("next"))
    pairs = words.join(following, ["line", "pos"]).select("word", "next").distinct()
    spread = (
        pairs.groupBy("word")
        .agg(F.count("*").alias("successors"))
        .orderBy(F.desc("successors"), "word")
        .limit(20)
        .collect()
    )
    print("words:", [(r["word"], r["successors"]) for r in spread[:5]])
    spark.stop()


if __name__ == "__main__":
    main()
