"""Cheap lower bounds on the replayed runtime of many configurations at once.

Replaying a 100k-task log takes a tenth of a second; a catalog search asks about
thousands of points. Most of them cannot be on the time/cost front, and a bound that
costs microseconds per point tells which: the search replays a point only when its bound
leaves it a chance (`perfmodel.recommend.search`).

Two bounds, both valid for the replay in `perfmodel.simulate` because every law there
only slows a task component down relative to these floors:

* **work**: the scheduler cannot finish before total task time ÷ slots;
* **path**: nor before the longest chain of milestones (driver gaps, stage readiness,
  job ends) in which each stage takes at least its longest task, and at least its own
  task time ÷ slots (its tasks fit in its window on at most that many slots), plus its
  observed tail.

Per component the floor is the baseline time × the resource ratio (base speed ÷ new speed,
bandwidth ratios, the GC law) divided by the baseline's own contention or stream sharing
(the new configuration's is at least 1); spill is taken as 0; scheduling and ``other``
time are unchanged. ``tests/test_recommend_bounds.py`` checks bound ≤ replay.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.simulate import laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.workload import (
    CPU,
    CPU_OTHER,
    DISK,
    GC,
    NETWORK,
    OTHER,
    SCHEDULING,
    Workload,
)

N_FACTORS = 5
"""Columns of a factor row: cpu, gc, disk, network, fixed."""


@dataclass(slots=True)
class WorkloadBounds:
    """What the bounds need from a workload, reduced once (numbers per stage)."""

    base: ClusterConfig
    totals: np.ndarray
    """(5,) floor task-time per factor column, summed over every task (ms)."""
    candidates: list[np.ndarray]
    """Per stage, (5, k) floor components of its few longest-looking tasks (k may be 0)."""
    stage_totals: np.ndarray
    """(n_stages, 5) floor task-time per factor column, summed over each stage's tasks."""
    tails: np.ndarray
    order: list[int]
    """Milestones in an order where every prerequisite comes first."""
    prereqs: list[list[int]]
    lags: np.ndarray
    complete_stage: dict[int, int]
    """STAGE_COMPLETE milestone → stage index."""
    end_milestone: int
    observed_slots: int
    """Slots of the observed executors (what the replay uses when the layout is kept)."""


def prepare(workload: Workload, base: ClusterConfig) -> WorkloadBounds:
    """Reduce the workload to per-stage floors (one pass over the task arrays)."""
    totals = np.zeros(N_FACTORS)
    stage_totals = np.zeros((len(workload.stages), N_FACTORS))
    candidates: list[np.ndarray] = []
    for index, work in enumerate(workload.stages):
        c = work.components
        cf0 = float(laws.contention_factor(work.concurrency, work.cpu_demand, base.host_cores))
        n_disk = float(laws.io_streams(work.concurrency, work.disk_share))
        n_net = float(laws.io_streams(work.concurrency, work.network_share))
        floor = np.stack(
            [
                (c[CPU] + c[CPU_OTHER]) / cf0,
                c[GC] / cf0,
                c[DISK] / n_disk,
                c[NETWORK] / n_net,
                c[SCHEDULING] + c[OTHER],
            ]
        )
        stage_totals[index] = floor.sum(axis=1)
        totals += stage_totals[index]
        if floor.shape[1] == 0:
            candidates.append(np.zeros((N_FACTORS, 0)))
            continue
        picks = set(np.argmax(floor, axis=1).tolist())
        picks.add(int(np.argmax(c.sum(axis=0))))
        candidates.append(floor[:, sorted(picks)])
    ms = workload.milestones
    prereqs = [list(m.prereqs) for m in ms]
    complete_stage = {
        s.complete_milestone: i for i, s in enumerate(workload.stages) if s.complete_milestone >= 0
    }
    for m_index, stage_index in complete_stage.items():
        prereqs[m_index] = [workload.stages[stage_index].ready_milestone]
    per_task = max(base.task_cpus, 1)
    observed = sum(max(1, cores // per_task) for _, _, cores in workload.executors)
    return WorkloadBounds(
        base=base,
        totals=totals,
        candidates=candidates,
        stage_totals=stage_totals,
        tails=np.array([s.tail_ms for s in workload.stages], dtype=np.float64),
        order=_topological(prereqs),
        prereqs=prereqs,
        lags=np.array([m.lag_ms for m in ms], dtype=np.float64),
        complete_stage=complete_stage,
        end_milestone=workload.end_milestone,
        observed_slots=observed,
    )


def factor_row(base: ClusterConfig, target: ClusterConfig) -> tuple[float, ...]:
    """The floor factors of one target: (cpu, gc, disk, network, fixed)."""
    cpu = laws.compute_factor(base.cpu_speed, target.cpu_speed)
    gc = cpu * laws.gc_factor(base.memory_bytes, target.memory_bytes)
    return (cpu, gc, base.disk_bw / target.disk_bw, base.net_bw / target.net_bw, 1.0)


def lower_bounds_s(bounds: WorkloadBounds, targets: Sequence[ClusterConfig]) -> np.ndarray:
    """Seconds no replay of each target can beat (one number per target)."""
    if not targets:
        return np.zeros(0)
    keys = [(factor_row(bounds.base, t), _slots(bounds, t)) for t in targets]
    unique = sorted(set(keys))
    index = {k: i for i, k in enumerate(unique)}
    factors = np.array([k[0] for k in unique], dtype=np.float64)  # (U, 5)
    slots = np.array([k[1] for k in unique], dtype=np.float64)  # (U,)
    path = np.concatenate(
        [
            _path_bound(bounds, factors[i : i + CHUNK], slots[i : i + CHUNK])
            for i in range(0, len(unique), CHUNK)
        ]
    )
    work = factors @ bounds.totals / slots
    per_key = np.maximum(work, path) / 1000.0
    return per_key[[index[k] for k in keys]]


CHUNK = 1024
"""Columns (distinct factor rows and slot counts) bounded together: memory stays at
milestones-alive × CHUNK floats."""


def _slots(bounds: WorkloadBounds, target: ClusterConfig) -> int:
    base = bounds.base
    same = (target.executors, target.executor_cores) == (base.executors, base.executor_cores)
    if same and bounds.observed_slots:
        return max(target.slots, bounds.observed_slots)
    return target.slots


def _path_bound(bounds: WorkloadBounds, factors: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Longest milestone chain for each column (ms), all columns at once.

    A milestone's times are dropped once its last dependent has read them, so memory
    follows the milestones in flight, not all of them.
    """
    n_cols = factors.shape[0]
    n = len(bounds.prereqs)
    times: list[np.ndarray | None] = [None] * n
    readers = [0] * n
    for pre in bounds.prereqs:
        for p in pre:
            readers[p] += 1
    readers[bounds.end_milestone] += 1
    zero = np.zeros(n_cols)
    span_by_work = (factors @ bounds.stage_totals.T) / slots[:, None]  # (cols, stages)
    for m in bounds.order:
        start = zero
        for p in bounds.prereqs[m]:
            t = times[p]
            if t is not None:
                start = np.maximum(start, t)
            readers[p] -= 1
            if readers[p] == 0:
                times[p] = None
        stage = bounds.complete_stage.get(m)
        if stage is None:
            times[m] = start + bounds.lags[m]
            continue
        cand = bounds.candidates[stage]
        span = span_by_work[:, stage]
        if cand.shape[1]:
            span = np.maximum(span, (factors @ cand).max(axis=1))
        times[m] = start + span + bounds.tails[stage]
    end = times[bounds.end_milestone]
    return end if end is not None else zero


def _topological(prereqs: list[list[int]]) -> list[int]:
    n = len(prereqs)
    remaining = [len(p) for p in prereqs]
    dependents: list[list[int]] = [[] for _ in range(n)]
    for m, pre in enumerate(prereqs):
        for p in pre:
            dependents[p].append(m)
    queue = deque(m for m in range(n) if remaining[m] == 0)
    order: list[int] = []
    while queue:
        m = queue.popleft()
        order.append(m)
        for d in dependents[m]:
            remaining[d] -= 1
            if remaining[d] == 0:
                queue.append(d)
    return order


__all__ = ["WorkloadBounds", "factor_row", "lower_bounds_s", "prepare"]
