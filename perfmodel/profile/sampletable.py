"""The one table every stack sampler (JFR, py-spy) is turned into, and how to build it cheaply.

Attribution, flame graphs and the bundle all read this shape, so a sampler only has to fill it
and nothing downstream knows which profiler a sample came from. Stacks are stored as dictionary-
encoded lists (a frame name is kept once, not once per sample), and every row carries a
``stack_id`` so consumers can count per distinct stack instead of re-walking identical frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

FRAMES_TYPE = pa.list_(pa.dictionary(pa.int32(), pa.string()))
LINES_TYPE = pa.list_(pa.int32())

SAMPLE_SCHEMA = pa.schema(
    [
        pa.field("timestamp_ms", pa.float64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("weight_ms", pa.float64(), nullable=False),
        pa.field("process", pa.string(), nullable=False),
        pa.field("pid", pa.int64()),
        pa.field("executor_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("thread_id", pa.int64()),
        pa.field("thread", pa.string()),
        pa.field("task_id", pa.int64()),
        pa.field("stage_id", pa.int32()),
        pa.field("stage_attempt", pa.int32()),
        pa.field("task_events", pa.bool_(), nullable=False),
        pa.field("stack_id", pa.int64(), nullable=False),
        pa.field("frames", FRAMES_TYPE, nullable=False),
        pa.field("lines", LINES_TYPE, nullable=False),
        pa.field("recording", pa.string(), nullable=False),
    ]
)
"""Columns of ``samples.parquet`` (see docs/bundle.md for their meaning)."""


@dataclass(slots=True)
class StackDictionary:
    """Distinct stacks of one recording: stack ``i`` is ``frames[i]`` (root first).

    ``frames[i]`` and ``lines[i]`` are int32 arrays of indices into ``names`` and of line
    numbers (0 when unknown), both root first.
    """

    names: list[str]
    frames: list[np.ndarray]
    lines: list[np.ndarray]


def stack_columns(
    stacks: StackDictionary, stack_ids: np.ndarray
) -> tuple[pa.ListArray, pa.ListArray]:
    """The ``frames`` and ``lines`` columns for samples whose stacks are ``stack_ids``.

    Built from offsets and one flat index array, so a sample costs a few integers, never a
    Python list of strings.
    """
    if len(stack_ids) == 0:
        return pa.array([], FRAMES_TYPE), pa.array([], LINES_TYPE)
    lengths = np.fromiter((len(f) for f in stacks.frames), dtype=np.int64, count=len(stacks.frames))
    per_sample = lengths[stack_ids]
    offsets = np.zeros(len(stack_ids) + 1, dtype=np.int32)
    np.cumsum(per_sample, out=offsets[1:])
    flat_frames = np.concatenate([stacks.frames[s] for s in stack_ids]).astype(np.int32)
    flat_lines = np.concatenate([stacks.lines[s] for s in stack_ids]).astype(np.int32)
    dictionary = pa.array(stacks.names, pa.string())
    values = pa.DictionaryArray.from_arrays(pa.array(flat_frames, pa.int32()), dictionary)
    frames = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
    lines = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat_lines))
    return frames, lines


def make_table(columns: dict[str, pa.Array | Sequence[object] | np.ndarray]) -> pa.Table:
    """A samples table with exactly :data:`SAMPLE_SCHEMA`, missing columns filled with nulls."""
    n = None
    for value in columns.values():
        n = len(value)
        break
    n = n or 0
    arrays = []
    for field in SAMPLE_SCHEMA:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(n, field.type))
        elif isinstance(value, pa.Array | pa.ChunkedArray):
            arrays.append(value if value.type == field.type else value.cast(field.type))
        else:
            arrays.append(pa.array(value, field.type))
    return pa.Table.from_arrays(arrays, schema=SAMPLE_SCHEMA)


def empty_table() -> pa.Table:
    """A samples table without rows (a source that produced nothing still has the shape)."""
    return SAMPLE_SCHEMA.empty_table()


def concat(tables: Sequence[pa.Table]) -> pa.Table:
    """All samples of several recordings in one table, stack ids made unique across them."""
    out: list[pa.Table] = []
    offset = 0
    for table in tables:
        if table.num_rows == 0:
            continue
        ids = table.column("stack_id").to_numpy()
        shifted = pa.array(ids + offset, pa.int64())
        out.append(table.set_column(table.schema.get_field_index("stack_id"), "stack_id", shifted))
        offset += int(ids.max()) + 1
    if not out:
        return empty_table()
    return pa.concat_tables(out).unify_dictionaries()


def stacks_by(samples: pa.Table, column: str = "process") -> dict[str, dict[tuple[str, ...], int]]:
    """Stack counts of a samples table (bundle schema), one set per value of ``column``."""
    if samples.num_rows == 0:
        return {}
    ids = samples.column("stack_id").to_numpy()
    unique, first = np.unique(ids, return_index=True)
    frames = dict(
        zip(
            unique.tolist(),
            (tuple(f) for f in samples.column("frames").take(pa.array(first)).to_pylist()),
            strict=True,
        )
    )
    groups = samples.group_by([column, "stack_id"]).aggregate([("stack_id", "count")])
    out: dict[str, dict[tuple[str, ...], int]] = {}
    for key, sid, count in zip(
        groups.column(column).to_pylist(),
        groups.column("stack_id").to_pylist(),
        groups.column("stack_id_count").to_pylist(),
        strict=True,
    ):
        out.setdefault(str(key), {})[frames[sid]] = int(count)
    return out
