"""The fleet's output folder: Parquet tables written atomically, and the manifest.

Each table is one file, ``<out>/<table>.parquet`` (zstd, written and read with arro3, the
Arrow and Parquet library of the light install), written to a temporary name beside it and
renamed into place, so a reader (or a run that is interrupted) never sees half a file.
The manifest (``_manifest.parquet``) records, per log, the path, size and mtime it was
analysed at and the what-ifs asked for; a later run skips a log whose entry still matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from arro3.core import Array, DataType, Field, list_array
from arro3.core import Schema as ArrowSchema
from arro3.core import Table as ArrowTable
from arro3.io import read_parquet, write_parquet

from perfmodel.atomic import replacing
from perfmodel.fleet.discover import LogRef
from perfmodel.fleet.schema import MANIFEST, Column, Kind, Schema, Table, concat, sort_table

MANIFEST_FILE = "_manifest.parquet"


def table_path(out: Path, name: str) -> Path:
    return out / (MANIFEST_FILE if name == "manifest" else f"{name}.parquet")


def read_table(out: Path, name: str, schema: Schema) -> Table:
    """A table written by an earlier run, or an empty one."""
    path = table_path(out, name)
    if not path.exists():
        return schema.empty_table()
    return conform(read_parquet(str(path)).read_all(), schema)


def conform(table: Any, schema: Schema) -> Table:
    """An Arrow table (arro3's, or pyarrow's from Spark: anything with ``column_names`` and
    columns that give ``to_pylist``) as a fleet `Table` of exactly ``schema``'s columns.
    Spark's output has other timestamp units and nullability; columns it lacks are null."""
    present = set(table.column_names)
    rows = table.num_rows
    columns: dict[str, list[Any]] = {}
    for c in schema:
        if c.name in present:
            columns[c.name] = [_value(v, c.kind) for v in table.column(c.name).to_pylist()]
        else:
            columns[c.name] = [None] * rows
    return Table(schema, columns)


def _value(v: Any, kind: Kind) -> Any:
    """A value read from Arrow as the fleet holds it: timestamps aware, in UTC, to the ms."""
    if v is None or kind != "timestamp":
        return v
    if v.tzinfo is None:
        v = v.replace(tzinfo=UTC)
    return v.astimezone(UTC).replace(microsecond=v.microsecond // 1000 * 1000)


_ARROW_TYPES: dict[str, DataType] = {
    "string": DataType.string(),
    "int64": DataType.int64(),
    "float64": DataType.float64(),
    "bool": DataType.bool(),
}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _epoch_ms(v: datetime) -> int:
    """Whole milliseconds since the epoch, rounded down (as Arrow casts to ``ms``)."""
    return (v - _EPOCH) // timedelta(milliseconds=1)


def _array(values: list[Any], column: Column) -> Array:
    kind = column.kind
    if kind in _ARROW_TYPES:
        return Array(values, _ARROW_TYPES[kind])
    if kind == "timestamp":
        ms = [None if v is None else _epoch_ms(v) for v in values]
        return Array(ms, DataType.int64()).cast(DataType.timestamp("ms", tz="UTC"))
    item = _ARROW_TYPES[kind.removeprefix("list<").removesuffix(">")]
    offsets = [0]
    flat: list[Any] = []
    for v in values:
        flat.extend(v or ())
        offsets.append(len(flat))
    return list_array(
        Array(offsets, DataType.int32()),
        Array(flat, item),
        type=DataType.list(Field("item", item, nullable=True)),
        mask=Array([v is None for v in values], DataType.bool()),
    )


def to_arrow(table: Table) -> ArrowTable:
    """``table`` as an Arrow table of its schema's types (what the Parquet file holds)."""
    arrays = [_array(table.column(c.name), c) for c in table.schema]
    fields = [
        Field(c.name, a.type, nullable=c.nullable)
        for c, a in zip(table.schema, arrays, strict=True)
    ]
    return ArrowTable.from_arrays(arrays, schema=ArrowSchema(fields))


def write_table(out: Path, name: str, table: Table) -> Path:
    """Write ``table`` in its key order to its file, atomically (temporary file + rename,
    `perfmodel.atomic.replacing`: only a regular file there is replaced)."""
    path = table_path(out, name)
    with replacing(path) as tmp:
        write_parquet(to_arrow(sort_table(table, name)), str(tmp), compression="zstd(1)")
    return path


def replace_logs(old: Table, new: Table, paths: Iterable[str]) -> Table:
    """``old`` without the rows of the logs in ``paths``, plus ``new``."""
    drop = set(paths)
    if old.num_rows and drop:
        old = old.take([i for i, p in enumerate(old.column("log_path")) if p not in drop])
    return concat([old, new]) if new.num_rows else old


RETRIED = frozenset({"error:memory_cap", "error:worker_died", "error:internal"})
"""Outcomes that depend on the run rather than the log (the cap, a crash, a bug since
fixed): such a log is analysed again by the next run even if it did not change."""


def manifest_entries(table: Table) -> dict[str, tuple[int, int, str, str]]:
    """``log_path → (size, mtime_ns, what_if, status)`` as last analysed."""
    cols = ["log_path", "log_size", "log_mtime_ns", "what_if", "status"]
    return {
        r["log_path"]: (r["log_size"], r["log_mtime_ns"], r["what_if"] or "", r["status"] or "")
        for r in table.rows(cols)
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
    "to_arrow",
    "manifest_entries",
    "read_table",
    "replace_logs",
    "table_path",
    "unchanged",
    "write_table",
]
