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


def _c(name: str, kind: Kind, nullable: bool = True) -> Column:
    return Column(name, kind, nullable)


SCHEMA_VERSION = 1

LOG_FIELDS = [
    _c("log_path", "string", nullable=False),
    _c("log_size", "int64", nullable=False),
    _c("log_mtime_ns", "int64", nullable=False),
]

APPS = _schema(
    *LOG_FIELDS
    + [
        _c("app_id", "string"),
        _c("attempt", "string"),
        _c("app_name", "string"),
        _c("user", "string"),
        _c("spark_version", "string"),
        _c("start", "timestamp"),
        _c("end", "timestamp"),
        _c("duration_s", "float64"),
        _c("complete", "bool"),
        _c("jobs", "int64"),
        _c("failed_jobs", "int64"),
        _c("stages", "int64"),
        _c("stages_completed", "int64"),
        _c("stages_failed", "int64"),
        _c("stages_skipped", "int64"),
        _c("tasks", "int64"),
        _c("failed_tasks", "int64"),
        _c("master", "string"),
        _c("local_mode", "bool"),
        _c("executors", "int64"),
        _c("max_executors_alive", "int64"),
        _c("executor_cores", "int64"),
        _c("total_slots", "int64"),
        _c("task_cpus", "int64"),
        _c("slot_utilisation", "float64"),
        _c("task_time_s", "float64"),
        _c("held_core_hours", "float64"),
        _c("busy_core_hours", "float64"),
        _c("wasted_core_hours", "float64"),
        _c("held_from", "string"),
        _c("dominant", "string"),
        _c("bottleneck", "string"),
        _c("model_error", "float64"),
        _c("critical_path_s", "float64"),
        _c("critical_path_gaps_s", "float64"),
        _c("critical_path_share", "float64"),
        _c("driver_only_share", "float64"),
        _c("memory_spill_bytes", "int64"),
        _c("disk_spill_bytes", "int64"),
        _c("spill", "bool"),
        _c("skewed_stages", "int64"),
        _c("max_skew", "float64"),
        _c("skew", "bool"),
        _c("findings", "int64"),
        _c("damaged_records", "int64"),
        _c("warnings", "int64"),
        # The log whose figures count for this application (id, attempt) when another log
        # holds it too (`perfmodel.fleet.summary.mark_duplicates`); null otherwise.
        _c("duplicate_of", "string"),
    ]
)

STAGES = _schema(
    *[
        _c("log_path", "string", nullable=False),
        _c("app_id", "string"),
        _c("app_name", "string"),
        _c("stage_id", "int64", nullable=False),
        _c("attempt", "int64", nullable=False),
        _c("name", "string"),
        _c("status", "string"),
        _c("job_ids", "list<int64>"),
        _c("num_tasks", "int64"),
        _c("tasks_run", "int64"),
        _c("failed_tasks", "int64"),
        _c("duration_s", "float64"),
        _c("task_time_s", "float64"),
    ]
    + [_c(f"{c}_s", "float64") for c in COMPONENTS]
    + [_c(f"{c}_share", "float64") for c in COMPONENTS]
    + [
        _c("cpu_measured", "bool"),
        _c("dominant", "string"),
        _c("median_task_s", "float64"),
        _c("max_task_s", "float64"),
        _c("skew", "float64"),
        _c("stragglers", "int64"),
        _c("input_bytes", "int64"),
        _c("output_bytes", "int64"),
        _c("shuffle_read_bytes", "int64"),
        _c("shuffle_write_bytes", "int64"),
        _c("memory_spill_bytes", "int64"),
        _c("disk_spill_bytes", "int64"),
        _c("share_of_app", "float64"),
        _c("important", "bool"),
        _c("on_critical_path", "bool"),
        _c("summary", "string"),
    ]
)

FINDINGS = _schema(
    *[
        _c("log_path", "string", nullable=False),
        _c("app_id", "string"),
        _c("app_name", "string"),
        _c("finding", "int64", nullable=False),
        _c("text", "string"),
        _c("alert", "string"),
        _c("where", "string"),
        _c("knob", "string"),
        _c("knob_kind", "string"),
        _c("suggestion", "string"),
        _c("predicted_s", "float64"),
        _c("predicted_low_s", "float64"),
        _c("predicted_high_s", "float64"),
        _c("baseline_s", "float64"),
        _c("not_predicted", "string"),
    ]
)

PREDICTIONS = _schema(
    *[
        _c("log_path", "string", nullable=False),
        _c("app_id", "string"),
        _c("app_name", "string"),
        _c("what_if", "string", nullable=False),
        _c("executors", "int64"),
        _c("executor_cores", "int64"),
        _c("cores", "int64"),
        _c("memory_bytes", "int64"),
        _c("observed_s", "float64"),
        _c("baseline_replay_s", "float64"),
        _c("predicted_s", "float64"),
        _c("speedup", "float64"),
        _c("model_error", "float64"),
        _c("bottleneck", "string"),
        _c("error", "string"),
    ]
)

ERRORS = _schema(
    *LOG_FIELDS
    + [
        _c("kind", "string"),
        _c("reason", "string"),
    ]
)

MANIFEST = _schema(
    *LOG_FIELDS
    + [
        _c("status", "string"),
        _c("what_if", "string"),
        _c("engine", "string"),
        _c("analysed_at", "timestamp"),
    ]
)

REGRESSIONS = _schema(
    *[
        _c("app_name", "string", nullable=False),
        _c("scope", "string", nullable=False),
        _c("stage_id", "int64"),
        _c("stage_name", "string"),
        _c("runs", "int64"),
        _c("latest_log", "string"),
        _c("latest_app_id", "string"),
        _c("latest_s", "float64"),
        _c("baseline_median_s", "float64"),
        _c("baseline_mad_s", "float64"),
        _c("threshold_s", "float64"),
        _c("growth", "float64"),
        _c("earlier_app_ids", "list<string>"),
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
