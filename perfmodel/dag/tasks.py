"""Task attempts in columnar form: one numpy array per field, one row per task attempt.

A log of 200k tasks held as `TaskRun` objects costs two Python objects per task and a
Python loop for every figure computed from them; as columns it costs a few bytes per
field, and the decomposition, skew, byte sums, concurrency and the replay's inputs are
array operations. The builder fills one `TaskColumns` for the whole application (rows
grouped by stage attempt, in launch order inside each); a stage's `TaskTable` is a row
range of it. `TaskRun` objects are made on demand (`TaskTable.runs`) for the cold paths
that want one object per task (sample attribution, experiments, tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(slots=True)
class TaskMetrics:
    """Measured components of one task attempt's time and the data it moved.

    These are the metrics a dataflow engine measures for itself; they form the
    *measured* decomposition that code-inferred resource vectors are checked against.
    Missing metrics (older engines) stay 0 and `has_cpu_time` tells whether CPU time
    was measured at all, so a 0 is never mistaken for "no CPU used".
    """

    reported: bool = True
    """False when the engine reported no metrics for the attempt (e.g. its executor was
    lost): its time cannot be broken down at all."""
    run_ms: float = 0.0
    cpu_ms: float = 0.0
    has_cpu_time: bool = False
    deserialize_ms: float = 0.0
    result_serialize_ms: float = 0.0
    gc_ms: float = 0.0
    shuffle_fetch_wait_ms: float = 0.0
    shuffle_write_ms: float = 0.0
    input_bytes: int = 0
    input_records: int = 0
    output_bytes: int = 0
    output_records: int = 0
    shuffle_read_bytes: int = 0
    shuffle_remote_read_bytes: int = 0
    shuffle_read_records: int = 0
    shuffle_write_bytes: int = 0
    shuffle_write_records: int = 0
    memory_spill_bytes: int = 0
    disk_spill_bytes: int = 0
    peak_execution_memory: int = 0
    result_size: int = 0


@dataclass(slots=True)
class TaskRun:
    """One attempt of one task on one executor slot."""

    task_id: int
    index: int
    attempt: int
    stage_id: int
    stage_attempt: int
    executor_id: str
    host: str
    launch_ms: float
    finish_ms: float | None = None
    getting_result_ms: float = 0.0
    status: str = "RUNNING"
    """SUCCESS, FAILED, KILLED, RESUBMITTED, RUNNING (never ended: log cut off)."""
    failure_reason: str | None = None
    locality: str = ""
    speculative: bool = False
    resubmitted: bool = False
    """Succeeded, but its output was lost with its executor and the task re-run."""
    task_type: str = ""
    metrics: TaskMetrics = field(default_factory=TaskMetrics)

    @property
    def duration_ms(self) -> float:
        """Wall time on the slot; 0 for a task that never ended."""
        if self.finish_ms is None:
            return 0.0
        return max(0.0, self.finish_ms - self.launch_ms)

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCESS"


FLOAT_FIELDS: tuple[str, ...] = (
    "launch_ms",
    "finish_ms",
    "getting_result_ms",
    "run_ms",
    "cpu_ms",
    "deserialize_ms",
    "result_serialize_ms",
    "gc_ms",
    "shuffle_fetch_wait_ms",
    "shuffle_write_ms",
)
"""float64 columns; ``finish_ms`` is NaN for a task that never ended."""
INT_FIELDS: tuple[str, ...] = (
    "task_id",
    "index",
    "attempt",
    "input_bytes",
    "input_records",
    "output_bytes",
    "output_records",
    "shuffle_read_bytes",
    "shuffle_remote_read_bytes",
    "shuffle_read_records",
    "shuffle_write_bytes",
    "shuffle_write_records",
    "memory_spill_bytes",
    "disk_spill_bytes",
    "peak_execution_memory",
    "result_size",
)
"""int64 columns."""
BOOL_FIELDS: tuple[str, ...] = ("reported", "has_cpu_time", "speculative", "resubmitted")
CODE_FIELDS: tuple[str, ...] = ("status", "executor", "host", "locality", "task_type")
"""int32 codes into `TaskColumns.strings[name]`."""
METRIC_FIELDS: tuple[str, ...] = (
    "run_ms",
    "cpu_ms",
    "deserialize_ms",
    "result_serialize_ms",
    "gc_ms",
    "shuffle_fetch_wait_ms",
    "shuffle_write_ms",
) + INT_FIELDS[3:]
"""The `TaskMetrics` fields (besides the two flags) that are columns of the same name."""

STATUSES: tuple[str, ...] = ("SUCCESS", "FAILED", "KILLED", "RESUBMITTED", "RUNNING")
"""Status codes: index in this tuple (fixed, so code 0 always means SUCCESS)."""
SUCCESS, RUNNING = 0, 4
ALL_FIELDS: tuple[str, ...] = FLOAT_FIELDS + INT_FIELDS + BOOL_FIELDS + CODE_FIELDS
_DTYPES = (
    {f: np.float64 for f in FLOAT_FIELDS}
    | {f: np.int64 for f in INT_FIELDS}
    | {f: np.bool_ for f in BOOL_FIELDS}
    | {f: np.int32 for f in CODE_FIELDS}
)


@dataclass(slots=True)
class TaskColumns:
    """The columns of a set of task attempts (the whole application, for a built profile)."""

    arrays: dict[str, np.ndarray]
    strings: dict[str, list[str]]
    """Code → text for each of `CODE_FIELDS` (``status`` is `STATUSES`)."""
    stage_id: np.ndarray
    stage_attempt: np.ndarray
    failure_reasons: dict[int, str] = field(default_factory=dict)
    """Row → failure reason, for the rows of tasks that did not succeed."""

    def __len__(self) -> int:
        return len(self.stage_id)

    @classmethod
    def empty(cls) -> TaskColumns:
        return cls(
            arrays={f: np.zeros(0, dtype=_DTYPES[f]) for f in ALL_FIELDS},
            strings={f: (list(STATUSES) if f == "status" else []) for f in CODE_FIELDS},
            stage_id=np.zeros(0, dtype=np.int64),
            stage_attempt=np.zeros(0, dtype=np.int64),
        )

    @classmethod
    def from_runs(cls, runs: Sequence[TaskRun]) -> TaskColumns:
        """Columns of hand-built or materialised task runs (tests, synthetic profiles)."""
        n = len(runs)
        arrays: dict[str, np.ndarray] = {}
        for name in ("launch_ms", "getting_result_ms"):
            arrays[name] = np.fromiter((getattr(t, name) for t in runs), np.float64, n)
        arrays["finish_ms"] = np.fromiter(
            (np.nan if t.finish_ms is None else t.finish_ms for t in runs), np.float64, n
        )
        for name in ("task_id", "index", "attempt"):
            arrays[name] = np.fromiter((getattr(t, name) for t in runs), np.int64, n)
        for name in METRIC_FIELDS:
            dtype = _DTYPES[name]
            arrays[name] = np.fromiter((getattr(t.metrics, name) for t in runs), dtype, n)
        arrays["reported"] = np.fromiter((t.metrics.reported for t in runs), np.bool_, n)
        arrays["has_cpu_time"] = np.fromiter((t.metrics.has_cpu_time for t in runs), np.bool_, n)
        arrays["speculative"] = np.fromiter((t.speculative for t in runs), np.bool_, n)
        arrays["resubmitted"] = np.fromiter((t.resubmitted for t in runs), np.bool_, n)
        strings: dict[str, list[str]] = {"status": list(STATUSES)}
        codes = {s: i for i, s in enumerate(STATUSES)}
        arrays["status"] = np.fromiter(
            (codes.setdefault(t.status, len(codes)) for t in runs), np.int32, n
        )
        strings["status"] = list(codes)
        for name, attr in (
            ("executor", "executor_id"),
            ("host", "host"),
            ("locality", "locality"),
            ("task_type", "task_type"),
        ):
            table: dict[str, int] = {}
            arrays[name] = np.fromiter(
                (table.setdefault(getattr(t, attr), len(table)) for t in runs), np.int32, n
            )
            strings[name] = list(table)
        return cls(
            arrays=arrays,
            strings=strings,
            stage_id=np.fromiter((t.stage_id for t in runs), np.int64, n),
            stage_attempt=np.fromiter((t.stage_attempt for t in runs), np.int64, n),
            failure_reasons={
                i: t.failure_reason for i, t in enumerate(runs) if t.failure_reason is not None
            },
        )


class TaskTable:
    """The task attempts of one stage attempt (or of a whole application): rows
    ``lo:hi`` of a `TaskColumns`. Column access (``table.launch_ms``) returns a view."""

    __slots__ = ("columns", "lo", "hi")

    def __init__(self, columns: TaskColumns, lo: int = 0, hi: int | None = None) -> None:
        self.columns = columns
        self.lo = lo
        self.hi = len(columns) if hi is None else hi

    @classmethod
    def empty(cls) -> TaskTable:
        return cls(_EMPTY, 0, 0)

    @classmethod
    def from_runs(cls, runs: Iterable[TaskRun]) -> TaskTable:
        runs = list(runs)
        return cls(TaskColumns.from_runs(runs)) if runs else cls.empty()

    def __len__(self) -> int:
        return self.hi - self.lo

    def col(self, name: str) -> np.ndarray:
        return self.columns.arrays[name][self.lo : self.hi]

    def __getattr__(self, name: str) -> np.ndarray:
        arrays = self.columns.arrays
        if name in arrays:
            return arrays[name][self.lo : self.hi]
        raise AttributeError(name)

    @property
    def ended(self) -> np.ndarray:
        """Rows (as a mask) of attempts that ended: the ones every figure is made of."""
        return ~np.isnan(self.col("finish_ms"))

    def ended_values(self, name: str) -> np.ndarray:
        """A column's values of the attempts that ended: an attempt the log cut off has no
        figures (its bytes and records read, written, shuffled)."""
        return self.col(name)[self.ended]

    def total(self, *names: str) -> float:
        """The sum of columns over the attempts that ended (`ended_values`)."""
        ended = self.ended
        return float(sum(float(self.col(name)[ended].sum()) for name in names))

    @property
    def duration_ms(self) -> np.ndarray:
        """Wall time on the slot per attempt; 0 for one that never ended."""
        d = self.col("finish_ms") - self.col("launch_ms")
        return np.where(np.isnan(d), 0.0, np.maximum(d, 0.0))

    @property
    def succeeded(self) -> np.ndarray:
        return self.col("status") == SUCCESS

    def strings_of(self, name: str) -> list[str]:
        """Per row, the text of a coded column (executor, host, ...)."""
        table = self.columns.strings[name]
        return [table[c] for c in self.col(name).tolist()]

    def runs(self) -> list[TaskRun]:
        """The rows as `TaskRun` objects (cold paths only: two objects per task)."""
        c = self.columns
        a = c.arrays
        lo, hi = self.lo, self.hi
        cols = {name: a[name][lo:hi].tolist() for name in ALL_FIELDS}
        strings = c.strings
        stage_ids = c.stage_id[lo:hi].tolist()
        stage_attempts = c.stage_attempt[lo:hi].tolist()
        out: list[TaskRun] = []
        for i in range(hi - lo):
            finish = cols["finish_ms"][i]
            metrics = TaskMetrics(
                reported=cols["reported"][i], has_cpu_time=cols["has_cpu_time"][i]
            )
            for name in METRIC_FIELDS:
                setattr(metrics, name, cols[name][i])
            out.append(
                TaskRun(
                    task_id=cols["task_id"][i],
                    index=cols["index"][i],
                    attempt=cols["attempt"][i],
                    stage_id=stage_ids[i],
                    stage_attempt=stage_attempts[i],
                    executor_id=strings["executor"][cols["executor"][i]],
                    host=strings["host"][cols["host"][i]],
                    launch_ms=cols["launch_ms"][i],
                    finish_ms=None if finish != finish else finish,
                    getting_result_ms=cols["getting_result_ms"][i],
                    status=strings["status"][cols["status"][i]],
                    failure_reason=c.failure_reasons.get(lo + i),
                    locality=strings["locality"][cols["locality"][i]],
                    speculative=cols["speculative"][i],
                    resubmitted=cols["resubmitted"][i],
                    task_type=strings["task_type"][cols["task_type"][i]],
                    metrics=metrics,
                )
            )
        return out


_EMPTY = TaskColumns.empty()


def concat_tables(tables: Sequence[TaskTable]) -> TaskTable:
    """One table of the rows of ``tables`` in order; a view when they are consecutive
    ranges of one `TaskColumns` (a built profile), else a copy with codes re-encoded."""
    tables = [t for t in tables if len(t)]
    if not tables:
        return TaskTable.empty()
    first = tables[0].columns
    if all(t.columns is first for t in tables) and all(
        a.hi == b.lo for a, b in zip(tables, tables[1:], strict=False)
    ):
        return TaskTable(first, tables[0].lo, tables[-1].hi)
    arrays: dict[str, np.ndarray] = {}
    strings: dict[str, list[str]] = {}
    for name in FLOAT_FIELDS + INT_FIELDS + BOOL_FIELDS:
        arrays[name] = np.concatenate([t.col(name) for t in tables])
    for name in CODE_FIELDS:
        table: dict[str, int] = {s: i for i, s in enumerate(STATUSES)} if name == "status" else {}
        parts = []
        for t in tables:
            remap = np.array(
                [table.setdefault(s, len(table)) for s in t.columns.strings[name]] or [0],
                dtype=np.int32,
            )
            parts.append(remap[t.col(name)])
        arrays[name] = np.concatenate(parts)
        strings[name] = list(table)
    reasons: dict[int, str] = {}
    offset = 0
    for t in tables:
        for row, text in t.columns.failure_reasons.items():
            if t.lo <= row < t.hi:
                reasons[offset + row - t.lo] = text
        offset += len(t)
    columns = TaskColumns(
        arrays=arrays,
        strings=strings,
        stage_id=np.concatenate([t.columns.stage_id[t.lo : t.hi] for t in tables]),
        stage_attempt=np.concatenate([t.columns.stage_attempt[t.lo : t.hi] for t in tables]),
        failure_reasons=reasons,
    )
    return TaskTable(columns)
