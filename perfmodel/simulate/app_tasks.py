"""The application's tasks as one table, decomposed once, with each stage's row range.

Both the workload compiler (milestones, observed lags) and the per-stage work split
(`perfmodel.simulate.stage_work`) read every stage's tasks; decomposing the whole table once
and keeping each stage's rows and first/last times as arrays is what keeps compiling a
many-job log (thousands of stages of a few tasks) linear and cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from perfmodel.dag.decomposition import TaskDecompositions, decompose_table
from perfmodel.dag.model import ApplicationProfile, StageKey, StageNode
from perfmodel.dag.tasks import TaskTable


@dataclass(slots=True)
class AppTasks:
    """The application's tasks as one table, decomposed once, with each stage's rows and
    the per-stage figures the compiler needs, computed for all stages at once (a many-job
    log has thousands of stages of a few tasks: a dozen numpy calls per stage was most of
    its compile time)."""

    table: TaskTable
    parts: TaskDecompositions
    rows: dict[StageKey, tuple[int, int]]
    position: dict[StageKey, int]
    """Stage attempt → its index in the per-stage lists below (profile order)."""
    first_launch: list[float]
    """Earliest launch of the stage's attempts (NaN without any)."""
    last_finish: list[float]
    """Latest end of the stage's ended attempts (NaN when none ended)."""
    finished: np.ndarray
    """App-table rows of every ended attempt, stage after stage, each stage's by (launch,
    index, attempt); `finished_bounds` says where each stage's run starts and how long."""
    finished_bounds: tuple[np.ndarray, np.ndarray]

    @classmethod
    def of(cls, profile: ApplicationProfile) -> AppTasks:
        table = profile.task_table()
        rows: dict[StageKey, tuple[int, int]] = {}
        position: dict[StageKey, int] = {}
        lengths_list: list[int] = []
        offset = 0
        for key, stage in profile.stages.items():
            n = len(stage.table)
            position[key] = len(lengths_list)
            rows[key] = (offset, offset + n)
            lengths_list.append(n)
            offset += n
        parts = decompose_table(table)
        lengths = np.array(lengths_list, dtype=np.int64)
        starts = (np.cumsum(lengths) - lengths).astype(np.int64)
        stage_of_row = np.repeat(np.arange(len(lengths)), lengths)
        launch = table.col("launch_ms")
        finish = table.col("finish_ms")
        full = lengths > 0
        first_launch = np.full(len(lengths), np.nan)
        last_finish = np.full(len(lengths), np.nan)
        if full.any():
            first_launch[full] = np.minimum.reduceat(launch, starts[full])
            last_finish[full] = np.fmax.reduceat(finish, starts[full])
        ended = np.flatnonzero(parts.ended)
        order = np.lexsort(
            (
                table.col("attempt")[ended],
                table.col("index")[ended],
                launch[ended],
                stage_of_row[ended],
            )
        )
        finished = ended[order]
        counts = np.bincount(stage_of_row[finished], minlength=len(lengths))
        finished_starts = (np.cumsum(counts) - counts).astype(np.int64)
        return cls(
            table,
            parts,
            rows,
            position,
            first_launch.tolist(),
            last_finish.tolist(),
            finished,
            (finished_starts, counts),
        )

    def finish_of(self, stage: StageNode) -> np.ndarray:
        lo, hi = self.rows[stage.key]
        return self.table.col("finish_ms")[lo:hi]

    def launch_of(self, stage: StageNode) -> np.ndarray:
        lo, hi = self.rows[stage.key]
        return self.table.col("launch_ms")[lo:hi]

    def finished_rows(self, stage: StageNode) -> np.ndarray:
        """App-table rows of the stage's ended attempts, by (launch, index, attempt)."""
        i = self.position[stage.key]
        lo = int(self.finished_bounds[0][i])
        return self.finished[lo : lo + int(self.finished_bounds[1][i])]

    def any_ended(self, stage: StageNode) -> bool:
        return not math.isnan(self.last_finish[self.position[stage.key]])
