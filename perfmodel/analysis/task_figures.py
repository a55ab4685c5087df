"""Every stage's task figures at once, from the application's task table.

Each stage attempt is a consecutive row range of the profile's task table, so sums,
counts and sorted durations for all stages are a handful of array operations
(segment sums, one sort), not a few dozen per stage: a 20,000-stage log must not spend
its time in per-stage numpy calls. The float sums are added task by task in row order,
as the per-task loop did, so every figure is the same to the last bit.
"""

from __future__ import annotations

import numpy as np

from perfmodel.dag import segments
from perfmodel.dag.decomposition import COMPONENTS, TimeDecomposition, decompose_table
from perfmodel.dag.model import ApplicationProfile
from perfmodel.dag.tasks import SUCCESS
from perfmodel.spark.metrics import SparkMetricColumns

BYTE_FIELDS = (
    "input_bytes",
    "output_bytes",
    "shuffle_read_bytes",
    "shuffle_write_bytes",
    "memory_spill_bytes",
    "disk_spill_bytes",
)


def segment_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sum of each consecutive segment of ``values`` (segments cover it in order; empty
    ones sum to 0, which `np.add.reduceat` alone gets wrong)."""
    out = np.zeros(len(starts), dtype=values.dtype)
    full = lengths > 0
    if full.any():
        out[full] = np.add.reduceat(values, starts[full])
    return out


class TaskFigures:
    """Every stage's task figures, computed for all stages at once from the application's
    task table (each stage attempt a consecutive row range of it), so a log with 20,000
    stages costs a handful of array operations, not a few dozen per stage."""

    def __init__(self, profile: ApplicationProfile) -> None:
        table = profile.task_table()
        self.table = table
        self.parts = parts = decompose_table(table)
        self.durations = durations = table.duration_ms
        self.spark = SparkMetricColumns(table)
        keys = list(profile.stages)
        lengths = np.array([len(s.table) for s in profile.stages.values()], dtype=np.int64)
        starts = (np.cumsum(lengths) - lengths).astype(np.int64)
        self.index = {key: i for i, key in enumerate(keys)}
        self.bounds = (starts, lengths)
        stage_of_row = np.repeat(np.arange(len(keys)), lengths)
        ended = parts.ended
        succeeded = ended & (table.col("status") == SUCCESS)
        self.tasks_run = np.bincount(stage_of_row[ended], minlength=len(keys))
        self.succeeded = np.bincount(stage_of_row[succeeded], minlength=len(keys))
        self.cpu_measured = np.bincount(stage_of_row[parts.cpu_measured], minlength=len(keys))
        self.bytes = {
            name: segment_sums(np.where(ended, table.col(name), 0), starts, lengths)
            for name in BYTE_FIELDS
        }
        self.metric_sums = self.spark.segment_sums(starts, lengths)
        # The components as one matrix (zeros where an attempt never ended: adding 0.0
        # leaves a float sum unchanged, so per-stage sums equal the per-task loop's).
        self.components = np.vstack([parts.component(name) for name in COMPONENTS])
        # Successful attempts' durations sorted within each stage, stage after stage.
        rows = np.flatnonzero(succeeded)
        order = np.lexsort((durations[rows], stage_of_row[rows]))
        self.sorted_durations = durations[rows][order]
        counts = self.succeeded
        self.duration_starts = (np.cumsum(counts) - counts).astype(np.int64)

    def stage_component_sums(self) -> np.ndarray:
        """Every stage's summed components (rows in `COMPONENTS` order, one column a stage;
        zeros where no attempt ended): what `total` gives one stage, for all at once."""
        sums = segments.segment_sums(self.components, *self.bounds, like="cumsum")
        sums[:, self.tasks_run == 0] = 0.0
        return sums

    def total(self, i: int) -> TimeDecomposition:
        lo, n = int(self.bounds[0][i]), int(self.bounds[1][i])
        out = TimeDecomposition()
        if n == 0 or self.tasks_run[i] == 0:
            return out
        sums = np.cumsum(self.components[:, lo : lo + n], axis=1)[:, -1].tolist()
        for name, value in zip(COMPONENTS, sums, strict=True):
            setattr(out, name, value)
        out.cpu_measured = bool(self.cpu_measured[i])
        return out

    def successful_durations(self, i: int) -> list[float]:
        lo = int(self.duration_starts[i])
        return self.sorted_durations[lo : lo + int(self.succeeded[i])].tolist()


def median_of_sorted(sorted_values: list[float]) -> float:
    """`statistics.median` of values already sorted (the same arithmetic)."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    i = n // 2
    return sorted_values[i] if n % 2 else (sorted_values[i - 1] + sorted_values[i]) / 2
