"""TPC-DS queries with Spark SQL over Parquet (data and query text: experiments/tpcds_datagen.py).

spark-submit tpcds.py TPCDS_DIR QUERIES

TPCDS_DIR is a ``tpcds-sf<N>`` directory (tables as Parquet, ``queries/qNN.sql`` in Spark SQL,
``answers.json``); QUERIES is ``default`` (the six of `DEFAULT`), ``all`` (the 99) or a list
such as ``3,7,19-20``. Each query is one collected job (named ``TPC-DS qNN`` in the event log); its
row count is checked against DuckDB's answer on the same data, and a mismatch fails the run.
"""

import json
import re
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

TABLES = (
    "call_center",
    "catalog_page",
    "catalog_returns",
    "catalog_sales",
    "customer",
    "customer_address",
    "customer_demographics",
    "date_dim",
    "household_demographics",
    "income_band",
    "inventory",
    "item",
    "promotion",
    "reason",
    "ship_mode",
    "store",
    "store_returns",
    "store_sales",
    "time_dim",
    "warehouse",
    "web_page",
    "web_returns",
    "web_sales",
    "web_site",
)
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
    if text.strip().lower() == "default":
        return list(DEFAULT)
    if text.strip().lower() == "all":
        return list(range(1, 100))
    numbers: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        for n in range(int(lo), int(hi or lo) + 1):
            if not 1 <= n <= 99:
                raise ValueError(f"TPC-DS has queries 1-99, not {n}")
            if n not in numbers:
                numbers.append(n)
    if not numbers:
        raise ValueError(f"no queries in {text!r}")
    return numbers


def tables_of(text: str) -> list[str]:
    """The tables a query's text names (each table name is a whole word in it)."""
    return [t for t in TABLES if re.search(rf"(?i)\b{t}\b", text)]


def query_text(data: Path, number: int) -> str:
    return (data / "queries" / f"q{number:02d}.sql").read_text()


def register_tables(spark: SparkSession, data: Path, numbers: list[int] | None = None) -> None:
    """A view per table, of those the queries ``numbers`` read (all 24 when None). Each
    table's schema is read here from its Parquet footer and given to Spark, which would
    otherwise run a schema-inference job per table (0.3-0.5 s each at local[2], and jobs in
    the event log that are no query's)."""
    if numbers is None:
        wanted = list(TABLES)
    else:
        named = {t for n in numbers for t in tables_of(query_text(data, n))}
        wanted = [t for t in TABLES if t in named]
    for table in wanted:
        footer = pq.read_schema(next((data / table).glob("*.parquet")))
        reader = spark.read.schema(from_arrow_schema(footer))
        reader.parquet(str(data / table)).createOrReplaceTempView(table)


def run_query(spark: SparkSession, data: Path, number: int) -> list:
    """One query's rows, collected (every TPC-DS answer is small: most end in LIMIT 100)."""
    spark.sparkContext.setJobDescription(f"TPC-DS q{number:02d}")
    return spark.sql(query_text(data, number)).collect()


def main() -> None:
    data, numbers = Path(sys.argv[1]), parse_queries(sys.argv[2])
    answers = json.loads((data / "answers.json").read_text())
    spark = SparkSession.builder.appName("tpcds").getOrCreate()
    register_tables(spark, data, numbers)
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
