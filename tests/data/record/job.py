"""A small PySpark application for the `perfmodel record` tests and benchmark.

Written for this repository (no external source). It generates its own input so nothing large
is committed, then runs the stage kinds the tests assert on:

1. an RDD word count over a text file (a stage that reads a file, then a Python shuffle);
2. a CPU-heavy DataFrame stage (SHA-512 of every row, then a sort);
3. a DataFrame join with a Python UDF.

Usage: python job.py WORK_DIR [SCALE]   (SCALE multiplies the data sizes; default 1)
Exits 3 after finishing when the environment variable JOB_FAIL is set (failure-path tests).
"""

from __future__ import annotations

import os
import random
import sys
from operator import add

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

WORDS = [f"word{i}" for i in range(5000)]


def write_text(path: str, lines: int) -> None:
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(lines):
            handle.write(" ".join(rng.choices(WORDS, k=12)) + "\n")


def bucket_name(n: int) -> str:
    return "bucket-" + str(n % 97)


def main() -> int:
    work = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    os.makedirs(work, exist_ok=True)
    text = os.path.join(work, "words.txt")
    write_text(text, int(200_000 * scale))

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-record-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    sc = spark.sparkContext

    counts = (
        sc.textFile(text, 4)
        .flatMap(lambda line: line.split())
        .map(lambda w: (w, 1))
        .reduceByKey(add)
    )
    print("distinct words:", counts.count())

    hashed = spark.range(0, int(1_500_000 * scale), numPartitions=4).selectExpr(
        "id", "sha2(cast(id as string), 512) as h"
    )
    print("first hash:", hashed.orderBy("h").select("h").first()[0][:16])

    to_name = F.udf(bucket_name, StringType())
    left = spark.range(0, int(300_000 * scale), numPartitions=4).withColumn("b", to_name("id"))
    right = spark.range(0, 97).withColumn("b", F.concat(F.lit("bucket-"), F.col("id")))
    joined = left.join(right.withColumnRenamed("id", "rid"), "b").groupBy("rid").count()
    print("join groups:", joined.count())

    spark.stop()
    return 3 if os.environ.get("JOB_FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
