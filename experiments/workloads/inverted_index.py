"""An inverted index over a directory of text files (PySpark RDD API, Python lambdas).

spark-submit inverted_index.py INPUT_DIR OUTPUT_DIR

Each line is a document, numbered by its position (zipWithIndex). Every (word, document)
pair is emitted by a Python flatMap, made distinct (a shuffle), grouped by word (a second
shuffle) into a sorted posting list, and written as text; then the document-frequency
histogram (how many words occur in n documents) is written beside it. Nearly all the work
is in the Python workers: tokenising, pickling pairs and sorting posting lists.
"""

import sys
from operator import add

from pyspark.sql import SparkSession


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("inverted-index").getOrCreate()
    documents = spark.sparkContext.textFile(source).zipWithIndex()
    pairs = documents.flatMap(lambda line_doc: [(w, line_doc[1]) for w in line_doc[0].split()])
    postings = pairs.distinct().groupByKey().mapValues(sorted).cache()
    postings.map(lambda kv: kv[0] + "\t" + " ".join(map(str, kv[1]))).saveAsTextFile(
        f"{target}/postings"
    )
    histogram = postings.map(lambda kv: (len(kv[1]), 1)).reduceByKey(add).sortByKey()
    histogram.map(lambda kv: f"{kv[0]}\t{kv[1]}").saveAsTextFile(f"{target}/document_frequency")
    widest = histogram.keys().max()
    print(f"words: {postings.count()}, widest posting list: {widest} documents")
    spark.stop()


if __name__ == "__main__":
    main()
