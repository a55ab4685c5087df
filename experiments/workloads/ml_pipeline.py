"""A pyspark.ml pipeline: one-hot category, assemble, scale, logistic regression, KMeans.

spark-submit ml_pipeline.py FEATURES_DIR ITERATIONS OUTPUT_DIR

Fits StringIndexer → OneHotEncoder → VectorAssembler → StandardScaler → LogisticRegression
(ITERATIONS rounds of L-BFGS, each a treeAggregate job over the cached training set), scores
the held-back fifth (AUC), clusters the scaled features with KMeans and writes the scored
rows as Parquet: many short iterative jobs over cached data, unlike the other workloads.
"""

import sys

from pyspark.ml import Pipeline
from pyspark.ml.classification import LogisticRegression
from pyspark.ml.clustering import KMeans
from pyspark.ml.evaluation import BinaryClassificationEvaluator
from pyspark.ml.feature import OneHotEncoder, StandardScaler, StringIndexer, VectorAssembler
from pyspark.sql import SparkSession


def main() -> None:
    source, iterations, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    spark = SparkSession.builder.appName("ml-pipeline").getOrCreate()
    data = spark.read.parquet(source)
    features = [c for c in data.columns if c.startswith("f")]
    train, test = data.randomSplit([0.8, 0.2], seed=7)
    train = train.cache()
    stages = [
        StringIndexer(inputCol="channel", outputCol="channel_ix"),
        OneHotEncoder(inputCols=["channel_ix"], outputCols=["channel_vec"]),
        VectorAssembler(inputCols=[*features, "channel_vec"], outputCol="raw"),
        StandardScaler(inputCol="raw", outputCol="features", withMean=True),
        LogisticRegression(maxIter=iterations, regParam=0.01, tol=0.0),
    ]
    model = Pipeline(stages=stages).fit(train)
    scored = model.transform(test)
    auc = BinaryClassificationEvaluator().evaluate(scored)
    kmeans = KMeans(
        k=8, maxIter=iterations, seed=7, featuresCol="features", predictionCol="cluster"
    )
    clusters = kmeans.fit(model.transform(train).select("features"))
    (
        clusters.transform(scored.select("features", "label", "prediction"))
        .select("label", "prediction", "cluster")
        .write.mode("overwrite")
        .parquet(target)
    )
    print(f"auc: {auc:.3f}, cluster sizes: {sorted(clusters.summary.clusterSizes)}")
    spark.stop()


if __name__ == "__main__":
    main()
