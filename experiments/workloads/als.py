"""A pyspark.ml recommender: ALS on explicit ratings, RMSE on a held-back split, top-10 lists.

spark-submit als.py RATINGS_DIR ITERATIONS OUTPUT_DIR

Fits ALS (rank 10, ITERATIONS alternating rounds, explicit feedback) on four fifths of the
``ratings`` dataset, reports the RMSE on the rest (RegressionEvaluator) and writes every
user's ten best items as Parquet. Each round is a pair of shuffles of the factor blocks and
a batch of small least-squares solves, all in the JVM (no Python UDFs); the popular items
make some blocks heavier than others.
"""

import sys

from pyspark.ml.evaluation import RegressionEvaluator
from pyspark.ml.recommendation import ALS
from pyspark.sql import SparkSession


def main() -> None:
    source, iterations, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    spark = SparkSession.builder.appName("als").getOrCreate()
    ratings = spark.read.parquet(source)
    train, test = ratings.randomSplit([0.8, 0.2], seed=7)
    als = ALS(
        rank=10,
        maxIter=iterations,
        regParam=0.05,
        implicitPrefs=False,
        userCol="user",
        itemCol="item",
        ratingCol="rating",
        coldStartStrategy="drop",
        seed=7,
    )
    model = als.fit(train)
    rmse = RegressionEvaluator(
        metricName="rmse", labelCol="rating", predictionCol="prediction"
    ).evaluate(model.transform(test))
    model.recommendForAllUsers(10).write.mode("overwrite").parquet(f"{target}/recommendations")
    users = spark.read.parquet(f"{target}/recommendations").count()
    print(f"rmse: {rmse:.3f}, users with recommendations: {users}")
    spark.stop()


if __name__ == "__main__":
    main()
