"""What a join's change of strategy costs: the run's own price of a shuffled byte.

Which joins change strategy under new settings, and how many bytes each stage gains or
sheds, is the front end's plan (`perfmodel.dag.partition_change.JoinChange`); here the
bytes become time at this run's own cost per shuffled byte (`shuffle_cost`), and the stages'
work changes accordingly (`apply_join_change`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from perfmodel.dag.model import ApplicationProfile
from perfmodel.dag.partition_change import JoinChange
from perfmodel.simulate.stage_work import CPU_OTHER, DISK, SCHEDULING, StageWork
from perfmodel.simulate.workload import Workload


@dataclass(frozen=True, slots=True)
class ShuffleCost:
    """What a shuffle costs in this run, per byte, as its own shuffles measured it."""

    write_ms_per_byte: float
    """Blocking shuffle-write time per byte written (map side)."""
    read_ms_per_byte: float
    """Task time per shuffle byte read in stages that read only shuffles (fetch,
    deserialisation, sort and the operator over it; fixed costs off), over all such stages'
    bytes."""

    @property
    def ms_per_byte(self) -> float:
        return self.write_ms_per_byte + self.read_ms_per_byte


def shuffle_cost(profile: ApplicationProfile, workload: Workload) -> ShuffleCost | None:
    """The run's shuffle costs per byte (None where it has no shuffle to measure them).

    The read side's rate comes from the stages that read only shuffles and read enough per
    task to spend their time on data (`StageWork.tiny_tasks`), where the run has any: a
    stage of 2,000 tiny tasks spends its time on being tasks, and counted in, it priced the
    shuffles of TPC-H's eleven broadcast joins turned off at 42 s where they took 4 s. Where
    every such stage's tasks are tiny, each task's time beyond the stage's fastest task's
    (all fixed cost) is what its data cost."""
    written = 0.0
    write_ms = 0.0
    read = {True: [0.0, 0.0], False: [0.0, 0.0]}  # tiny tasks? -> [busy ms, bytes]
    for work in workload.stages:
        stage = profile.stages.get(work.key)
        if stage is None or not len(stage.table):
            continue
        t = stage.table
        shuffle_written = t.total("shuffle_write_bytes")
        shuffle_read = t.total("shuffle_read_bytes")
        total_read = t.total("input_bytes") + shuffle_read
        if shuffle_written > 0:
            written += shuffle_written
            write_ms += t.total("shuffle_write_ms")
        if shuffle_read > 0 and shuffle_read >= 0.99 * total_read:
            c = work.components
            busy = c.sum(axis=0) - c[SCHEDULING]
            sums = read[work.tiny_tasks]
            if work.tiny_tasks:
                # What the data cost beyond the stage's fastest task, which is all fixed cost.
                sums[0] += float((busy - busy.min()).sum())
            else:
                sums[0] += float(busy.sum())
            sums[1] += shuffle_read
    read_busy, read_bytes = read[False] if read[False][1] > 0 else read[True]
    if written <= 0 or read_bytes <= 0:
        return None
    # Weighted by the bytes each stage read: a final aggregation that reads a few kilobytes
    # spends its time on fixed work, and its time per byte (a median of per-stage rates would
    # let it decide) priced a TPC-H join's gigabyte at hours.
    return ShuffleCost(write_ms / written, read_busy / read_bytes)


def apply_join_change(work: StageWork, change: JoinChange, cost: ShuffleCost) -> StageWork:
    """A stage's work with a join's change of strategy: time added for the bytes it now
    shuffles and sorts (shared by its tasks by the bytes each reads), or scaled (a factor
    of -1 removes the shuffle write it no longer does: its disk time)."""
    c = work.components.copy()
    added = change.shuffled_bytes.get(work.key, 0.0) * cost.ms_per_byte
    if added and work.n_tasks:
        read = np.asarray(work.read_bytes, dtype=np.float64)
        share = read / read.sum() if read.sum() > 0 else np.full(work.n_tasks, 1 / work.n_tasks)
        c[CPU_OTHER] += added * share
    factor = change.scaled.get(work.key)
    if factor is not None:
        if factor < 0:
            c[DISK] = 0.0
        else:
            c *= factor
            c[SCHEDULING] = work.components[SCHEDULING]
    return replace(work, components=c)
