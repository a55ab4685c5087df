"""How many tasks ran beside each task on its host: the observed concurrency.

A fact of the profile, not of any model: per task attempt, the mean number of task
attempts running on the same host (itself included) over its run. The contention
estimator (`perfmodel.spark.contention`) reads slowdown off it, and the replay's compiler
(`perfmodel.simulate.workload`) takes each stage's concurrency from it.
"""

from __future__ import annotations

import numpy as np

from perfmodel.dag.tasks import TaskTable


def task_concurrency(table: TaskTable) -> np.ndarray:
    """Per row: mean tasks running on its host during its run (≥ 1; 1 for attempts that
    never ended or took no time).

    Per host, a step function of running tasks and its running integral answer every
    task with two binary searches (n log n in tasks, no pairwise comparison).
    """
    out = np.ones(len(table), dtype=np.float64)
    ended = np.flatnonzero(table.ended)
    if not ended.size:
        return out
    host_names = table.columns.strings["host"]
    empty_host = np.array([not h for h in host_names] or [False], dtype=bool)
    host = table.col("host")[ended].astype(np.int64)
    executor = table.col("executor")[ended].astype(np.int64)
    group = np.where(empty_host[host], len(host_names) + executor, host)
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    launch_all = table.col("launch_ms")
    finish_all = table.col("finish_ms")
    for members in np.split(order, bounds):
        rows = ended[members]
        a = launch_all[rows]
        b = finish_all[rows]
        times = np.concatenate([a, b])
        deltas = np.concatenate([np.ones_like(a), -np.ones_like(b)])
        by_time = np.lexsort((deltas, times))  # ends before starts at equal times
        times, deltas = times[by_time], deltas[by_time]
        level = np.cumsum(deltas)
        integral = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
        span = b - a
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(
                span > 0,
                (_integral_at(times, level, integral, b) - _integral_at(times, level, integral, a))
                / span,
                1.0,
            )
        out[rows] = np.maximum(1.0, mean)
    return out


def _integral_at(
    times: np.ndarray, level: np.ndarray, integral: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """∫ running-tasks dt from the first event to each ``x`` (a step function's integral)."""
    j = np.clip(np.searchsorted(times, x, side="right") - 1, 0, len(times) - 1)
    return integral[j] + level[j] * (x - times[j])
