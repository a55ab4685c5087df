"""A TPC benchmark's data and queries from DuckDB's own extension, written for Spark.

Used by ``tpch_datagen.py`` and ``tpcds_datagen.py``, which differ only in the extension, its
generator and how its query text becomes Spark SQL (`Benchmark`). For a scale factor SF,
`generate` writes ``OUT/<name>-sf<SF>/``: one Parquet directory per table
(``<table>/part-0.parquet``), ``queries/qNN.sql`` in Spark SQL, ``answers.json`` (each
query's row count as DuckDB computes it on the same data) and ``_DONE.json``. The directory
is built under a temporary name beside it and renamed into place when complete, so an
interrupted call leaves nothing that looks finished, and a second call with the same
parameters does nothing, so a spec can call it before every study.

Neither the data nor the query text is written here: both come from the generator and query
templates DuckDB ships as an extension, installed from PyPI (``duckdb-extension-tpch``,
``duckdb-extension-tpcds``, pinned with ``duckdb``). The extension is loaded from its file in
site-packages with DuckDB's auto-install and auto-load of extensions off, so nothing is
fetched from the network. The generators are deterministic: the same scale factor gives the
same rows on every machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """What differs between the TPC benchmarks DuckDB generates."""

    name: str
    """``tpch`` or ``tpcds``: the extension's name, its table functions' prefix
    (``tpch_queries()``) and the output directory's (``tpch-sf1``)."""
    generator: str
    """The extension's data generator, called as ``CALL <generator>(sf=...)``."""
    tables: tuple[str, ...]
    """The tables the generator creates, in the order they are written."""
    to_spark_sql: Callable[[str], str]
    """One query's DuckDB text as Spark SQL."""
    version: int
    """Bumped when the layout or the translation changes, so old outputs are regenerated."""


def extension_path(name: str) -> Path:
    """The ``<name>`` extension file shipped by the ``duckdb-extension-<name>`` wheel."""
    import duckdb

    package = import_module(f"duckdb_extension_{name}")
    root = Path(package.__file__ or "").parent / "extensions"
    wanted = root / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if wanted.is_file():
        return wanted
    found = sorted(root.glob(f"*/{name}.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no {name}.duckdb_extension under {root}")
    return found[-1]


def connect(name: str, database: str = ":memory:") -> Any:
    """A DuckDB connection with the ``name`` extension loaded from its file, offline."""
    import duckdb

    con = duckdb.connect(
        database,
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    con.execute("SET enable_progress_bar = false")
    con.execute(f"LOAD '{extension_path(name)}'")
    return con


def duckdb_queries(con: Any, name: str) -> dict[int, str]:
    """The benchmark's queries as the extension gives them (DuckDB's dialect), by number."""
    rows = con.execute(f"SELECT query_nr, query FROM {name}_queries() ORDER BY query_nr")
    return {int(n): str(q) for n, q in rows.fetchall()}


def view_generated(con: Any, tables: tuple[str, ...], data: Path) -> None:
    """A view per table over its generated Parquet, so that DuckDB's queries read the very
    data Spark reads."""
    for table in tables:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM '{data / table}/*.parquet'")


def generate(bench: Benchmark, sf: float, out: Path) -> Path:
    """Write ``bench`` at scale factor ``sf`` (unless already there); returns its directory."""
    import duckdb

    target = out / f"{bench.name}-sf{sf:g}"
    params = {
        "dataset": bench.name,
        "sf": sf,
        "duckdb": duckdb.__version__,
        "extension": extension_path(bench.name).parent.name,
        "version": bench.version,
    }
    done = target / "_DONE.json"
    if done.is_file() and json.loads(done.read_text()) == params:
        return target
    building = out / f".{target.name}.building-{os.getpid()}"
    if building.exists():
        shutil.rmtree(building)
    building.mkdir(parents=True)
    # An on-disk database: the larger scale factors are more than the machine should hold.
    database = building / f"_{bench.generator}.duckdb"
    try:
        con = connect(bench.name, str(database))
        try:
            con.execute(f"CALL {bench.generator}(sf={sf})")
            for table in bench.tables:
                (building / table).mkdir()
                path = building / table / "part-0.parquet"
                con.execute(f"COPY {table} TO '{path}' (FORMAT parquet, COMPRESSION snappy)")
            (building / "queries").mkdir()
            answers: dict[str, int] = {}
            for number, query in duckdb_queries(con, bench.name).items():
                sql = bench.to_spark_sql(query)
                (building / "queries" / f"q{number:02d}.sql").write_text(sql + "\n")
                answers[f"q{number:02d}"] = len(con.execute(query).fetchall())
            (building / "answers.json").write_text(json.dumps(answers, indent=1) + "\n")
        finally:
            con.close()
        database.unlink(missing_ok=True)
        Path(f"{database}.wal").unlink(missing_ok=True)
        (building / "_DONE.json").write_text(json.dumps(params))
        if target.exists():
            shutil.rmtree(target)
        building.rename(target)
    finally:
        if building.exists():
            shutil.rmtree(building)
    return target


def main(bench: Benchmark, description: str) -> None:
    """The datagen scripts' command line: ``--sf SF --out DIR``, printing the directory."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sf", type=float, required=True, help="scale factor (1 ≈ 1 GB raw)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not 0 < args.sf <= 100:
        parser.error("--sf must be in (0, 100]")
    print(generate(bench, args.sf, args.out))
