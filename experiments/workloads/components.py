"""Connected components of a graph by label propagation (DataFrame joins, JVM only).

spark-submit components.py EDGES_DIR ITERATIONS OUTPUT_DIR

Every vertex starts labelled with its own id; each iteration joins the labels to the
(undirected) edges and keeps, per vertex, the smallest label among itself and its
neighbours, for ITERATIONS rounds or until no label changes. Each round is a join and an
aggregation over the whole edge list, cut from its lineage with a local checkpoint so that
the plan does not grow with the rounds. The components (vertices per final label) are
written as Parquet; their count and the largest are printed.
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, iterations, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    spark = SparkSession.builder.appName("components").getOrCreate()
    parts = F.split(F.col("value"), " ")
    edges = spark.read.text(source).select(
        parts.getItem(0).cast("long").alias("src"), parts.getItem(1).cast("long").alias("dst")
    )
    both = edges.union(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    both = both.where(F.col("src") != F.col("dst")).distinct().localCheckpoint()
    labels = both.select(F.col("src").alias("vertex")).distinct()
    labels = labels.withColumn("label", F.col("vertex")).localCheckpoint()
    for round_ in range(1, iterations + 1):
        offered = both.join(labels, both.src == labels.vertex).select(
            F.col("dst").alias("vertex"), F.col("label")
        )
        updated = (
            offered.union(labels.select("vertex", "label"))
            .groupBy("vertex")
            .agg(F.min("label").alias("label"))
            .localCheckpoint()
        )
        changed = (
            updated.join(labels.withColumnRenamed("label", "old"), "vertex")
            .where(F.col("label") != F.col("old"))
            .count()
        )
        labels = updated
        print(f"round {round_}: {changed} labels changed")
        if changed == 0:
            break
    sizes = labels.groupBy("label").count()
    sizes.write.mode("overwrite").parquet(target)
    largest = sizes.orderBy(F.desc("count")).first()
    print(f"components: {sizes.count()}, largest: {largest['count'] if largest else 0} vertices")
    spark.stop()


if __name__ == "__main__":
    main()
