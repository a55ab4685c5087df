"""The fleet's output folder: Parquet tables written atomically, and the manifest.

Each table is one file, ``<out>/<table>.parquet``, written to a temporary name beside it
and renamed into place, so a reader (or a run that is interrupted) never sees half a file.
The manifest (``_manifest.parquet``) records, per log, the path, size and mtime it was
analysed at and the what-ifs asked for; a later run skips a log whose entry still matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from perfmodel.atomic import replacing
from perfmodel.fleet.discover import LogRef
from perfmodel.fleet.schema import MANIFEST, sort_table

MANIFEST_FILE = "_manifest.parquet"


def table_path(out: Path, name: str) -> Path:
    return out / (MANIFEST_FILE if name == "manifest" else f"{name}.parquet")


def read_table(out: Path, name: str, schema: pa.Schema) -> pa.Table:
    """A table written by an earlier run, or an empty one."""
    path = table_path(out, name)
    if not path.exists():
        return schema.empty_table()
    return conform(pq.read_table(path), schema)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly ``schema``'s columns and types (Spark's output has other
    timestamp units and nullability; columns it lacks are null)."""
    arrays = []
    for field in schema:
        if field.name in table.column_names:
            arrays.append(table.column(field.name).cast(field.type, safe=False))
        else:
            arrays.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def write_table(out: Path, name: str, table: pa.Table) -> Path:
    """Write ``table`` in its key order to its file, atomically (temporary file + rename,
    `perfmodel.atomic.replacing`: only a regular file there is replaced)."""
    path = table_path(out, name)
    with replacing(path) as tmp:
        pq.write_table(sort_table(table, name), str(tmp), compression="zstd")
    return path


def replace_logs(old: pa.Table, new: pa.Table, paths: Iterable[str]) -> pa.Table:
    """``old`` without the rows of the logs in ``paths``, plus ``new``."""
    drop = pa.array(sorted(set(paths)), pa.string())
    if old.num_rows and len(drop):
        keep = pc.invert(pc.is_in(old.column("log_path"), value_set=drop))
        old = old.filter(keep)
    return pa.concat_tables([old, new.cast(old.schema)]) if new.num_rows else old


RETRIED = frozenset({"error:memory_cap", "error:worker_died", "error:internal"})
"""Outcomes that depend on the run rather than the log (the cap, a crash, a bug since
fixed): such a log is analysed again by the next run even if it did not change."""


def manifest_entries(table: pa.Table) -> dict[str, tuple[int, int, str, str]]:
    """``log_path → (size, mtime_ns, what_if, status)`` as last analysed."""
    cols = ["log_path", "log_size", "log_mtime_ns", "what_if", "status"]
    return {
        r["log_path"]: (r["log_size"], r["log_mtime_ns"], r["what_if"] or "", r["status"] or "")
        for r in table.select(cols).to_pylist()
    }


def unchanged(ref: LogRef, entries: Mapping[str, tuple[int, int, str, str]], what_if: str) -> bool:
    """True when ``ref`` was analysed at this size and mtime, for these what-ifs, with an
    outcome that another run would repeat."""
    entry = entries.get(ref.path)
    return (
        entry is not None
        and entry[:3] == (ref.size, ref.mtime_ns, what_if)
        and entry[3] not in RETRIED
    )


__all__ = [
    "MANIFEST",
    "conform",
    "manifest_entries",
    "read_table",
    "replace_logs",
    "table_path",
    "unchanged",
    "write_table",
]
