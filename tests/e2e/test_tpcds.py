"""TPC-DS for the settings study: DuckDB's data generation at a tiny scale factor, and the
workload's default queries run on Spark and checked against DuckDB's answers.

Kept cheap (one generation, one Spark session, two of the six default queries at SF 0.01):
the 99 queries' Spark runs were checked once by hand, and the workload itself checks every
query's row count against DuckDB's answer whenever it runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, fetches_no_extensions, load_script, local_spark, same_rows

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
def tpc() -> ModuleType:
    """experiments/duckdb_bench.py, what the TPC-H and TPC-DS generators share."""
    return load_script("duckdb_bench", REPO / "experiments" / "duckdb_bench.py")


@pytest.fixture(scope="module")
def datagen(tpc: ModuleType) -> ModuleType:
    return load_script("tpcds_datagen", REPO / "experiments" / "tpcds_datagen.py")


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    pytest.importorskip("pyspark")
    return load_script("tpcds_workload", REPO / "experiments" / "workloads" / "tpcds.py")


@pytest.fixture(scope="module")
def tpcds_dir(
    tpc: ModuleType, datagen: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    return tpc.generate(datagen.BENCH, SF, tmp_path_factory.mktemp("tpcds"))


def test_generation_writes_every_table_queries_and_answers(
    datagen: ModuleType, tpcds_dir: Path
) -> None:
    assert tpcds_dir.name == "tpcds-sf0.01"
    assert sorted(p.name for p in tpcds_dir.iterdir() if p.is_dir()) == sorted(
        [*datagen.BENCH.tables, "queries"]
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


def test_generation_is_idempotent(tpc: ModuleType, datagen: ModuleType, tpcds_dir: Path) -> None:
    before = (tpcds_dir / "store_sales" / "part-0.parquet").stat().st_mtime_ns
    assert tpc.generate(datagen.BENCH, SF, tpcds_dir.parent) == tpcds_dir
    assert (tpcds_dir / "store_sales" / "part-0.parquet").stat().st_mtime_ns == before


def test_connection_never_fetches_extensions(tpc: ModuleType) -> None:
    con = tpc.connect("tpcds")
    assert fetches_no_extensions(con)
    con.close()


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
    tpc: ModuleType, datagen: ModuleType, workload: ModuleType, tpcds_dir: Path, spark: Any
) -> None:
    """Each checked query's row count is DuckDB's answer (what the workload checks), and its
    rows, under the query's LIMIT 100, are DuckDB's too (past it, Spark and DuckDB may cut
    ties and NULLs-first differently)."""
    assert set(CHECKED) <= set(workload.DEFAULT)
    answers = json.loads((tpcds_dir / "answers.json").read_text())
    con = tpc.connect("tpcds")
    tpc.view_generated(con, datagen.BENCH.tables, tpcds_dir)
    queries = tpc.duckdb_queries(con, "tpcds")
    workload.register_tables(spark, tpcds_dir, list(CHECKED))
    for number in CHECKED:
        rows = workload.run_query(spark, tpcds_dir, number)
        assert 0 < len(rows) == answers[f"q{number:02d}"] < 100, number
        assert same_rows(rows, con.execute(queries[number]).fetchall()), number
    con.close()
