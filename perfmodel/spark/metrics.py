"""Spark's own task-metric sums per stage attempt, named and scaled as its REST API does.

`decomposition` splits task time into shares that add up to the wall time; these are the
raw numbers a user sees in the Spark UI (the History Server's ``/stages`` endpoint,
`StageData`), so every figure perfmodel derives can be reconciled with them. Like the
History Server (`AppStatusListener.onTaskEnd` adds each ended attempt's metrics to its
stage), the sums cover every task attempt that ended with metrics, failed and killed
ones included; an attempt's second end (a ``Resubmitted`` map output) adds nothing.
Times are milliseconds except ``executorCpuTime`` and ``shuffleWriteTime``, which Spark
keeps in nanoseconds.
"""

from __future__ import annotations

import numpy as np

from perfmodel.dag.tasks import TaskTable

SPARK_METRICS: tuple[tuple[str, str], ...] = (
    ("executorRunTime", "run_ms"),
    ("executorCpuTime", "cpu_ms"),
    ("executorDeserializeTime", "deserialize_ms"),
    ("resultSerializationTime", "result_serialize_ms"),
    ("jvmGcTime", "gc_ms"),
    ("resultSize", "result_size"),
    ("peakExecutionMemory", "peak_execution_memory"),
    ("memoryBytesSpilled", "memory_spill_bytes"),
    ("diskBytesSpilled", "disk_spill_bytes"),
    ("inputBytes", "input_bytes"),
    ("inputRecords", "input_records"),
    ("outputBytes", "output_bytes"),
    ("outputRecords", "output_records"),
    ("shuffleReadBytes", "shuffle_read_bytes"),
    ("shuffleRemoteBytesRead", "shuffle_remote_read_bytes"),
    ("shuffleLocalBytesRead", ""),
    ("shuffleReadRecords", "shuffle_read_records"),
    ("shuffleFetchWaitTime", "shuffle_fetch_wait_ms"),
    ("shuffleWriteBytes", "shuffle_write_bytes"),
    ("shuffleWriteRecords", "shuffle_write_records"),
    ("shuffleWriteTime", "shuffle_write_ms"),
)
"""REST field name → task column it sums (``shuffleLocalBytesRead`` is read − remote)."""
_NANOSECONDS = {"executorCpuTime", "shuffleWriteTime"}


class SparkMetricColumns:
    """Per-row values in Spark's units for one table, summed per stage or over all."""

    def __init__(self, table: TaskTable) -> None:
        self.table = table
        self.counted = table.ended & table.reported

    def values(self, name: str, column: str) -> np.ndarray:
        """The field's per-row values (made on demand: 21 int64 columns held at once would
        cost as much memory as the task table itself)."""
        raw = self.table.col(column)
        if name in _NANOSECONDS:
            # Stored as ns / 1e6; multiplying back and rounding restores the integer.
            raw = np.rint(raw * 1e6)
        return np.where(self.counted, raw, 0).astype(np.int64)

    def segment_sums(self, starts: np.ndarray, lengths: np.ndarray) -> dict[str, np.ndarray]:
        """Per consecutive row segment (a stage attempt), each REST field's sum."""
        out: dict[str, np.ndarray] = {}
        full = lengths > 0
        for name, column in SPARK_METRICS:
            if not column:
                out[name] = out["shuffleReadBytes"] - out["shuffleRemoteBytesRead"]
                continue
            sums = np.zeros(len(starts), dtype=np.int64)
            if full.any():
                sums[full] = np.add.reduceat(self.values(name, column), starts[full])
            out[name] = sums
        return out

    def sums(self) -> dict[str, int]:
        """The REST API's stage fields summed over every row, in `SPARK_METRICS` order."""
        out: dict[str, int] = {}
        for name, column in SPARK_METRICS:
            if not column:
                out[name] = out["shuffleReadBytes"] - out["shuffleRemoteBytesRead"]
            else:
                out[name] = int(self.values(name, column).sum())
        return out
