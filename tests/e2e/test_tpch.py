"""TPC-H for the validation corpus: DuckDB's data generation at a tiny scale factor, and the
22 queries translated to Spark SQL, run on Spark and compared with DuckDB's answers."""

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
pytest.importorskip("duckdb_extension_tpch")

SF = 0.01
# dbgen's row counts at SF 0.01 (TPC-H spec: lineitem ≈ 6M × SF, orders 1.5M × SF, ...).
ROWS = {
    "customer": 1500,
    "lineitem": 60175,
    "nation": 25,
    "orders": 15000,
    "part": 2000,
    "partsupp": 8000,
    "region": 5,
    "supplier": 100,
}


@pytest.fixture(scope="module")
def tpc() -> ModuleType:
    """experiments/duckdb_bench.py, what the TPC-H and TPC-DS generators share."""
    return load_script("duckdb_bench", REPO / "experiments" / "duckdb_bench.py")


@pytest.fixture(scope="module")
def datagen(tpc: ModuleType) -> ModuleType:
    return load_script("tpch_datagen", REPO / "experiments" / "tpch_datagen.py")


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    return load_script("tpch_workload", REPO / "experiments" / "workloads" / "tpch.py")


@pytest.fixture(scope="module")
def tpch_dir(
    tpc: ModuleType, datagen: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    return tpc.generate(datagen.BENCH, SF, tmp_path_factory.mktemp("tpch"))


def test_generation_writes_every_table_with_dbgens_row_counts(tpch_dir: Path) -> None:
    assert tpch_dir.name == "tpch-sf0.01"
    for table, rows in ROWS.items():
        files = sorted((tpch_dir / table).glob("*.parquet"))
        assert files, table
        assert sum(pq.read_metadata(f).num_rows for f in files) == rows, table
    # Dates stay dates and money stays decimal: the queries' literals and arithmetic need them.
    schema = pq.read_schema(next((tpch_dir / "lineitem").glob("*.parquet")))
    assert str(schema.field("l_shipdate").type) == "date32[day]"
    assert str(schema.field("l_extendedprice").type).startswith("decimal128(15, 2)")
    assert not (tpch_dir / "_dbgen.duckdb").exists()


def test_generation_writes_22_spark_queries_and_duckdbs_answers(tpch_dir: Path) -> None:
    queries = sorted((tpch_dir / "queries").glob("q*.sql"))
    assert [q.stem for q in queries] == [f"q{n:02d}" for n in range(1, 23)]
    for q in queries:
        text = q.read_text()
        assert ";" not in text and "SELECT" in text.upper(), q.name
    answers = json.loads((tpch_dir / "answers.json").read_text())
    assert set(answers) == {q.stem for q in queries}
    # Known answers at SF 0.01: q01 groups by (returnflag, linestatus): 4 groups; q06 is one sum.
    assert answers["q01"] == 4 and answers["q06"] == 1 and answers["q10"] == 20


def test_generation_is_idempotent(tpc: ModuleType, datagen: ModuleType, tpch_dir: Path) -> None:
    before = (tpch_dir / "lineitem" / "part-0.parquet").stat().st_mtime_ns
    assert tpc.generate(datagen.BENCH, SF, tpch_dir.parent) == tpch_dir
    assert (tpch_dir / "lineitem" / "part-0.parquet").stat().st_mtime_ns == before


def test_generation_is_deterministic(
    tpc: ModuleType, datagen: ModuleType, tpch_dir: Path, tmp_path: Path
) -> None:
    again = tpc.generate(datagen.BENCH, SF, tmp_path)
    for table in ("nation", "orders"):
        a = pq.read_table(tpch_dir / table).to_pylist()
        assert a == pq.read_table(again / table).to_pylist(), table


def test_connection_never_fetches_extensions(tpc: ModuleType) -> None:
    con = tpc.connect("tpch")
    assert fetches_no_extensions(con)
    con.close()


def test_translation_strips_the_terminator_and_rewrites_duckdb_intervals(
    datagen: ModuleType,
) -> None:
    assert datagen.to_spark_sql("SELECT 1;\n") == "SELECT 1"
    assert (
        datagen.to_spark_sql("SELECT d + interval 3 month FROM t")
        == "SELECT d + INTERVAL '3' MONTH FROM t"
    )
    with pytest.raises(ValueError):
        datagen.to_spark_sql("SELECT 1; SELECT 2")


def test_query_lists(workload: ModuleType) -> None:
    assert workload.parse_queries("all") == list(range(1, 23))
    assert workload.parse_queries("1,3,5-7, 3") == [1, 3, 5, 6, 7]
    for bad in ("0", "23", "", "x"):
        with pytest.raises(ValueError):
            workload.parse_queries(bad)


@pytest.fixture
def spark() -> Iterator[Any]:
    """A local Spark session (``local[2]``, no UI, 2 shuffle partitions) for this test only,
    started when the test starts and stopped with it."""
    session = local_spark("perfmodel tpch test", {"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.mark.slow
def test_every_query_runs_on_spark_and_agrees_with_duckdb(
    tpc: ModuleType, datagen: ModuleType, workload: ModuleType, tpch_dir: Path, spark: Any
) -> None:
    """One Spark session for all 22 (about a minute at SF 0.01): each query's rows, compared
    with DuckDB's on the same data as multisets (ties under ORDER BY may come in any order)."""
    con = tpc.connect("tpch")
    tpc.view_generated(con, datagen.BENCH.tables, tpch_dir)
    duck = {n: con.execute(q).fetchall() for n, q in tpc.duckdb_queries(con, "tpch").items()}
    con.close()
    workload.register_tables(spark, tpch_dir)
    differ = [
        n for n in range(1, 23) if not same_rows(workload.run_query(spark, tpch_dir, n), duck[n])
    ]
    assert not differ
