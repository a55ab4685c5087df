"""TPC-H data and queries for the validation study, from DuckDB's ``tpch`` extension.

    python experiments/tpch_datagen.py --sf 1 --out DIR

writes ``DIR/tpch-sf<SF>/``: one Parquet directory per table (``lineitem/part-0.parquet``...),
``queries/q01.sql`` … ``q22.sql`` in Spark SQL, ``answers.json`` (each query's row count as
DuckDB computes it on the same data) and ``_DONE.json``; a second call with the same
parameters does nothing, so a spec can call it before every study. How, and why nothing is
fetched from the network: ``duckdb_bench.py``. ``dbgen`` is deterministic: the same scale
factor gives the same rows on every machine.

The queries are DuckDB's text, made into Spark SQL by `to_spark_sql` — a small, checked set
of rewrites (tests/e2e/test_tpch.py runs all 22 on Spark at SF 0.01 and compares with DuckDB).
"""

from __future__ import annotations

import re

from duckdb_bench import Benchmark, main


def to_spark_sql(query: str) -> str:
    """DuckDB's TPC-H text as Spark SQL.

    The extension's queries are close to the standard: dates are ``CAST('…' AS date)`` or
    ``date '…'`` literals (both Spark SQL), ``extract(year FROM …)`` and
    ``substring(… FROM 1 FOR 2)`` parse in Spark SQL, and no query uses interval arithmetic
    (qgen's ``date '…' + interval`` forms are already folded into literals). What Spark
    refuses is the statement terminator; `spark.sql` takes one statement without it.
    Anything else DuckDB-only fails loudly in the query test rather than being guessed at.
    """
    text = query.strip()
    text = re.sub(r";\s*$", "", text)
    if ";" in text:
        raise ValueError("more than one statement in a TPC-H query")
    # DuckDB's own interval syntax (`interval 3 month`), should a later extension use it:
    # Spark SQL reads `INTERVAL '3' MONTH`.
    text = re.sub(
        r"(?i)\binterval\s+(\d+)\s+(year|month|day)s?\b",
        lambda m: f"INTERVAL '{m.group(1)}' {m.group(2).upper()}",
        text,
    )
    return text


BENCH = Benchmark(
    name="tpch",
    generator="dbgen",
    tables=("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"),
    to_spark_sql=to_spark_sql,
    version=1,
)


if __name__ == "__main__":
    main(BENCH, __doc__.splitlines()[0])
