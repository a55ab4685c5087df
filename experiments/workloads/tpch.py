"""TPC-H queries with Spark SQL over Parquet (data and query text from experiments/tpch_datagen.py).

spark-submit tpch.py TPCH_DIR QUERIES

TPCH_DIR is a ``tpch-sf<N>`` directory (tables as Parquet, ``queries/qNN.sql`` in Spark SQL,
``answers.json``); QUERIES is ``all`` or a list such as ``1,3,5-7``. Each query is one
collected job (named ``TPC-H qNN`` in the event log); its row count is checked against
DuckDB's answer on the same data, and a mismatch fails the run (``_tpc.py``).
"""

from pathlib import Path

import _tpc
from pyspark.sql import SparkSession

LABEL = "TPC-H"


def parse_queries(text: str) -> list[int]:
    """``all`` → 1..22; ``1,3,5-7`` → [1, 3, 5, 6, 7] (order kept, each query once)."""
    return _tpc.parse_queries(text, 22, {})


def register_tables(spark: SparkSession, data: Path, numbers: list[int] | None = None) -> None:
    """A view per table (all eight, whatever the queries: Spark infers each one's schema)."""
    for table in _tpc.tables(data):
        spark.read.parquet(str(data / table)).createOrReplaceTempView(table)


def run_query(spark: SparkSession, data: Path, number: int) -> list:
    return _tpc.run_query(spark, data, LABEL, number)


if __name__ == "__main__":
    _tpc.main(LABEL, parse_queries, register_tables)
