"""What the TPC-H and TPC-DS workloads share (not a workload itself): reading a query list,
the tables a generated directory holds, and the run that checks each query's row count.

A generated directory (experiments/duckdb_bench.py) holds one Parquet directory per table,
``queries/qNN.sql`` in Spark SQL and ``answers.json``, each query's row count by DuckDB.
"""

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pyspark.sql import SparkSession


def parse_queries(text: str, count: int, named: Mapping[str, Sequence[int]]) -> list[int]:
    """``all`` → 1..count; a name of ``named`` → its queries; ``1,3,5-7`` → [1, 3, 5, 6, 7]
    (order kept, each query once)."""
    word = text.strip().lower()
    if word == "all":
        return list(range(1, count + 1))
    if word in named:
        return list(named[word])
    numbers: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        for n in range(int(lo), int(hi or lo) + 1):
            if not 1 <= n <= count:
                raise ValueError(f"there are queries 1-{count}, not {n}")
            if n not in numbers:
                numbers.append(n)
    if not numbers:
        raise ValueError(f"no queries in {text!r}")
    return numbers


def tables(data: Path) -> list[str]:
    """The tables of a generated directory: its Parquet directories, by name."""
    return sorted(p.name for p in data.iterdir() if p.is_dir() and p.name != "queries")


def query_text(data: Path, number: int) -> str:
    return (data / "queries" / f"q{number:02d}.sql").read_text()


def run_query(spark: SparkSession, data: Path, label: str, number: int) -> list:
    """One query's rows, collected (every answer is small), as a job named ``<label> qNN``."""
    spark.sparkContext.setJobDescription(f"{label} q{number:02d}")
    return spark.sql(query_text(data, number)).collect()


def main(
    label: str,
    parse: Callable[[str], list[int]],
    register: Callable[[SparkSession, Path, list[int]], None],
) -> None:
    """``spark-submit <workload>.py DATA QUERIES``: register the tables, run each query and
    fail the run if a row count differs from DuckDB's answer."""
    data, numbers = Path(sys.argv[1]), parse(sys.argv[2])
    answers = json.loads((data / "answers.json").read_text())
    spark = SparkSession.builder.appName(label.lower().replace("-", "")).getOrCreate()
    register(spark, data, numbers)
    wrong = []
    for number in numbers:
        start = time.monotonic()
        rows = run_query(spark, data, label, number)
        expected = answers[f"q{number:02d}"]
        took = time.monotonic() - start
        print(f"q{number:02d}: {len(rows)} rows ({expected} expected) {took:.1f} s")
        if len(rows) != expected:
            wrong.append(number)
    spark.stop()
    if wrong:
        sys.exit(f"row counts differ from DuckDB's for queries {wrong}")
