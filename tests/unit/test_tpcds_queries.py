"""The TPC-DS workload's query list and the DuckDB → Spark SQL rewrite (pure functions of
experiments/workloads/tpcds.py and experiments/tpcds_datagen.py; no Spark, no DuckDB)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import REPO, load_script


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    pytest.importorskip("pyspark")
    return load_script("tpcds_workload", REPO / "experiments" / "workloads" / "tpcds.py")


@pytest.fixture(scope="module")
def datagen() -> ModuleType:
    return load_script("tpcds_datagen", REPO / "experiments" / "tpcds_datagen.py")


def test_query_lists(workload: ModuleType) -> None:
    assert workload.parse_queries("default") == list(workload.DEFAULT)
    assert workload.parse_queries(" DEFAULT ") == list(workload.DEFAULT)
    assert workload.parse_queries("all") == list(range(1, 100))
    assert workload.parse_queries("78,7, 40-42,7") == [78, 7, 40, 41, 42]
    for bad in ("0", "100", "", ",", "x", "3-x", "default,3"):
        with pytest.raises(ValueError):
            workload.parse_queries(bad)


@given(st.lists(st.integers(1, 99), min_size=1, max_size=20))
def test_any_list_of_queries_reads_back_in_order_once_each(
    workload: ModuleType, numbers: list[int]
) -> None:
    assert workload.parse_queries(",".join(map(str, numbers))) == list(dict.fromkeys(numbers))


def test_default_queries_are_six_to_eight_distinct_queries(workload: ModuleType) -> None:
    assert 6 <= len(workload.DEFAULT) <= 8
    assert len(set(workload.DEFAULT)) == len(workload.DEFAULT)
    assert all(1 <= n <= 99 for n in workload.DEFAULT)


def test_translation_drops_the_terminator_and_backquotes_quoted_aliases(
    datagen: ModuleType,
) -> None:
    assert datagen.to_spark_sql("SELECT 1;\n") == "SELECT 1"
    assert (
        datagen.to_spark_sql('SELECT sum(x) AS "30 days", y as "a-b" FROM t WHERE s = \'"q"\';')
        == "SELECT sum(x) AS `30 days`, y AS `a-b` FROM t WHERE s = '\"q\"'"
    )
    with pytest.raises(ValueError, match="more than one statement"):
        datagen.to_spark_sql("SELECT 1; SELECT 2")


def test_a_querys_tables_are_the_whole_words_it_names(
    workload: ModuleType, datagen: ModuleType, tmp_path: Path
) -> None:
    """Tables are the generated directory's Parquet directories (all 24 of the generator's)."""
    for table in datagen.BENCH.tables:
        (tmp_path / table).mkdir()
    (tmp_path / "queries").mkdir()
    text = "SELECT c_name FROM customer, customer_address ca, store_sales WHERE x_store = 1"
    assert workload.tables_of(tmp_path, text) == ["customer", "customer_address", "store_sales"]
    assert workload.tables_of(tmp_path, "select 1 from DATE_DIM") == ["date_dim"]
    assert workload.tables_of(tmp_path, "SELECT 1") == []
    assert workload.tables_of(tmp_path, "SELECT 1 FROM queries") == []
