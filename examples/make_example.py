"""Produce the bundled example event log with a real local PySpark run.

    .venv/bin/python examples/make_example.py

A small ETL job with the shapes users bring to perfmodel: reading generated text,
an RDD word count (shuffle), a DataFrame join + aggregation (SQL executions), a Python
UDF (time in Python workers) and a sort that writes its output. It runs at local[2]
with Spark's default zstd event-log compression and writes
examples/eventlogs/etl-local2.zstd (a few hundred KB).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "eventlogs" / "etl-local2.zstd"
WORDS = [f"w{i}" for i in range(2000)]


def main() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    work = Path(tempfile.mkdtemp(prefix="perfmodel-example-"))
    logs = work / "logs"
    logs.mkdir()
    rng = random.Random(7)
    text = work / "text.txt"
    with text.open("w") as fh:
        for _ in range(120_000):
            fh.write(" ".join(rng.choice(WORDS) for _ in range(12)) + "\n")

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfmodel-example-etl")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", logs.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    try:
        sc = spark.sparkContext
        counts = (
            sc.textFile(str(text), 8)
            .flatMap(lambda line: line.split())
            .map(lambda w: (w, 1))
            .reduceByKey(lambda a, b: a + b)
        )
        top = counts.takeOrdered(10, key=lambda kv: -kv[1])
        print("top words:", top[:3])

        events = spark.range(0, 2_000_000, numPartitions=8).select(
            (F.col("id") % 5000).alias("user"),
            (F.col("id") * 7 % 1000).cast("double").alias("amount"),
        )
        users = spark.range(0, 5000).select(
            F.col("id").alias("user"), (F.col("id") % 17).alias("segment")
        )

        @F.udf(returnType=StringType())
        def bucket(amount: float) -> str:
            return "high" if amount > 900 else ("mid" if amount > 300 else "low")

        report = (
            events.join(users, "user")
            .withColumn("bucket", bucket("amount"))
            .groupBy("segment", "bucket")
            .agg(F.sum("amount").alias("total"), F.count("*").alias("n"))
        )
        report.collect()
        out = work / "sorted"
        events.orderBy("amount").write.mode("overwrite").parquet(str(out))
    finally:
        spark.stop()
    produced = sorted(p for p in logs.iterdir() if p.is_file())
    if len(produced) != 1:
        raise SystemExit(f"expected one event log in {logs}, found {produced}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(produced[0], OUT)
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
