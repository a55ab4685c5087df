"""The CPU each executor JVM spends beside its tasks, and what it does to a change of
executor count.

Evidence (docs/cluster.md): on the namespace cluster, workers capped at half a core, JFR's
``jdk.CPULoad`` showed every executor JVM using a roughly fixed amount of CPU that its task
threads did not (JIT compilation of the same code in each JVM, the collector, shuffle
serving): 16–18 core-s per executor for the sort, 28–31 for the join, 11–12 for the
repartition, whether there were two executors or three, while the tasks' CPU was
unchanged. Where the executor's CPU is the limit, that work takes turns with the tasks, so
three executors finished the sort 8% sooner than two, not the third a slot-count replay
gives.

Model: each executor pays ``B`` core-s beside its ``W/E`` of task CPU; where its CPU is
saturated, time goes with the sum, so a task's CPU time scales with
``(1 + ρ·E'/E) / (1 + ρ)``, ``ρ = B/(W/E)``, when ``E`` executors become ``E'``
(`laws.executor_background_factor`). Only background spent while the JVM ran at its
ceiling counts (seconds with its CPU at ≥ 85% of its 95th percentile): spent on cores
that were idle anyway, it slowed nothing. Bare logs do not have it, and nor do bundles
recorded before it was: there ``ρ = 0`` and a change of executor count scales as slots.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel.dag.model import ApplicationProfile
from perfmodel.dag.tasks import TaskTable
from perfmodel.profile.jvm_cpu import JvmCpuSeries

CEILING_QUANTILE = 95.0
"""The JVM's CPU ceiling: this percentile of its one-second CPU rates."""
AT_CEILING = 0.85
"""A second counts as saturated at this share of the ceiling or above."""
DRIVER = "driver"


@dataclass(frozen=True, slots=True)
class ExecutorBackground:
    """What the executors' JVMs measured: the ratio the replay uses and its evidence."""

    ratio: float
    """ρ: competing background CPU per unit of task CPU, over the measured executors."""
    executors: int
    task_cpu_s: float
    background_s: float
    """JVM CPU beside the tasks, all of it."""
    competing_s: float
    """The part of it spent while the JVM was at its CPU ceiling."""

    def note(self) -> str:
        return (
            f"the {self.executors} executor JVM(s) used {self.background_s:.0f} core-s of CPU "
            f"beside their tasks' {self.task_cpu_s:.0f} (JIT, GC, shuffle serving; JFR), "
            f"{self.competing_s:.0f} of it while at their CPU ceiling: taken as a cost each "
            "executor pays, so more executors pay it more times (docs/cluster.md)"
        )


NONE = ExecutorBackground(0.0, 0, 0.0, 0.0, 0.0)


def saturated_share(series: JvmCpuSeries, start_ms: float, end_ms: float) -> float:
    """Share of the JVM's CPU-seconds in [start, end] spent at its ceiling (0..1)."""
    return _at_ceiling(*series.periods(start_ms, end_ms))


def _at_ceiling(rate: np.ndarray, seconds: np.ndarray) -> float:
    """`saturated_share` of periods already cut to the window."""
    used = float((rate * seconds).sum())
    if rate.size == 0 or used <= 0:
        return 0.0
    ceiling = float(np.percentile(rate, CEILING_QUANTILE))
    if ceiling <= 0:
        return 0.0
    return float((rate * seconds)[rate >= AT_CEILING * ceiling].sum()) / used


def estimate(profile: ApplicationProfile, tasks: TaskTable) -> ExecutorBackground:
    """ρ from the profile's JVM CPU series and its tasks' CPU, executor by executor, over
    the application's task window (first launch to last end).

    The driver's series is left out: in local mode the driver is the executor, and its CPU
    beside the tasks is the driver's own work (planning, scheduling, py4j), not a cost each
    added executor would pay. Python workers' CPU is not in the JVM's, nor in the task CPU:
    for PySpark stages ρ compares the JVM's background with the task threads' CPU only.
    """
    jvm = profile.jvm_cpu
    if jvm is None or len(tasks) == 0:
        return NONE
    names: list[str] = list(tasks.columns.strings["executor"])
    launch = np.asarray(tasks.launch_ms, dtype=np.float64)
    finish = np.asarray(tasks.finish_ms, dtype=np.float64)
    if not np.isfinite(launch).any():
        return NONE
    start = float(np.nanmin(launch))
    end = float(np.nanmax(finish)) if np.isfinite(finish).any() else float(np.nanmax(launch))
    end += 1000.0  # the second in which the last task ended
    cpu_ms = np.nan_to_num(np.asarray(tasks.cpu_ms, dtype=np.float64))
    per_executor = np.bincount(tasks.executor, weights=cpu_ms, minlength=len(names))
    ran = np.bincount(tasks.executor, minlength=len(names)) > 0
    code = {name: i for i, name in enumerate(names)}
    task_s = background_s = competing_s = 0.0
    measured = 0
    for executor, series in jvm.series.items():
        i = code.get(executor)
        if executor == DRIVER or i is None or not ran[i]:
            continue  # the driver, or a JVM that ran no tasks
        w = float(per_executor[i]) / 1000.0
        rate, seconds = series.periods(start, end)
        b = max(0.0, float((rate * seconds).sum()) - w)
        measured += 1
        task_s += w
        background_s += b
        competing_s += b * _at_ceiling(rate, seconds)
    if measured == 0 or task_s <= 0:
        return NONE
    return ExecutorBackground(competing_s / task_s, measured, task_s, background_s, competing_s)
