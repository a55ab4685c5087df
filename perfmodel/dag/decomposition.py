"""The measured split of task time over resources, from the engine's own task metrics.

This is the half of the resource picture that needs no model: what the engine timed
itself. It is kept separate from the code-inferred resource vectors so the two can be
compared (and disagreements reported) instead of one silently replacing the other.
Whatever the metrics do not explain stays visible as ``unattributed``: in PySpark that
is typically Python worker time, which only stack samples and code models can explain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from perfmodel.dag.tasks import TaskRun, TaskTable

COMPONENTS: tuple[str, ...] = ("cpu", "gc", "network", "disk", "scheduling", "unattributed")
"""Order in which components are reported.

cpu: the task thread's CPU time; gc: JVM garbage collection pauses; network: blocked
waiting for shuffle blocks from other executors; disk: blocked writing shuffle output;
scheduling: launch overheads (scheduler delay, deserialising the task, serialising and
fetching its result); unattributed: the rest of the run time (I/O the engine does not
time, lock waits, Python workers, ...).
"""


@dataclass(slots=True)
class TimeDecomposition:
    """Milliseconds per component; ``total_ms`` is the wall time they add up to."""

    cpu: float = 0.0
    gc: float = 0.0
    network: float = 0.0
    disk: float = 0.0
    scheduling: float = 0.0
    unattributed: float = 0.0
    cpu_measured: bool = False
    """True when CPU time was recorded for at least one of the attempts summed here; False
    for engines that do not record it (Spark < 2.1), whose compute time then sits in
    ``unattributed``."""

    @property
    def total_ms(self) -> float:
        return sum(self.as_dict().values())

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in COMPONENTS}

    def shares(self) -> dict[str, float]:
        """Fraction of the total per component (all 0 for an empty decomposition)."""
        total = self.total_ms
        if total <= 0:
            return {name: 0.0 for name in COMPONENTS}
        return {name: value / total for name, value in self.as_dict().items()}

    def add(self, other: TimeDecomposition) -> None:
        for name in COMPONENTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cpu_measured = self.cpu_measured or other.cpu_measured


def decompose_task(task: TaskRun) -> TimeDecomposition:
    """Split one task attempt's wall time (launch to finish) into measured components.

    Run time holds CPU, GC pauses, shuffle fetch waits and shuffle write blocking. The
    engine measures these independently, so they can overlap (CPU time is sampled per
    thread, GC is a pause seen by all threads); if they add up to more than the run
    time they are scaled down together rather than letting the total exceed the wall.
    """
    m = task.metrics
    wall = task.duration_ms
    if not m.reported:
        return TimeDecomposition(unattributed=wall)
    run = min(max(m.run_ms, 0.0), wall) if wall > 0 else max(m.run_ms, 0.0)
    gc = max(m.gc_ms, 0.0)
    network = max(m.shuffle_fetch_wait_ms, 0.0)
    disk = max(m.shuffle_write_ms, 0.0)
    cpu = max(m.cpu_ms, 0.0) if m.has_cpu_time else 0.0
    measured = cpu + gc + network + disk
    if measured > run and measured > 0:
        scale = run / measured
        cpu, gc, network, disk = cpu * scale, gc * scale, network * scale, disk * scale
        measured = run
    unattributed = run - measured
    scheduling = max(wall - run, 0.0)
    return TimeDecomposition(
        cpu=cpu,
        gc=gc,
        network=network,
        disk=disk,
        scheduling=scheduling,
        unattributed=unattributed,
        cpu_measured=m.has_cpu_time,
    )


def decompose_tasks(tasks: Iterable[TaskRun]) -> TimeDecomposition:
    """Sum of the decompositions of the given task attempts (task-time, not wall time)."""
    total = TimeDecomposition()
    for task in tasks:
        if task.finish_ms is None:
            continue
        total.add(decompose_task(task))
    return total


@dataclass(slots=True)
class TaskDecompositions:
    """`decompose_task` of every row of a `TaskTable`, as one array per component (ms).

    Element for element the same arithmetic as `decompose_task`, so the numbers are the
    same to the last bit; rows of attempts that never ended hold zeros (``ended`` says
    which rows count).
    """

    cpu: np.ndarray
    gc: np.ndarray
    network: np.ndarray
    disk: np.ndarray
    scheduling: np.ndarray
    unattributed: np.ndarray
    cpu_measured: np.ndarray
    ended: np.ndarray

    def component(self, name: str) -> np.ndarray:
        return getattr(self, name)

    def total(self, lo: int = 0, hi: int | None = None) -> TimeDecomposition:
        """Sum over rows ``lo:hi`` of the attempts that ended, added in row order (as a
        loop of `TimeDecomposition.add` would: the same float sums)."""
        ended = self.ended[lo:hi]
        out = TimeDecomposition()
        if not ended.any():
            return out
        for name in COMPONENTS:
            values = getattr(self, name)[lo:hi][ended]
            setattr(out, name, float(np.cumsum(values)[-1]))
        out.cpu_measured = bool(self.cpu_measured[lo:hi][ended].any())
        return out


def decompose_table(table: TaskTable) -> TaskDecompositions:
    """`decompose_task` for every row of ``table`` at once (see `TaskDecompositions`)."""
    ended = table.ended
    wall = table.duration_ms
    reported = table.reported
    run_ms = np.maximum(table.run_ms, 0.0)
    run = np.where(wall > 0, np.minimum(run_ms, wall), run_ms)
    gc = np.maximum(table.gc_ms, 0.0)
    network = np.maximum(table.shuffle_fetch_wait_ms, 0.0)
    disk = np.maximum(table.shuffle_write_ms, 0.0)
    has_cpu = table.has_cpu_time
    cpu = np.where(has_cpu, np.maximum(table.cpu_ms, 0.0), 0.0)
    measured = cpu + gc + network + disk
    over = (measured > run) & (measured > 0)
    if over.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(over, run / measured, 1.0)
        cpu = np.where(over, cpu * scale, cpu)
        gc = np.where(over, gc * scale, gc)
        network = np.where(over, network * scale, network)
        disk = np.where(over, disk * scale, disk)
        measured = np.where(over, run, measured)
    unattributed = run - measured
    scheduling = np.maximum(wall - run, 0.0)
    # Attempts without metrics: all of their wall time is unattributed.
    zero = np.zeros_like(wall)
    keep = reported & ended
    return TaskDecompositions(
        cpu=np.where(keep, cpu, zero),
        gc=np.where(keep, gc, zero),
        network=np.where(keep, network, zero),
        disk=np.where(keep, disk, zero),
        scheduling=np.where(keep, scheduling, zero),
        unattributed=np.where(keep, unattributed, np.where(ended, wall, zero)),
        cpu_measured=has_cpu & keep,
        ended=ended,
    )
