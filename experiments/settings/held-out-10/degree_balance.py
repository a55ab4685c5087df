"""Each node's out- and in-degree in a link graph, and the balance between them, written as
Parquet (DataFrame API): the edge list parsed, two hash aggregations (by source, by
destination; the destinations follow a power law), a full outer join of the two on the node,
and the result written, a Parquet file per reduce task that has rows. Nothing is read back.

spark-submit degree_balance.py INPUT_DIR OUTPUT_DIR
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("degree-balance").getOrCreate()
    parts = F.split(F.col("value"), " ")
    edges = spark.read.text(source).select(
        parts.getItem(0).cast("long").alias("src"), parts.getItem(1).cast("long").alias("dst")
    )
    out_degree = edges.groupBy(F.col("src").alias("node")).agg(F.count("*").alias("out"))
    in_degree = edges.groupBy(F.col("dst").alias("node")).agg(F.count("*").alias("in"))
    balance = (
        out_degree.join(in_degree, "node", "full_outer")
        .na.fill(0, ["out", "in"])
        .withColumn("balance", F.col("out") - F.col("in"))
    )
    balance.write.mode("overwrite").parquet(target)
    spark.stop()


if __name__ == "__main__":
    main()
