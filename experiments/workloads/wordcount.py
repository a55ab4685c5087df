"""Word count over a directory of text files (PySpark RDD API), counts written as text.

spark-submit wordcount.py INPUT_DIR OUTPUT_DIR
"""

import sys
from operator import add

from pyspark.sql import SparkSession


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("wordcount").getOrCreate()
    lines = spark.sparkContext.textFile(source)
    counts = lines.flatMap(lambda line: line.split()).map(lambda w: (w, 1)).reduceByKey(add)
    counts.cache()
    counts.saveAsTextFile(target)
    top = counts.takeOrdered(5, key=lambda kv: -kv[1])
    print("distinct words:", counts.count(), "top:", top)
    spark.stop()


if __name__ == "__main__":
    main()
