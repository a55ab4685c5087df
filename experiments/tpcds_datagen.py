"""TPC-DS data and queries for the settings study, from DuckDB's ``tpcds`` extension.

    python experiments/tpcds_datagen.py --sf 1 --out DIR

writes ``DIR/tpcds-sf<SF>/``: one Parquet directory per table (``store_sales/part-0.parquet``...),
``queries/q01.sql`` … ``q99.sql`` in Spark SQL, ``answers.json`` (each query's row count as
DuckDB computes it on the same data) and ``_DONE.json``; a second call with the same
parameters does nothing, so a spec can call it before every study. The directory is built
under a temporary name beside it and renamed into place when complete, so an interrupted
call leaves nothing that looks finished.

Neither the data nor the query text is written here: both come from the TPC-DS ``dsdgen``
and query templates that DuckDB ships as an extension, installed from PyPI
(``duckdb-extension-tpcds``, pinned with ``duckdb`` in pyproject.toml). The extension is
loaded from its file in site-packages; DuckDB's auto-install and auto-load of extensions are
off, so nothing is fetched from the network. ``dsdgen`` is deterministic: the same scale
factor gives the same rows on every machine.

The queries are DuckDB's text, made into Spark SQL by `to_spark_sql`: the statement
terminator is dropped and double-quoted column aliases become back-quoted, nothing else
(the extension's text already folds date arithmetic into literals). The workload's default
queries need neither rewrite but the terminator's (experiments/workloads/tpcds.py;
tests/e2e/test_tpcds.py runs them on Spark and compares with DuckDB).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

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
VERSION = 1
"""Bumped when the layout or the translation changes, so old outputs are regenerated."""


def extension_path() -> Path:
    """The tpcds extension file shipped by the ``duckdb-extension-tpcds`` wheel."""
    import duckdb
    import duckdb_extension_tpcds

    root = Path(duckdb_extension_tpcds.__file__).parent / "extensions"
    wanted = root / f"v{duckdb.__version__}" / "tpcds.duckdb_extension"
    if wanted.is_file():
        return wanted
    found = sorted(root.glob("*/tpcds.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no tpcds.duckdb_extension under {root}")
    return found[-1]


def connect(database: str = ":memory:") -> Any:
    """A DuckDB connection with the tpcds extension loaded from its file, offline."""
    import duckdb

    con = duckdb.connect(
        database,
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    con.execute("SET enable_progress_bar = false")
    con.execute(f"LOAD '{extension_path()}'")
    return con


def duckdb_queries(con: Any) -> dict[int, str]:
    """The 99 TPC-DS queries as the extension gives them (DuckDB's dialect)."""
    rows = con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr").fetchall()
    return {int(n): str(q) for n, q in rows}


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


def _sf_label(sf: float) -> str:
    return f"{sf:g}"


def generate(sf: float, out: Path) -> Path:
    """Write TPC-DS at scale factor ``sf`` (unless already there); returns its directory."""
    import duckdb

    target = out / f"tpcds-sf{_sf_label(sf)}"
    params = {
        "dataset": "tpcds",
        "sf": sf,
        "duckdb": duckdb.__version__,
        "extension": extension_path().parent.name,
        "version": VERSION,
    }
    done = target / "_DONE.json"
    if done.is_file() and json.loads(done.read_text()) == params:
        return target
    building = out / f".{target.name}.building-{os.getpid()}"
    if building.exists():
        shutil.rmtree(building)
    building.mkdir(parents=True)
    # An on-disk database: the larger scale factors are more than the machine should hold.
    database = building / "_dsdgen.duckdb"
    try:
        con = connect(str(database))
        try:
            con.execute(f"CALL dsdgen(sf={sf})")
            for table in TABLES:
                (building / table).mkdir()
                path = building / table / "part-0.parquet"
                con.execute(f"COPY {table} TO '{path}' (FORMAT parquet, COMPRESSION snappy)")
            queries = duckdb_queries(con)
            (building / "queries").mkdir()
            answers: dict[str, int] = {}
            for number, query in queries.items():
                sql = to_spark_sql(query)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, required=True, help="scale factor (1 ≈ 1 GB raw)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not 0 < args.sf <= 100:
        parser.error("--sf must be in (0, 100]")
    print(generate(args.sf, args.out))


if __name__ == "__main__":
    main()
