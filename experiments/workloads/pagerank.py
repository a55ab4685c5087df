"""PageRank over an edge list (PySpark RDD API, the classic join/reduceByKey iteration).

spark-submit pagerank.py EDGES_DIR ITERATIONS OUTPUT_DIR
"""

import sys
from operator import add

from pyspark.sql import SparkSession


def contributions(urls, rank):
    urls = list(urls)
    for url in urls:
        yield url, rank / len(urls)


def main() -> None:
    source, iterations, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    spark = SparkSession.builder.appName("pagerank").getOrCreate()
    lines = spark.sparkContext.textFile(source)
    links = lines.map(lambda line: tuple(line.split())).distinct().groupByKey().cache()
    ranks = links.mapValues(lambda _: 1.0)
    for _ in range(iterations):
        contribs = links.join(ranks).flatMap(lambda kv: contributions(kv[1][0], kv[1][1]))
        ranks = contribs.reduceByKey(add).mapValues(lambda r: 0.15 + 0.85 * r)
    ranks.saveAsTextFile(target)
    print("top pages:", ranks.takeOrdered(3, key=lambda kv: -kv[1]))
    spark.stop()


if __name__ == "__main__":
    main()
