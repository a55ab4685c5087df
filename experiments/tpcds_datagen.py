"""TPC-DS data and queries for the settings study, from DuckDB's ``tpcds`` extension.

    python experiments/tpcds_datagen.py --sf 1 --out DIR

writes ``DIR/tpcds-sf<SF>/``: one Parquet directory per table (``store_sales/part-0.parquet``...),
``queries/q01.sql`` … ``q99.sql`` in Spark SQL, ``answers.json`` (each query's row count as
DuckDB computes it on the same data) and ``_DONE.json``; a second call with the same
parameters does nothing, so a spec can call it before every study. How, and why nothing is
fetched from the network: ``duckdb_bench.py``. ``dsdgen`` is deterministic: the same scale
factor gives the same rows on every machine.

The queries are DuckDB's text, made into Spark SQL by `to_spark_sql`: the statement
terminator is dropped and double-quoted column aliases become back-quoted, nothing else
(the extension's text already folds date arithmetic into literals). The workload's default
queries need neither rewrite but the terminator's (experiments/workloads/tpcds.py;
tests/e2e/test_tpcds.py runs them on Spark and compares with DuckDB).
"""

from __future__ import annotations

import re

from duckdb_bench import Benchmark, main


def to_spark_sql(query: str) -> str:
    """DuckDB's TPC-DS text as Spark SQL: one statement, without its terminator.

    `spark.sql` takes one statement and refuses the ``;``. Eight queries (q16, q32, q50,
    q62, q92, q94, q95, q99) name columns with double-quoted aliases (``AS "30 days"``),
    which DuckDB reads as identifiers and Spark SQL as string literals, a parse error; they
    become back-quoted (``AS `30 days```). No query quotes anything else in double quotes.
    Anything else DuckDB-only fails loudly on Spark rather than being guessed at.
    """
    text = re.sub(r";\s*$", "", query.strip())
    if ";" in text:
        raise ValueError("more than one statement in a TPC-DS query")
    return re.sub(r'(?i)\bAS\s+"([^"`]+)"', lambda m: f"AS `{m.group(1)}`", text)


BENCH = Benchmark(
    name="tpcds",
    generator="dsdgen",
    tables=(
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
    ),
    to_spark_sql=to_spark_sql,
    version=1,
)


if __name__ == "__main__":
    main(BENCH, __doc__.splitlines()[0])
