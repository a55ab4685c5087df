"""The fleet's tables: explicit schemas, so DuckDB, pandas and Spark read the same types
from both engines (docs/fleet.md documents every column), and the table they are held in.

Rows travel between the per-log analysis and the writers as plain dicts keyed by column
name; `table_from_rows` turns them into a `Table`, one Python list per column, which is all
the merge, the regressions and the summary need (sorting by a key, dropping a log's rows,
reading a few columns). Arrow and Parquet come in only at the files (`perfmodel.fleet.store`
writes them with arro3, 33 MB, where pyarrow would not fit the light install), and
`spark_schema` gives the Spark engine the matching StructType.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from perfmodel.dag.decomposition import COMPONENTS

Kind = Literal["string", "int64", "float64", "bool", "timestamp", "list<int64>", "list<string>"]
"""A column's type. ``timestamp`` is milliseconds, UTC, held as an aware `datetime`."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind
    nullable: bool = True


@dataclass(frozen=True, slots=True)
class Schema:
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __iter__(self) -> Iterator[Column]:
        return iter(self.columns)

    def empty_table(self) -> Table:
        return Table(self, {c.name: [] for c in self.columns})


@dataclass(slots=True)
class Table:
    """A fleet table in memory: ``schema``'s columns, each a list of Python values (None is
    null), all of one length."""

    schema: Schema
    columns: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def num_rows(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def column(self, name: str) -> list[Any]:
        return self.columns[name]

    def rows(self, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The rows as dicts (of ``names`` only, when given)."""
        names = self.schema.names if names is None else list(names)
        columns = [self.columns[n] for n in names]
        return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]

    def take(self, indices: Sequence[int]) -> Table:
        """The rows at ``indices``, in that order."""
        return Table(self.schema, {n: [c[i] for i in indices] for n, c in self.columns.items()})

    def with_column(self, name: str, values: list[Any]) -> Table:
        if name not in self.columns or len(values) != self.num_rows:
            raise ValueError(f"{name}: not a column of this table, or not one value per row")
        return Table(self.schema, {**self.columns, name: values})


def _schema(*columns: Column) -> Schema:
    return Schema(tuple(columns))


SCHEMA_VERSION = 1

LOG_FIELDS = [
    Column("log_path", "string", nullable=False),
    Column("log_size", "int64", nullable=False),
    Column("log_mtime_ns", "int64", nullable=False),
]

APPS = _schema(
    *LOG_FIELDS
    + [
        Column("app_id", "string"),
        Column("attempt", "string"),
        Column("app_name", "string"),
        Column("user", "string"),
        Column("spark_version", "string"),
        Column("start", "timestamp"),
        Column("end", "timestamp"),
        Column("duration_s", "float64"),
        Column("complete", "bool"),
        Column("jobs", "int64"),
        Column("failed_jobs", "int64"),
        Column("stages", "int64"),
        Column("stages_completed", "int64"),
        Column("stages_failed", "int64"),
        Column("stages_skipped", "int64"),
        Column("tasks", "int64"),
        Column("failed_tasks", "int64"),
        Column("master", "string"),
        Column("local_mode", "bool"),
        Column("executors", "int64"),
        Column("max_executors_alive", "int64"),
        Column("executor_cores", "int64"),
        Column("total_slots", "int64"),
        Column("task_cpus", "int64"),
        Column("slot_utilisation", "float64"),
        Column("task_time_s", "float64"),
        Column("held_core_hours", "float64"),
        Column("busy_core_hours", "float64"),
        Column("wasted_core_hours", "float64"),
        Column("held_from", "string"),
        Column("dominant", "string"),
        Column("bottleneck", "string"),
        Column("model_error", "float64"),
        Column("critical_path_s", "float64"),
        Column("critical_path_gaps_s", "float64"),
        Column("critical_path_share", "float64"),
        Column("driver_only_share", "float64"),
        Column("memory_spill_bytes", "int64"),
        Column("disk_spill_bytes", "int64"),
        Column("spill", "bool"),
        Column("skewed_stages", "int64"),
        Column("max_skew", "float64"),
        Column("skew", "bool"),
        Column("findings", "int64"),
        Column("damaged_records", "int64"),
        Column("warnings", "int64"),
        # The log whose figures count for this application (id, attempt) when another log
        # holds it too (`perfmodel.fleet.summary.mark_duplicates`); null otherwise.
        Column("duplicate_of", "string"),
    ]
)

STAGES = _schema(
    *[
        Column("log_path", "string", nullable=False),
        Column("app_id", "string"),
        Column("app_name", "string"),
        Column("stage_id", "int64", nullable=False),
        Column("attempt", "int64", nullable=False),
        Column("name", "string"),
        Column("status", "string"),
        Column("job_ids", "list<int64>"),
        Column("num_tasks", "int64"),
        Column("tasks_run", "int64"),
        Column("failed_tasks", "int64"),
        Column("duration_s", "float64"),
        Column("task_time_s", "float64"),
    ]
    + [Column(f"{c}_s", "float64") for c in COMPONENTS]
    + [Column(f"{c}_share", "float64") for c in COMPONENTS]
    + [
        Column("cpu_measured", "bool"),
        Column("dominant", "string"),
        Column("median_task_s", "float64"),
        Column("max_task_s", "float64"),
        Column("skew", "float64"),
        Column("stragglers", "int64"),
        Column("input_bytes", "int64"),
        Column("output_bytes", "int64"),
        Column("shuffle_read_bytes", "int64"),
        Column("shuffle_write_bytes", "int64"),
        Column("memory_spill_bytes", "int64"),
        Column("disk_spill_bytes", "int64"),
        Column("share_of_app", "float64"),
        Column("important", "bool"),
        Column("on_critical_path", "bool"),
        Column("summary", "string"),
    ]
)

FINDINGS = _schema(
    *[
        Column("log_path", "string", nullable=False),
        Column("app_id", "string"),
        Column("app_name", "string"),
        Column("finding", "int64", nullable=False),
        Column("text", "string"),
        Column("alert", "string"),
        Column("where", "string"),
        Column("knob", "string"),
        Column("knob_kind", "string"),
        Column("suggestion", "string"),
        Column("predicted_s", "float64"),
        Column("predicted_low_s", "float64"),
        Column("predicted_high_s", "float64"),
        Column("baseline_s", "float64"),
        Column("not_predicted", "string"),
    ]
)

PREDICTIONS = _schema(
    *[
        Column("log_path", "string", nullable=False),
        Column("app_id", "string"),
        Column("app_name", "string"),
        Column("what_if", "string", nullable=False),
        Column("executors", "int64"),
        Column("executor_cores", "int64"),
        Column("cores", "int64"),
        Column("memory_bytes", "int64"),
        Column("observed_s", "float64"),
        Column("baseline_replay_s", "float64"),
        Column("predicted_s", "float64"),
        Column("speedup", "float64"),
        Column("model_error", "float64"),
        Column("bottleneck", "string"),
        Column("error", "string"),
    ]
)

ERRORS = _schema(
    *LOG_FIELDS
    + [
        Column("kind", "string"),
        Column("reason", "string"),
    ]
)

MANIFEST = _schema(
    *LOG_FIELDS
    + [
        Column("status", "string"),
        Column("what_if", "string"),
        Column("engine", "string"),
        Column("analysed_at", "timestamp"),
    ]
)

REGRESSIONS = _schema(
    *[
        Column("app_name", "string", nullable=False),
        Column("scope", "string", nullable=False),
        Column("stage_id", "int64"),
        Column("stage_name", "string"),
        Column("runs", "int64"),
        Column("latest_log", "string"),
        Column("latest_app_id", "string"),
        Column("latest_s", "float64"),
        Column("baseline_median_s", "float64"),
        Column("baseline_mad_s", "float64"),
        Column("threshold_s", "float64"),
        Column("growth", "float64"),
        Column("earlier_app_ids", "list<string>"),
    ]
)

RESULT_TABLES: dict[str, Schema] = {
    "apps": APPS,
    "stages": STAGES,
    "findings": FINDINGS,
    "predictions": PREDICTIONS,
    "errors": ERRORS,
}
"""What the per-log analysis produces, table by table."""

SORT_KEYS: dict[str, list[str]] = {
    "apps": ["log_path"],
    "stages": ["log_path", "stage_id", "attempt"],
    "findings": ["log_path", "finding"],
    "predictions": ["log_path", "what_if"],
    "errors": ["log_path"],
    "manifest": ["log_path"],
    "regressions": ["app_name", "scope", "stage_id"],
}
"""Each table's key, in the order rows are written (so both engines' files compare equal)."""


def table_from_rows(rows: Iterable[Mapping[str, Any]], schema: Schema) -> Table:
    """Rows as a table of ``schema``; a missing column is null, an unknown one an error."""
    rows = list(rows)
    names = set(schema.names)
    for row in rows:
        extra = set(row) - names
        if extra:
            raise ValueError(f"columns not in the schema: {sorted(extra)}")
    return Table(schema, {name: [row.get(name) for row in rows] for name in schema.names})


def concat(tables: Sequence[Table]) -> Table:
    """The rows of ``tables`` one after the other (all of the first's schema)."""
    schema = tables[0].schema
    return Table(schema, {n: [v for t in tables for v in t.column(n)] for n in schema.names})


def sort_table(table: Table, name: str) -> Table:
    """``table`` in its key order (ascending, nulls last), the order every writer uses."""
    keys = [table.column(k) for k in SORT_KEYS[name]]

    def key(i: int) -> tuple[Any, ...]:
        return tuple((k[i] is None, k[i]) for k in keys)

    return table.take(sorted(range(table.num_rows), key=key))


def spark_schema(schema: Schema) -> Any:
    """The Spark StructType matching a fleet schema."""
    from pyspark.sql import types as T

    simple = {
        "string": T.StringType(),
        "int64": T.LongType(),
        "float64": T.DoubleType(),
        "bool": T.BooleanType(),
        "timestamp": T.TimestampType(),
        "list<int64>": T.ArrayType(T.LongType(), True),
        "list<string>": T.ArrayType(T.StringType(), True),
    }
    return T.StructType([T.StructField(c.name, simple[c.kind], c.nullable) for c in schema])
