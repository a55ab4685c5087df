"""TPC-DS for the settings study: DuckDB's data generation at a tiny scale factor, and the
workload's default queries run on Spark and checked against DuckDB's answers.

Kept cheap (one generation, one Spark session, two of the six default queries at SF 0.01):
the 99 queries' Spark runs were checked once by hand, and the workload itself checks every
query's row count against DuckDB's answer whenever it runs."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, load_script, local_spark

pytest.importorskip("duckdb")
pytest.importorskip(
    "duckdb_extension_tpcds",
    reason="DuckDB's tpcds extension is missing: pip install the [train] extra "
    "(duckdb-extension-tpcds)",
)

SF = 0.01
CHECKED = (7, 40)
"""A star join with four dimensions, and an outer join of sales with their returns: the two
shapes of the default set, each under its LIMIT at SF 0.01 (compared row by row)."""
# dsdgen's row counts at SF 0.01 for a few tables (the small dimensions do not scale).
ROWS = {"store_sales": 28810, "date_dim": 73049, "item": 180, "store": 1}


@pytest.fixture(scope="module")
def datagen() -> ModuleType:
    return load_script("tpcds_datagen", REPO / "experiments" / "tpcds_datagen.py")


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    pytest.importorskip("pyspark")
    return load_script("tpcds_workload", REPO / "experiments" / "workloads" / "tpcds.py")


@pytest.fixture(scope="module")
def tpcds_dir(datagen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return datagen.generate(SF, tmp_path_factory.mktemp("tpcds"))


def test_generation_writes_every_table_queries_and_answers(
    datagen: ModuleType, tpcds_dir: Path
) -> None:
    assert tpcds_dir.name == "tpcds-sf0.01"
    assert sorted(p.name for p in tpcds_dir.iterdir() if p.is_dir()) == sorted(
        [*datagen.TABLES, "queries"]
    )
    for table, rows in ROWS.items():
        files = sorted((tpcds_dir / table).glob("*.parquet"))
        assert sum(pq.read_metadata(f).num_rows for f in files) == rows, table
    schema = pq.read_schema(next((tpcds_dir / "date_dim").glob("*.parquet")))
    assert str(schema.field("d_date").type) == "date32[day]"
    queries = sorted((tpcds_dir / "queries").glob("q*.sql"))
    assert [q.stem for q in queries] == [f"q{n:02d}" for n in range(1, 100)]
    for q in queries:
        text = q.read_text()
        assert ";" not in text and 'AS "' not in text.upper(), q.name
    answers = json.loads((tpcds_dir / "answers.json").read_text())
    assert set(answers) == {q.stem for q in queries}
    # No leftovers: the database and the temporary build directory are gone.
    assert not (tpcds_dir / "_dsdgen.duckdb").exists()
    assert [p.name for p in tpcds_dir.parent.iterdir()] == [tpcds_dir.name]


def test_generation_is_idempotent(datagen: ModuleType, tpcds_dir: Path) -> None:
    before = (tpcds_dir / "store_sales" / "part-0.parquet").stat().st_mtime_ns
    assert datagen.generate(SF, tpcds_dir.parent) == tpcds_dir
    assert (tpcds_dir / "store_sales" / "part-0.parquet").stat().st_mtime_ns == before


def test_connection_never_fetches_extensions(datagen: ModuleType) -> None:
    con = datagen.connect()
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }
    con.close()


def _normalise(value: object) -> object:
    if isinstance(value, decimal.Decimal | float | int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _key(row: tuple) -> tuple:
    return tuple((0, round(v, 2), "") if isinstance(v, float) else (1, 0.0, str(v)) for v in row)


def _same_rows(ours: list, theirs: list) -> bool:
    """Equal as multisets (ties under ORDER BY may come in any order), floats to 1e-6."""
    a = sorted((tuple(map(_normalise, r)) for r in ours), key=_key)
    b = sorted((tuple(map(_normalise, r)) for r in theirs), key=_key)
    return len(a) == len(b) and all(
        len(x) == len(y)
        and all(
            math.isclose(u, v, rel_tol=1e-6, abs_tol=1e-6)
            if isinstance(u, float) and isinstance(v, float)
            else u == v
            for u, v in zip(x, y, strict=True)
        )
        for x, y in zip(a, b, strict=True)
    )


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A local Spark session for this module: ``local[2]``, no UI, one shuffle partition and
    no whole-stage code generation (at SF 0.01 compiling each plan's Java costs more than
    running it: the six queries took 14 s instead of 23 s in a cold session)."""
    session = local_spark(
        "perfmodel tpcds test",
        {"spark.sql.shuffle.partitions": "1", "spark.sql.codegen.wholeStage": "false"},
    )
    yield session
    session.stop()


@pytest.mark.slow
def test_default_queries_run_on_spark_and_agree_with_duckdb(
    datagen: ModuleType, workload: ModuleType, tpcds_dir: Path, spark: Any
) -> None:
    """Each checked query's row count is DuckDB's answer (what the workload checks), and its
    rows, under the query's LIMIT 100, are DuckDB's too (past it, Spark and DuckDB may cut
    ties and NULLs-first differently)."""
    assert set(CHECKED) <= set(workload.DEFAULT)
    answers = json.loads((tpcds_dir / "answers.json").read_text())
    con = datagen.connect()
    for table in datagen.TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM '{tpcds_dir / table}/*.parquet'")
    queries = datagen.duckdb_queries(con)
    workload.register_tables(spark, tpcds_dir, list(CHECKED))
    for number in CHECKED:
        rows = workload.run_query(spark, tpcds_dir, number)
        assert 0 < len(rows) == answers[f"q{number:02d}"] < 100, number
        assert _same_rows(rows, con.execute(queries[number]).fetchall()), number
    con.close()
