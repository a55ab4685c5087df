"""The fleet's Parquet tables: explicit schemas, so DuckDB, pandas and Spark read the same
types from both engines (docs/fleet.md documents every column).

Rows travel between the per-log analysis and the writers as plain dicts keyed by column
name; `table_from_rows` turns them into a pyarrow table of the declared schema, and
`spark_schema` gives the Spark engine the matching StructType.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from perfmodel.dag.decomposition import COMPONENTS

SCHEMA_VERSION = 1
TS = pa.timestamp("ms", tz="UTC")

LOG_FIELDS = [
    pa.field("log_path", pa.string(), nullable=False),
    pa.field("log_size", pa.int64(), nullable=False),
    pa.field("log_mtime_ns", pa.int64(), nullable=False),
]

APPS = pa.schema(
    LOG_FIELDS
    + [
        pa.field("app_id", pa.string()),
        pa.field("attempt", pa.string()),
        pa.field("app_name", pa.string()),
        pa.field("user", pa.string()),
        pa.field("spark_version", pa.string()),
        pa.field("start", TS),
        pa.field("end", TS),
        pa.field("duration_s", pa.float64()),
        pa.field("complete", pa.bool_()),
        pa.field("jobs", pa.int64()),
        pa.field("failed_jobs", pa.int64()),
        pa.field("stages", pa.int64()),
        pa.field("stages_completed", pa.int64()),
        pa.field("stages_failed", pa.int64()),
        pa.field("stages_skipped", pa.int64()),
        pa.field("tasks", pa.int64()),
        pa.field("failed_tasks", pa.int64()),
        pa.field("master", pa.string()),
        pa.field("local_mode", pa.bool_()),
        pa.field("executors", pa.int64()),
        pa.field("max_executors_alive", pa.int64()),
        pa.field("executor_cores", pa.int64()),
        pa.field("total_slots", pa.int64()),
        pa.field("task_cpus", pa.int64()),
        pa.field("slot_utilisation", pa.float64()),
        pa.field("task_time_s", pa.float64()),
        pa.field("held_core_hours", pa.float64()),
        pa.field("busy_core_hours", pa.float64()),
        pa.field("wasted_core_hours", pa.float64()),
        pa.field("held_from", pa.string()),
        pa.field("dominant", pa.string()),
        pa.field("bottleneck", pa.string()),
        pa.field("model_error", pa.float64()),
        pa.field("critical_path_s", pa.float64()),
        pa.field("critical_path_gaps_s", pa.float64()),
        pa.field("critical_path_share", pa.float64()),
        pa.field("driver_only_share", pa.float64()),
        pa.field("memory_spill_bytes", pa.int64()),
        pa.field("disk_spill_bytes", pa.int64()),
        pa.field("spill", pa.bool_()),
        pa.field("skewed_stages", pa.int64()),
        pa.field("max_skew", pa.float64()),
        pa.field("skew", pa.bool_()),
        pa.field("findings", pa.int64()),
        pa.field("damaged_records", pa.int64()),
        pa.field("warnings", pa.int64()),
        # The log whose figures count for this application (id, attempt) when another log
        # holds it too (`perfmodel.fleet.summary.mark_duplicates`); null otherwise.
        pa.field("duplicate_of", pa.string()),
    ]
)

STAGES = pa.schema(
    [
        pa.field("log_path", pa.string(), nullable=False),
        pa.field("app_id", pa.string()),
        pa.field("app_name", pa.string()),
        pa.field("stage_id", pa.int64(), nullable=False),
        pa.field("attempt", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("status", pa.string()),
        pa.field("job_ids", pa.list_(pa.int64())),
        pa.field("num_tasks", pa.int64()),
        pa.field("tasks_run", pa.int64()),
        pa.field("failed_tasks", pa.int64()),
        pa.field("duration_s", pa.float64()),
        pa.field("task_time_s", pa.float64()),
    ]
    + [pa.field(f"{c}_s", pa.float64()) for c in COMPONENTS]
    + [pa.field(f"{c}_share", pa.float64()) for c in COMPONENTS]
    + [
        pa.field("cpu_measured", pa.bool_()),
        pa.field("dominant", pa.string()),
        pa.field("median_task_s", pa.float64()),
        pa.field("max_task_s", pa.float64()),
        pa.field("skew", pa.float64()),
        pa.field("stragglers", pa.int64()),
        pa.field("input_bytes", pa.int64()),
        pa.field("output_bytes", pa.int64()),
        pa.field("shuffle_read_bytes", pa.int64()),
        pa.field("shuffle_write_bytes", pa.int64()),
        pa.field("memory_spill_bytes", pa.int64()),
        pa.field("disk_spill_bytes", pa.int64()),
        pa.field("share_of_app", pa.float64()),
        pa.field("important", pa.bool_()),
        pa.field("on_critical_path", pa.bool_()),
        pa.field("summary", pa.string()),
    ]
)

FINDINGS = pa.schema(
    [
        pa.field("log_path", pa.string(), nullable=False),
        pa.field("app_id", pa.string()),
        pa.field("app_name", pa.string()),
        pa.field("finding", pa.int64(), nullable=False),
        pa.field("text", pa.string()),
        pa.field("alert", pa.string()),
        pa.field("where", pa.string()),
        pa.field("knob", pa.string()),
        pa.field("knob_kind", pa.string()),
        pa.field("suggestion", pa.string()),
        pa.field("predicted_s", pa.float64()),
        pa.field("predicted_low_s", pa.float64()),
        pa.field("predicted_high_s", pa.float64()),
        pa.field("baseline_s", pa.float64()),
        pa.field("not_predicted", pa.string()),
    ]
)

PREDICTIONS = pa.schema(
    [
        pa.field("log_path", pa.string(), nullable=False),
        pa.field("app_id", pa.string()),
        pa.field("app_name", pa.string()),
        pa.field("what_if", pa.string(), nullable=False),
        pa.field("executors", pa.int64()),
        pa.field("executor_cores", pa.int64()),
        pa.field("cores", pa.int64()),
        pa.field("memory_bytes", pa.int64()),
        pa.field("observed_s", pa.float64()),
        pa.field("baseline_replay_s", pa.float64()),
        pa.field("predicted_s", pa.float64()),
        pa.field("speedup", pa.float64()),
        pa.field("model_error", pa.float64()),
        pa.field("bottleneck", pa.string()),
        pa.field("error", pa.string()),
    ]
)

ERRORS = pa.schema(
    LOG_FIELDS
    + [
        pa.field("kind", pa.string()),
        pa.field("reason", pa.string()),
    ]
)

MANIFEST = pa.schema(
    LOG_FIELDS
    + [
        pa.field("status", pa.string()),
        pa.field("what_if", pa.string()),
        pa.field("engine", pa.string()),
        pa.field("analysed_at", TS),
    ]
)

REGRESSIONS = pa.schema(
    [
        pa.field("app_name", pa.string(), nullable=False),
        pa.field("scope", pa.string(), nullable=False),
        pa.field("stage_id", pa.int64()),
        pa.field("stage_name", pa.string()),
        pa.field("runs", pa.int64()),
        pa.field("latest_log", pa.string()),
        pa.field("latest_app_id", pa.string()),
        pa.field("latest_s", pa.float64()),
        pa.field("baseline_median_s", pa.float64()),
        pa.field("baseline_mad_s", pa.float64()),
        pa.field("threshold_s", pa.float64()),
        pa.field("growth", pa.float64()),
        pa.field("earlier_app_ids", pa.list_(pa.string())),
    ]
)

RESULT_TABLES: dict[str, pa.Schema] = {
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


def table_from_rows(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows as a table of ``schema``; a missing column is null, an unknown one an error."""
    rows = list(rows)
    names = set(schema.names)
    for row in rows:
        extra = set(row) - names
        if extra:
            raise ValueError(f"columns not in the schema: {sorted(extra)}")
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.table(columns, schema=schema)


def sort_table(table: pa.Table, name: str) -> pa.Table:
    """``table`` in its key order (nulls last), the order every writer uses."""
    keys = SORT_KEYS[name]
    if table.num_rows == 0:
        return table
    return table.sort_by([(k, "ascending") for k in keys])


def spark_schema(schema: pa.Schema) -> Any:
    """The Spark StructType matching a pyarrow schema (only the types used above)."""
    from pyspark.sql import types as T

    def convert(t: pa.DataType) -> Any:
        if pa.types.is_string(t):
            return T.StringType()
        if pa.types.is_int64(t):
            return T.LongType()
        if pa.types.is_float64(t):
            return T.DoubleType()
        if pa.types.is_boolean(t):
            return T.BooleanType()
        if pa.types.is_timestamp(t):
            return T.TimestampType()
        if pa.types.is_list(t):
            return T.ArrayType(convert(t.value_type), True)
        raise TypeError(f"no Spark type for {t}")

    return T.StructType([T.StructField(f.name, convert(f.type), f.nullable) for f in schema])
