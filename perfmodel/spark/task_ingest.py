"""Task attempts folded from events into columns while a log is read.

Each ended task attempt becomes one row of numbers packed onto a `bytearray` of float64s
in a single C call (`struct`, a third of what `array.extend` costs on a tuple of mixed
ints and floats; no object kept), so memory grows by ~300 bytes a task
and never by a Python object per task; `finish` sorts the rows by stage attempt and
launch time and splits them into typed numpy columns (`perfmodel.dag.tasks`). Values are
checked there, vectorised: numbers outside any physical range are clamped and counted,
attempts that end before they start are clamped to zero length and counted, and a second
end of an attempt that already ended is counted as a duplicate and dropped (a lost map
output's ``Resubmitted`` end is Spark's own, not a duplicate).
"""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Callable

import numpy as np

from perfmodel.dag.model import StageNode
from perfmodel.dag.tasks import (
    BOOL_FIELDS,
    CODE_FIELDS,
    FLOAT_FIELDS,
    INT_FIELDS,
    METRIC_FIELDS,
    STATUSES,
    TaskColumns,
    TaskTable,
)
from perfmodel.profile.quality import DataQuality
from perfmodel.spark import events as ev

MAX_VALUE = float(1 << 53)
"""Largest count, size or time kept (exact in float64: 9 PB, 285 years of ms); larger
values (a 400-digit number in a damaged line) are clamped to it and counted."""

_STATUS = {
    "Success": STATUSES.index("SUCCESS"),
    "TaskKilled": STATUSES.index("KILLED"),
    "TaskKilledException": STATUSES.index("KILLED"),
    "Resubmitted": STATUSES.index("RESUBMITTED"),
}
_FAILED = STATUSES.index("FAILED")
_RUNNING = STATUSES.index("RUNNING")
_RESUBMITTED = STATUSES.index("RESUBMITTED")
_SUCCESS = STATUSES.index("SUCCESS")

# Row layout: every column of `TaskColumns` plus the stage attempt's code, as float64.
ROW: tuple[str, ...] = (
    "stage",
    "task_id",
    "index",
    "attempt",
    "launch_ms",
    "finish_ms",
    "getting_result_ms",
    "status",
    "executor",
    "host",
    "locality",
    "task_type",
    "speculative",
    "resubmitted",
    "reported",
    "has_cpu_time",
) + METRIC_FIELDS  # the measured values, in `TaskMetrics` order
K = len(ROW)
_PACK = struct.Struct(f"{K}d").pack
_ROW_BYTES = 8 * K
COL = {name: i for i, name in enumerate(ROW)}
_FIRST_VALUE = COL["run_ms"]
"""Columns from here on are measured values: range-checked (≥ 0, ≤ `MAX_VALUE`)."""
_STATUS_COL, _FINISH_COL, _RESUB_COL = COL["status"], COL["finish_ms"], COL["resubmitted"]
_FIRST_ID = COL["task_id"]
"""Columns task_id … getting_result_ms are range-checked too."""
_NO_METRICS = (0.0, 0.0) + (0.0,) * (K - _FIRST_VALUE)
CHUNK_ROWS = 16384
"""Rows per chunk: `finish` turns one chunk at a time into columns and frees it, so the
rows and the columns are never both whole in memory."""
SPAN_SLACK_MS = 1000.0
"""How far outside the application's own span (start to end event) a task's launch or
finish may lie before it is damage: the driver stamps both with the same clock, so real
logs stay inside it (the shared real logs: by 4 ms at most)."""
_TIME_METRICS: tuple[str, ...] = (
    "run_ms",
    "cpu_ms",
    "deserialize_ms",
    "result_serialize_ms",
    "gc_ms",
    "shuffle_fetch_wait_ms",
    "shuffle_write_ms",
)
"""Times measured inside one task attempt: none can exceed its wall time (launch to
finish) by more than `SPAN_SLACK_MS` (the shared real logs never exceed it at all)."""
_TIME_COLS = [COL[name] for name in _TIME_METRICS]

_DENSE_IDS = 1 << 26
"""Task ids below this find their row through a flat array; others (damage) a dict."""

_NO_SHUFFLE_READ = ev.ShuffleReadJson()
_NO_SHUFFLE_WRITE = ev.ShuffleWriteJson()
_NO_INPUT = ev.InputJson()
_NO_OUTPUT = ev.OutputJson()


def _metric_values(m: ev.TaskMetricsJson | None) -> tuple:
    """reported, has_cpu_time and the measured values, in `ROW` order (raw: unchecked)."""
    if m is None:
        return _NO_METRICS
    sr = m.shuffle_read or _NO_SHUFFLE_READ
    sw = m.shuffle_write or _NO_SHUFFLE_WRITE
    inp = m.input or _NO_INPUT
    out = m.output or _NO_OUTPUT
    cpu_ns = m.cpu_time_ns
    remote = sr.remote_bytes
    return (
        1.0,
        0.0 if cpu_ns is None else 1.0,
        m.run_time,
        0.0 if cpu_ns is None else _per_million(cpu_ns),
        m.deserialize_time,
        m.result_serialization_time,
        m.gc_time,
        sr.fetch_wait,
        _per_million(sw.write_time_ns),
        inp.bytes_read,
        inp.records,
        out.bytes_written,
        out.records,
        remote + sr.local_bytes,
        remote,
        sr.records,
        sw.bytes_written,
        sw.records,
        m.memory_spilled,
        m.disk_spilled,
        m.peak_execution_memory,
        m.result_size,
    )


def as_float(value: object) -> float:
    """A number of any size as a float; one too large for a float becomes ±inf, which the
    range check in `TaskAccumulator.finish` then clamps and counts."""
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


def _per_million(value: int) -> float:
    try:
        return value / 1e6
    except OverflowError:
        return math.inf if value > 0 else -math.inf


class TaskAccumulator:
    """The builder's task state: ended attempts as rows, running ones as their start event."""

    def __init__(self, quality: DataQuality, on_new_stage: Callable[[int, int], object]) -> None:
        self.quality = quality
        self.on_new_stage = on_new_stage
        """Called with (stage id, attempt) when a task of a stage attempt is first seen."""
        self.rows = bytearray()
        """The rows since the last full chunk (float64s); full ones wait in `chunks`."""
        self.chunks: list[bytearray | None] = []
        self._done_rows = 0
        """Rows in `chunks`."""
        self.stage_keys: list[tuple[int, int]] = []
        self._stage_code: dict[tuple[int, int], int] = {}
        self._codes: dict[str, dict[str, int]] = {n: {} for n in CODE_FIELDS if n != "status"}
        self.failure_reasons: dict[int, str] = {}
        self._row_of_dense = array("q")
        self._row_of_sparse: dict[int, int] = {}
        self.started: dict[int, ev.TaskStart] = {}
        """Task id → start event of attempts whose end has not been seen (yet)."""
        self.task_end_events = 0
        self.task_end_reasons: dict[str, int] = {}
        self.out_of_range = 0
        self.span: tuple[float | None, float | None] = (None, None)

    def __len__(self) -> int:
        return self._done_rows + len(self.rows) // _ROW_BYTES

    def _row_buffer(self, row: int) -> tuple[bytearray, int]:
        """The chunk holding global ``row`` and the row's offset (in values) in it."""
        if row >= self._done_rows:
            return self.rows, (row - self._done_rows) * K
        chunk = self.chunks[row // CHUNK_ROWS]
        assert chunk is not None
        return chunk, (row % CHUNK_ROWS) * K

    # -- ingest --------------------------------------------------------------------------

    def start(self, e: ev.TaskStart) -> None:
        # Kept as the small decoded event until the task ends (its end event repeats the
        # task info): only running tasks wait here.
        self.started[e.task_info.task_id] = e

    def _code(self, kind: str, text: str) -> int:
        table = self._codes[kind]
        code = table.get(text)
        if code is None:
            code = table[text] = len(table)
        return code

    def _stage(self, key: tuple[int, int]) -> int:
        code = self._stage_code.get(key)
        if code is None:
            code = self._stage_code[key] = len(self.stage_keys)
            self.stage_keys.append(key)
            self.on_new_stage(*key)
        return code

    def _row_of(self, task_id: int) -> int:
        if 0 <= task_id < len(self._row_of_dense):
            return self._row_of_dense[task_id]
        return self._row_of_sparse.get(task_id, -1)

    def _remember(self, task_id: int, row: int) -> None:
        dense = self._row_of_dense
        if 0 <= task_id < _DENSE_IDS:
            if task_id >= len(dense):
                dense.extend([-1] * max(task_id + 1 - len(dense), len(dense), 1024))
            dense[task_id] = row
        else:
            self._row_of_sparse[task_id] = row

    def end(self, e: ev.TaskEnd, reason_text: str | None) -> float:
        """Fold one TaskEnd; returns its finish time (0 if none) for the log's clock.

        ``reason_text`` is the failure text (None for a success), made by the caller.
        """
        info = e.task_info
        task_id = info.task_id
        self.started.pop(task_id, None)
        reason = e.reason.reason or "Unknown"
        status = _STATUS.get(reason, _FAILED)
        finish = info.finish_time
        row = self._row_of(task_id)
        if row >= 0:
            buffer, base = self._row_buffer(row)
            rows = memoryview(buffer).cast("d")  # released below: the buffer must stay growable
            resubmit = status == _RESUBMITTED and not rows[base + _RESUB_COL]
            if resubmit:
                # Spark reports a lost map output as a second end of the same, already
                # successful attempt; the work was done once, so its timing is kept.
                if rows[base + _FINISH_COL] == rows[base + _FINISH_COL]:
                    rows[base + _RESUB_COL] = 1.0
                else:
                    rows[base + _STATUS_COL] = float(_RESUBMITTED)
            rows.release()
            if resubmit:
                self._count_end(reason)
                return finish or 0.0
            self.quality.add("duplicate_event", f"TaskEnd of task {task_id} repeated")
            return 0.0
        self._count_end(reason)
        if status != _SUCCESS and reason_text is not None:
            self.failure_reasons[len(self)] = reason_text
        self._remember(task_id, len(self))
        head = (
            self._stage((e.stage_id, e.stage_attempt)),
            task_id,
            info.index,
            info.attempt,
            info.launch_time,
            finish if finish else np.nan,
            info.getting_result_time,
            status,
            self._code("executor", info.executor_id),
            self._code("host", info.host),
            self._code("locality", info.locality),
            self._code("task_type", e.task_type),
            info.speculative,
            0.0,
        )
        self._append(head, _metric_values(e.metrics))
        return finish or 0.0

    def _count_end(self, reason: str) -> None:
        self.task_end_events += 1
        reasons = self.task_end_reasons
        reasons[reason] = reasons.get(reason, 0) + 1

    def _append(self, head: tuple, values: tuple) -> None:
        rows = self.rows
        try:
            rows += _PACK(*head, *values)
        except (OverflowError, struct.error):  # an integer too large for a float (damage):
            rows += _PACK(*[as_float(v) for v in head + values])  # ±inf, clamped later
        if len(rows) >= CHUNK_ROWS * _ROW_BYTES:
            self.chunks.append(rows)
            self._done_rows += CHUNK_ROWS
            self.rows = bytearray()

    def never_ended(self) -> None:
        """Rows for attempts that started but never ended (the log stops mid-task)."""
        for e in self.started.values():
            info = e.task_info
            if self._row_of(info.task_id) >= 0:
                continue  # its start came after its end: it ended
            head = (
                self._stage((e.stage_id, e.stage_attempt)),
                info.task_id,
                info.index,
                info.attempt,
                info.launch_time,
                np.nan,
                0.0,
                _RUNNING,
                self._code("executor", info.executor_id),
                self._code("host", info.host),
                self._code("locality", info.locality),
                self._code("task_type", ""),
                info.speculative,
                0.0,
            )
            self._append(head, (1.0,) + (0.0,) * (K - _FIRST_VALUE + 1))
        self.started.clear()

    # -- finishing -----------------------------------------------------------------------

    def finish(
        self,
        stages: dict[tuple[int, int], StageNode],
        span: tuple[float | None, float | None] = (None, None),
    ) -> TaskColumns:
        """Sort the rows into stage attempts (in ``stages`` order, then launch time and task
        id), check their values, and give every stage attempt its `TaskTable`.

        ``span`` is the application's start and end (None where the log does not say):
        task times outside it, and times measured inside a task longer than the task ran,
        are clamped and counted (``out_of_range_value``)."""
        self.span = span
        n = len(self)
        position = {key: i for i, key in enumerate(stages)}
        stage_pos = np.array([position[k] for k in self.stage_keys] or [0], dtype=np.int64)
        if n == 0:
            columns = TaskColumns.empty()
            for stage in stages.values():
                stage.table = TaskTable(columns, 0, 0)
            return columns
        if len(self.rows):
            self.chunks.append(self.rows)
        self.rows = bytearray()
        dtypes: dict[str, type[np.generic]] = {name: np.float64 for name in FLOAT_FIELDS}
        dtypes |= {name: np.int64 for name in INT_FIELDS}
        dtypes |= {name: np.bool_ for name in BOOL_FIELDS}
        dtypes |= {name: np.int32 for name in CODE_FIELDS}
        dtypes["stage"] = np.int64
        arrays: dict[str, np.ndarray] = {name: np.empty(n, dtype=t) for name, t in dtypes.items()}
        lo = 0
        for i, chunk in enumerate(self.chunks):
            assert chunk is not None
            data = np.frombuffer(chunk, dtype=np.float64).reshape(-1, K)
            clamped = self._check_values(data)
            self._check_times(data, clamped)
            hi = lo + len(data)
            for name, column in arrays.items():
                column[lo:hi] = (
                    data[:, COL[name]] != 0.0 if column.dtype == np.bool_ else data[:, COL[name]]
                )
            del data
            self.chunks[i] = None  # this chunk is columns now: free it
            lo = hi
        self.chunks = []
        pos = stage_pos[arrays["stage"]]
        order = np.lexsort((arrays["task_id"], arrays["launch_ms"], pos))
        pos = pos[order]
        for name in list(arrays):
            arrays[name] = arrays[name][order]  # one column at a time: one copy at a time
        keys = np.array(self.stage_keys, dtype=np.int64).reshape(-1, 2)
        codes = arrays.pop("stage")
        stage_id, stage_attempt = keys[codes, 0], keys[codes, 1]
        del codes
        new_row = np.empty(n, dtype=np.int64)
        new_row[order] = np.arange(n)
        strings = {name: list(table) for name, table in self._codes.items()}
        strings["status"] = list(STATUSES)
        columns = TaskColumns(
            arrays=arrays,
            strings=strings,
            stage_id=stage_id,
            stage_attempt=stage_attempt,
            failure_reasons={int(new_row[r]): t for r, t in self.failure_reasons.items()},
        )
        bounds = np.searchsorted(pos, np.arange(len(stages) + 1))
        for i, stage in enumerate(stages.values()):
            stage.table = TaskTable(columns, int(bounds[i]), int(bounds[i + 1]))
        return columns

    def _check_values(self, data: np.ndarray) -> np.ndarray:
        """Clamp (in place) what no real run can produce, and count it; returns which
        cells were clamped (so no later check counts them again)."""
        clamped = np.zeros(data.shape, dtype=bool)
        for lo, hi in ((_FIRST_ID, _FINISH_COL + 2), (_FIRST_VALUE, K)):
            values = data[:, lo:hi]
            bad = (values < 0) | (values > MAX_VALUE)  # NaN (never ended) is neither
            clamped[:, lo:hi] = bad
            n_bad = int(bad.sum())
            if n_bad:
                row = int(np.argmax(bad.any(axis=1)))
                self.quality.add("out_of_range_value", f"task {int(data[row, 1])}", n_bad)
                self.out_of_range += n_bad
                np.clip(values, 0.0, MAX_VALUE, out=values)
        finish = data[:, _FINISH_COL]
        launch = data[:, COL["launch_ms"]]
        backwards = finish < launch
        n_back = int(backwards.sum())
        if n_back:
            first = int(data[np.argmax(backwards), COL["task_id"]])
            self.quality.add("impossible_times", f"task {first} ends before it starts", n_back)
            data[backwards, _FINISH_COL] = launch[backwards]
        return clamped

    def _check_times(self, data: np.ndarray, clamped: np.ndarray) -> None:
        """Clamp (in place) task times outside the application's span, then times measured
        inside a task that exceed its wall time, and count them (vectorised, per chunk).

        A task finishing an hour after the application ended, or in the year 9999, would
        otherwise make the slots "busy 2775%"; one task's GC time of 10⁹ ms would outweigh
        every other task's in the application's decomposition and its CPU floor.
        """
        start, end = self.span
        launch = data[:, COL["launch_ms"]]
        finish = data[:, _FINISH_COL]
        bad = np.zeros(len(data), dtype=bool)
        if start is not None:
            lo = start - SPAN_SLACK_MS
            for column in (launch, finish):
                early = column < lo
                if early.any():
                    bad |= early
                    column[early] = start
        if end is not None:
            hi = end + SPAN_SLACK_MS
            for column in (launch, finish):
                late = column > hi  # NaN (never ended) is not
                if late.any():
                    bad |= late
                    column[late] = end
        bad &= ~(clamped[:, COL["launch_ms"]] | clamped[:, _FINISH_COL])
        n_bad = int(bad.sum())
        if n_bad:
            first = int(data[np.argmax(bad), 1])
            self.quality.add(
                "out_of_range_value", f"task {first} runs outside the application's span", n_bad
            )
            self.out_of_range += n_bad
        wall = np.maximum(finish - launch, 0.0)  # NaN for attempts that never ended
        metrics = data[:, _TIME_COLS]
        over = metrics > (wall + SPAN_SLACK_MS)[:, None]
        n_over = int((over & ~clamped[:, _TIME_COLS]).sum())
        if over.any():
            data[:, _TIME_COLS] = np.where(over, wall[:, None], metrics)
        if n_over:
            row = int(np.argmax(over.any(axis=1)))
            self.quality.add(
                "out_of_range_value",
                f"task {int(data[row, 1])} has a time metric longer than the task ran",
                n_over,
            )
            self.out_of_range += n_over
