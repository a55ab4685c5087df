"""TPC-DS queries with Spark SQL over Parquet (data and query text: experiments/tpcds_datagen.py).

spark-submit tpcds.py TPCDS_DIR QUERIES

TPCDS_DIR is a ``tpcds-sf<N>`` directory (tables as Parquet, ``queries/qNN.sql`` in Spark SQL,
``answers.json``); QUERIES is ``default`` (the six of `DEFAULT`), ``all`` (the 99) or a list
such as ``3,7,19-20``. Each query is one collected job (named ``TPC-DS qNN`` in the event log); its
row count is checked against DuckDB's answer on the same data, and a mismatch fails the run
(``_tpc.py``).
"""

import re
from pathlib import Path

import _tpc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

LABEL = "TPC-DS"
DEFAULT = (7, 18, 27, 40, 46, 78)
"""Star joins of a sales table with three to five dimensions, aggregated (q07, q27 with a
rollup, q18 over customers with a rollup); a sales table outer-joined with its returns
(q40); a per-ticket aggregation joined back to customers and addresses (q46); all three
channels' sales outer-joined with their returns, aggregated and joined again (q78).
Broadcast against sort-merge joins and the shuffle partition count both change their
plans. All six run on Spark SQL 4 from DuckDB's text unchanged (but its terminator) and
return rows at scale factors 0.01 and 1. At SF 1 they took 41-65 s in three runs at local[2]
with a 2g driver, 64 shuffle partitions and AQE on, on a shared 2-core machine."""


def parse_queries(text: str) -> list[int]:
    """``default`` → `DEFAULT`; ``all`` → 1..99; ``3,7,19-20`` → [3, 7, 19, 20] (order kept,
    each query once)."""
    return _tpc.parse_queries(text, 99, {"default": DEFAULT})


def tables_of(data: Path, text: str) -> list[str]:
    """The tables of ``data`` a query's text names (each table name is a whole word in it)."""
    return [t for t in _tpc.tables(data) if re.search(rf"(?i)\b{t}\b", text)]


def register_tables(spark: SparkSession, data: Path, numbers: list[int] | None = None) -> None:
    """A view per table, of those the queries ``numbers`` read (all 24 when None). Each
    table's schema is read here from its Parquet footer and given to Spark, which would
    otherwise run a schema-inference job per table (0.3-0.5 s each at local[2], and jobs in
    the event log that are no query's)."""
    if numbers is None:
        wanted = _tpc.tables(data)
    else:
        wanted = sorted({t for n in numbers for t in tables_of(data, _tpc.query_text(data, n))})
    for table in wanted:
        footer = pq.read_schema(next((data / table).glob("*.parquet")))
        reader = spark.read.schema(from_arrow_schema(footer))
        reader.parquet(str(data / table)).createOrReplaceTempView(table)


def run_query(spark: SparkSession, data: Path, number: int) -> list:
    """One query's rows (every TPC-DS answer is small: most end in LIMIT 100)."""
    return _tpc.run_query(spark, data, LABEL, number)


if __name__ == "__main__":
    _tpc.main(LABEL, parse_queries, register_tables)
