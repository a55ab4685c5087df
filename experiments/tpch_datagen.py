"""TPC-H data and queries for the validation study, from DuckDB's ``tpch`` extension.

    python experiments/tpch_datagen.py --sf 1 --out DIR

writes ``DIR/tpch-sf<SF>/``: one Parquet directory per table (``lineitem/part-0.parquet``...),
``queries/q01.sql`` … ``q22.sql`` in Spark SQL, ``answers.json`` (each query's row count as
DuckDB computes it on the same data) and ``_DONE.json``; a second call with the same
parameters does nothing, so a spec can call it before every study.

Neither the data nor the query text is written here: both come from the TPC-H ``dbgen`` and
``qgen`` that DuckDB ships as an extension, installed from PyPI (``duckdb-extension-tpch``,
pinned with ``duckdb`` in pyproject.toml). The extension is loaded from its file in
site-packages; DuckDB's auto-install and auto-load of extensions are off, so nothing is
fetched from the network. ``dbgen`` is deterministic: the same scale factor gives the same
rows on every machine.

The queries are DuckDB's text, made into Spark SQL by `to_spark_sql` — a small, checked set
of rewrites (tests/e2e/test_tpch.py runs all 22 on Spark at SF 0.01 and compares with DuckDB).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
VERSION = 1
"""Bumped when the layout or the translation changes, so old outputs are regenerated."""


def extension_path() -> Path:
    """The tpch extension file shipped by the ``duckdb-extension-tpch`` wheel."""
    import duckdb
    import duckdb_extension_tpch

    root = Path(duckdb_extension_tpch.__file__).parent / "extensions"
    wanted = root / f"v{duckdb.__version__}" / "tpch.duckdb_extension"
    if wanted.is_file():
        return wanted
    found = sorted(root.glob("*/tpch.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no tpch.duckdb_extension under {root}")
    return found[-1]


def connect(database: str = ":memory:") -> Any:
    """A DuckDB connection with the tpch extension loaded from its file, offline."""
    import duckdb

    con = duckdb.connect(
        database,
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    con.execute(f"LOAD '{extension_path()}'")
    return con


def duckdb_queries(con: Any) -> dict[int, str]:
    """The 22 TPC-H queries as the extension gives them (DuckDB's dialect)."""
    rows = con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall()
    return {int(n): str(q) for n, q in rows}


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


def _sf_label(sf: float) -> str:
    return f"{sf:g}"


def generate(sf: float, out: Path) -> Path:
    """Write TPC-H at scale factor ``sf`` (unless already there); returns its directory."""
    target = out / f"tpch-sf{_sf_label(sf)}"
    import duckdb

    params = {
        "dataset": "tpch",
        "sf": sf,
        "duckdb": duckdb.__version__,
        "extension": extension_path().parent.name,
        "version": VERSION,
    }
    done = target / "_DONE.json"
    if done.is_file() and json.loads(done.read_text()) == params:
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    # An on-disk database: SF 5 is several GB, more than the machine should hold in memory.
    database = target / "_dbgen.duckdb"
    con = connect(str(database))
    try:
        con.execute(f"CALL dbgen(sf={sf})")
        for table in TABLES:
            (target / table).mkdir()
            path = target / table / "part-0.parquet"
            con.execute(f"COPY {table} TO '{path}' (FORMAT parquet, COMPRESSION snappy)")
        queries = duckdb_queries(con)
        (target / "queries").mkdir()
        answers: dict[str, int] = {}
        for number, query in queries.items():
            (target / "queries" / f"q{number:02d}.sql").write_text(to_spark_sql(query) + "\n")
            answers[f"q{number:02d}"] = len(con.execute(query).fetchall())
        (target / "answers.json").write_text(json.dumps(answers, indent=1) + "\n")
    finally:
        con.close()
        database.unlink(missing_ok=True)
        Path(f"{database}.wal").unlink(missing_ok=True)
    done.write_text(json.dumps(params))
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
