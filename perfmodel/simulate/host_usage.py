"""Measured CPU demand per stage: the host's CPU use over time, shared among running tasks.

Task metrics see only the task thread, so a PySpark task (whose Python worker does the work
while the thread waits on a pipe) looks like one core or less; the contention law then
underestimates how a second slot on the same cores slows every task down. A recorded run
also carries the CPU its processes used over time (`perfmodel.dag.model.HostUsage`): each
interval's busy cores are shared equally among the tasks running in it, which gives every
stage the core-milliseconds its tasks really consumed and how saturated the host was
while they ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.dag.model import HostUsage, StageKey
from perfmodel.dag.tasks import TaskRun

BIN_MS = 50.0
"""Resolution of the shared time grid; finer than the monitor's interval, coarser than tasks."""


@dataclass(frozen=True, slots=True)
class StageCpu:
    """What the host spent on one stage's tasks."""

    cpu_ms: float
    """Core-milliseconds of CPU attributed to the stage's tasks (all processes)."""
    task_ms: float
    """Summed wall time of the stage's tasks."""
    utilisation: float
    """Mean share of the host's cores busy while the stage's tasks ran (0..1)."""

    @property
    def cores_per_task(self) -> float:
        """Cores one running task of the stage kept busy, on average."""
        return self.cpu_ms / self.task_ms if self.task_ms > 0 else 0.0


def stage_cpu(
    usage: HostUsage, host_cores: int, stages: Mapping[StageKey, Sequence[TaskRun]]
) -> dict[StageKey, StageCpu]:
    """CPU attributed to each stage's finished tasks (all tasks are on the measured host)."""
    spans = [
        (key, float(t.launch_ms), float(t.finish_ms))
        for key, tasks in stages.items()
        for t in tasks
        if t.finish_ms is not None and t.finish_ms > t.launch_ms
    ]
    if not spans or len(usage.t_ms) < 2:
        return {}
    launch = np.array([s[1] for s in spans])
    finish = np.array([s[2] for s in spans])
    t0, t1 = float(launch.min()), float(finish.max())
    edges = np.arange(t0, t1 + BIN_MS, BIN_MS)
    busy = np.diff(_cumulative_core_ms(usage, edges))  # core-ms per bin
    running = np.diff(cumulative_task_ms(launch, finish, edges))  # task-ms per bin
    with np.errstate(divide="ignore", invalid="ignore"):
        per_task_ms = np.where(running > 0, busy / running, 0.0)  # cores per running task
    utilisation = busy / (BIN_MS * max(host_cores, 1))
    share = integrate(edges, per_task_ms, launch, finish)
    util = integrate(edges, utilisation, launch, finish)
    out: dict[StageKey, list[float]] = {}
    for (key, a, b), cpu, u in zip(spans, share.tolist(), util.tolist(), strict=True):
        acc = out.setdefault(key, [0.0, 0.0, 0.0])
        acc[0] += cpu
        acc[1] += b - a
        acc[2] += u
    return {
        key: StageCpu(cpu_ms=c, task_ms=d, utilisation=min(1.0, u / d) if d > 0 else 0.0)
        for key, (c, d, u) in out.items()
    }


def _cumulative_core_ms(usage: HostUsage, edges: np.ndarray) -> np.ndarray:
    """∫ busy cores dt from the first sample to each edge (each sample covers its interval)."""
    t = np.asarray(usage.t_ms, dtype=np.float64)
    c = np.asarray(usage.cores, dtype=np.float64)
    cumulative = np.concatenate([[0.0], np.cumsum(c[1:] * np.diff(t))])
    return np.interp(edges, t, cumulative)


def cumulative_task_ms(
    launch: np.ndarray,
    finish: np.ndarray,
    edges: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """∫ number of running tasks dt up to each edge (each task counted ``weights`` times)."""
    w = np.ones_like(launch) if weights is None else np.asarray(weights, dtype=np.float64)
    times = np.concatenate([launch, finish])
    deltas = np.concatenate([w, -w])
    order = np.argsort(times, kind="stable")
    times, deltas = times[order], deltas[order]
    level = np.cumsum(deltas)
    integral = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
    j = np.clip(np.searchsorted(times, edges, side="right") - 1, 0, len(times) - 1)
    return np.where(edges < times[0], 0.0, integral[j] + level[j] * (edges - times[j]))


def integrate(
    edges: np.ndarray, rate: np.ndarray, start: np.ndarray, end: np.ndarray
) -> np.ndarray:
    """∫ rate dt over [start, end] for a rate constant within each bin."""
    cumulative = np.concatenate([[0.0], np.cumsum(rate * np.diff(edges))])
    return np.interp(end, edges, cumulative) - np.interp(start, edges, cumulative)
