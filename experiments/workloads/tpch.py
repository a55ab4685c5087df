"""TPC-H queries with Spark SQL over Parquet (data and query text from experiments/tpch_datagen.py).

spark-submit tpch.py TPCH_DIR QUERIES

TPCH_DIR is a ``tpch-sf<N>`` directory (tables as Parquet, ``queries/qNN.sql`` in Spark SQL,
``answers.json``); QUERIES is ``all`` or a list such as ``1,3,5-7``. Each query is one
collected job (named ``TPC-H qNN`` in the event log); its row count is checked against
DuckDB's answer on the same data, and a mismatch fails the run.
"""

import json
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")


def parse_queries(text: str) -> list[int]:
    """``all`` → 1..22; ``1,3,5-7`` → [1, 3, 5, 6, 7] (order kept, each query once)."""
    if text.strip().lower() == "all":
        return list(range(1, 23))
    numbers: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        for n in range(int(lo), int(hi or lo) + 1):
            if not 1 <= n <= 22:
                raise ValueError(f"TPC-H has queries 1-22, not {n}")
            if n not in numbers:
                numbers.append(n)
    if not numbers:
        raise ValueError(f"no queries in {text!r}")
    return numbers


def register_tables(spark: SparkSession, data: Path) -> None:
    for table in TABLES:
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)


def run_query(spark: SparkSession, data: Path, number: int) -> list:
    """One query's rows, collected (every TPC-H answer is small)."""
    text = (data / "queries" / f"q{number:02d}.sql").read_text()
    spark.sparkContext.setJobDescription(f"TPC-H q{number:02d}")
    return spark.sql(text).collect()


def main() -> None:
    data, numbers = Path(sys.argv[1]), parse_queries(sys.argv[2])
    answers = json.loads((data / "answers.json").read_text())
    spark = SparkSession.builder.appName("tpch").getOrCreate()
    register_tables(spark, data)
    wrong = []
    for number in numbers:
        start = time.monotonic()
        rows = run_query(spark, data, number)
        expected = answers[f"q{number:02d}"]
        took = time.monotonic() - start
        print(f"q{number:02d}: {len(rows)} rows ({expected} expected) {took:.1f} s")
        if len(rows) != expected:
            wrong.append(number)
    spark.stop()
    if wrong:
        sys.exit(f"row counts differ from DuckDB's for queries {wrong}")


if __name__ == "__main__":
    main()
