"""Cheap lower bounds on the replayed runtime of many configurations at once.

Replaying a 100k-task log takes a tenth of a second; a catalog search asks about
thousands of points. Most of them cannot be on the time/cost front, and a bound that
costs microseconds per point tells which: the search replays a point only when its bound
leaves it a chance (`perfmodel.recommend.search`).

Per stage, every task component except spill is rescaled by the same factors the replay
uses (`perfmodel.simulate.rescale.all_stage_times`: CPU speed and host contention at the
expected concurrency, the executors' own CPU, co-running tasks, the GC law, shared disk and
network bandwidth, the remote share of the shuffle); spill is taken as 0
(it only adds time), and so is the CPU the baseline spent spilling (`rescale.spill_cpu_ms`:
more memory can take it away); scheduling and ``other`` time are unchanged. Then two bounds:

* **work**: the scheduler cannot finish before total task time ÷ slots;
* **path**: nor before the longest chain of milestones (driver gaps, stage readiness,
  job ends) in which each stage takes at least its own task time ÷ slots (its tasks fit in
  its window on at most that many slots) and at least the **start-and-finish** bound of its
  few longest-looking tasks, plus its observed tail.

The start-and-finish bound is what makes the bound tight on many slots (without it, 91 %
of the replay at 570 slots on a 230k-task log, where each stage's long tasks finish after
the rest): the replay starts task ``i`` of a stage at ``s_i`` on the earliest free slot, so
every task before it had started by ``s_i`` and at most ``S − 1`` of them (one per other
slot) were still running. On ``S`` slots from the stage's ready time ``r``, the work done
in ``[r, s_i]`` is therefore at least the sum of the ``i − S + 1`` shortest of those tasks,
``B_i``, so ``s_i ≥ r + B_i / S`` and the stage ends no earlier than
``r + B_i / S + d_i + tail``. ``B_i`` only grows with the tasks' durations, so durations
without spill give a lower bound of it, and per component group
``Σ_g f_g · max(0, prefix_g(i) − top_g(S − 1))`` is a lower bound again (``prefix_g(i)``: the
group's time over the tasks before ``i``; ``top_g(m)``: its ``m`` largest in the stage), and so
is ``max(0, Σ_g f_g · (prefix_g(i) − top_g(S − 1)))``, which is two matrix products for
thousands of configurations.

The expected concurrency comes from `perfmodel.simulate.rescale.scaled_concurrency` and the
host contention from `perfmodel.simulate.laws`, the replay's own helpers, so these bounds
follow the replay's laws; ``tests/unit/test_recommend_parts.py`` checks bound ≤ replay on
synthetic and real profiles, and fails if the laws change under them.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perfmodel.simulate import laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.interpreter_lock import tasks_per_process
from perfmodel.simulate.rescale import contention_factors, scaled_concurrency, spill_cpu_ms
from perfmodel.simulate.stage_work import (
    CPU,
    CPU_OTHER,
    DISK,
    GC,
    NETWORK,
    OTHER,
    SCHEDULING,
)
from perfmodel.simulate.workload import Workload

N_FACTORS = 5
"""Component groups: cpu-like, gc, disk, network, fixed."""
CHUNK = 1024
"""Columns (distinct target parameters) bounded together: memory stays at
stages × CHUNK floats."""
LONG_TASKS = 24
"""Per stage, the longest tasks by total time (and a third as many per component group)
whose start-and-finish bound is taken (see module doc)."""
REFINED_KEPT = 8
"""`WorkloadBounds.task_times` holds about this many workloads' worth of task times."""
SAFETY = 1.0 - 1e-9
"""Bounds are scaled by this so that rounding (sums taken in another order than the
replay's) never puts a bound above the replayed time."""


@dataclass(slots=True)
class WorkloadBounds:
    """What the bounds need from a workload, reduced once (numbers per stage)."""

    base: ClusterConfig
    stage_totals: np.ndarray
    """(n_stages, 5) baseline task-time per component group, summed over the stage."""
    candidates: list[np.ndarray]
    """Per stage, (5, k) components of its few longest-looking tasks (k may be 0)."""
    before: list[np.ndarray]
    """Per stage, (5, k): each candidate's prefix, the group times of the tasks before it."""
    top: list[np.ndarray]
    """Per stage, (5, n + 1): ``top[g, m]`` = sum of group g's m largest task times."""
    groups: list[np.ndarray]
    """Per stage, (5, n): every task's time per component group (for `refined_bound_s`)."""
    k0: np.ndarray
    demand: np.ndarray
    other: np.ndarray
    """Per stage, `StageWork.other_cores`."""
    jvm_other: np.ndarray
    """Per stage, `StageWork.jvm_other_cores`."""
    taken: np.ndarray
    """Per stage, `StageWork.taken_cores`."""
    background: np.ndarray
    """Per stage, `StageWork.executor_background`."""
    co_running: np.ndarray
    """Per stage, `StageWork.co_running`."""
    lock_share: np.ndarray
    """Per stage, `StageWork.lock_share` (its `OTHER` time is then in the CPU group)."""
    fetch_latency: np.ndarray
    """Per stage, `StageWork.fetch_latency_share`."""
    lock_stretch: np.ndarray
    """Per stage, `StageWork.lock_stretch`."""
    disk_share: np.ndarray
    net_share: np.ndarray
    total_ms: np.ndarray
    longest_ms: np.ndarray
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
    task_times: OrderedDict[tuple[float, ...], tuple[np.ndarray, float, np.ndarray]] = field(
        default_factory=OrderedDict
    )
    """`refined_bound_s`'s per-stage task times, their sum and prefix sums, by the stage
    and its factors (node counts of one VM type and layout share them); least recently
    used go past `REFINED_KEPT` workloads' worth of tasks."""
    task_times_held: int = 0


def prepare(workload: Workload, base: ClusterConfig) -> WorkloadBounds:
    """Reduce the workload to per-stage sums (one pass over the task arrays)."""
    n = len(workload.stages)
    stage_totals = np.zeros((n, N_FACTORS))
    candidates: list[np.ndarray] = []
    before: list[np.ndarray] = []
    top: list[np.ndarray] = []
    all_groups: list[np.ndarray] = []
    total_ms, longest_ms = np.zeros(n), np.zeros(n)
    for index, work in enumerate(workload.stages):
        c = work.components
        # Where threads share a lock, the wait for it scales as the CPU work does.
        locked = work.lock_share > 0
        # Less the CPU spent spilling: the replay takes it away where memory grows.
        groups = np.stack(
            [
                c[CPU] + c[CPU_OTHER] - spill_cpu_ms(work) + (c[OTHER] if locked else 0.0),
                c[GC],
                c[DISK],
                c[NETWORK],
                c[SCHEDULING] + (0.0 if locked else c[OTHER]),
            ]
        )
        stage_totals[index] = groups.sum(axis=1)
        all_groups.append(groups)
        durations = c.sum(axis=0)
        if durations.size == 0:
            candidates.append(np.zeros((N_FACTORS, 0)))
            before.append(np.zeros((N_FACTORS, 0)))
            top.append(np.zeros((N_FACTORS, 1)))
            continue
        total_ms[index] = float(durations.sum())
        longest_ms[index] = float(durations.max())
        picks = _longest(durations, LONG_TASKS)
        for row in groups:
            picks = np.union1d(picks, _longest(row, max(1, LONG_TASKS // 3)))
        prefix = np.cumsum(groups, axis=1) - groups
        candidates.append(groups[:, picks])
        before.append(prefix[:, picks])
        largest = -np.sort(-groups, axis=1)
        top.append(np.concatenate([np.zeros((N_FACTORS, 1)), np.cumsum(largest, axis=1)], axis=1))
    ms = workload.milestones
    prereqs = [list(m.prereqs) for m in ms]
    complete_stage = {
        s.complete_milestone: i for i, s in enumerate(workload.stages) if s.complete_milestone >= 0
    }
    for m_index, stage_index in complete_stage.items():
        prereqs[m_index] = [workload.stages[stage_index].ready_milestone]
    per_task = max(base.task_cpus, 1)
    observed = sum(max(1, cores // per_task) for _, _, cores in workload.executors)
    stages = workload.stages
    return WorkloadBounds(
        base=base,
        stage_totals=stage_totals,
        candidates=candidates,
        before=before,
        top=top,
        groups=all_groups,
        k0=np.array([s.concurrency for s in stages], dtype=np.float64),
        demand=np.array([s.cpu_demand for s in stages], dtype=np.float64),
        other=np.array([s.other_cores for s in stages], dtype=np.float64),
        jvm_other=np.array([s.jvm_other_cores for s in stages], dtype=np.float64),
        taken=np.array([s.taken_cores for s in stages], dtype=np.float64),
        background=np.array([s.executor_background for s in stages], dtype=np.float64),
        co_running=np.array([s.co_running for s in stages], dtype=np.float64),
        lock_share=np.array([s.lock_share for s in stages], dtype=np.float64),
        fetch_latency=np.array([s.fetch_latency_share for s in stages], dtype=np.float64),
        lock_stretch=np.array([s.lock_stretch for s in stages], dtype=np.float64),
        disk_share=np.array([s.disk_share for s in stages], dtype=np.float64),
        net_share=np.array([s.network_share for s in stages], dtype=np.float64),
        total_ms=total_ms,
        longest_ms=longest_ms,
        tails=np.array([s.tail_ms for s in stages], dtype=np.float64),
        order=_topological(prereqs),
        prereqs=prereqs,
        lags=np.array([m.lag_ms for m in ms], dtype=np.float64),
        complete_stage=complete_stage,
        end_milestone=workload.end_milestone,
        observed_slots=observed,
    )


SLOTS_COLUMN = 10
"""A column of the bounds' per-target arrays: `target_key`'s values, then the slots (`_slots`)."""


def target_key(base: ClusterConfig, target: ClusterConfig) -> tuple[float, ...]:
    """Everything the bound depends on: resource ratios, slots, hosts, host size, executors,
    and the peers data is spread over (`ClusterConfig.peers`)."""
    cpu = laws.compute_factor(base.cpu_speed, target.cpu_speed)
    gc = laws.gc_factor(base.memory_bytes, target.memory_bytes)
    return (
        cpu,
        gc,
        base.disk_bw / target.disk_bw,
        base.net_bw / target.net_bw,
        float(target.slots),
        float(target.hosts),
        float(target.slots_per_host),
        float(target.host_cores),
        float(target.executors),
        float(target.peers),
    )


def lower_bounds_s(bounds: WorkloadBounds, targets: Sequence[ClusterConfig]) -> np.ndarray:
    """Seconds no replay of each target can beat (one number per target)."""
    if not targets:
        return np.zeros(0)
    keys = [(*target_key(bounds.base, t), float(_slots(bounds, t))) for t in targets]
    unique = sorted(set(keys))
    index = {k: i for i, k in enumerate(unique)}
    cols = np.array(unique, dtype=np.float64)  # (U, SLOTS_COLUMN + 1)
    per_key = np.concatenate(
        [_bound(bounds, cols[i : i + CHUNK]) for i in range(0, len(unique), CHUNK)]
    )
    return per_key[[index[k] for k in keys]] / 1000.0


def refined_bound_s(bounds: WorkloadBounds, target: ClusterConfig) -> float:
    """A tighter bound for one target, at a few ms per target (vs tens for a replay).

    The start-and-finish bound of `lower_bounds_s` with the target's own task times
    (without spill or spilling CPU) instead of per-group sums, and every task of each stage as
    a candidate:
    ``B_i ≥ prefix(i) − (the stage's S − 1 longest tasks)``.
    """
    key = np.array([(*target_key(bounds.base, target), float(_slots(bounds, target)))])
    slots = key[0, SLOTS_COLUMN]
    n_stages = len(bounds.groups)
    spans = np.zeros((n_stages, 1))
    work = 0.0
    for s in range(n_stages):
        durations, stage_work, prefix = _task_times(bounds, s, _factors(bounds, key, s)[0])
        n = durations.size
        work += stage_work
        span = stage_work / slots
        if n:
            running = int(min(max(slots - 1.0, 0.0), n))
            longest = 0.0
            if running:
                longest = float(np.partition(durations, n - running)[n - running :].sum())
            span = max(span, float((np.maximum(prefix - longest, 0.0) / slots + durations).max()))
        spans[s, 0] = span
    return float(max(work / slots, float(_path(bounds, spans, 1)[0]))) * SAFETY / 1000.0


def _task_times(
    b: WorkloadBounds, s: int, factors: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray]:
    """Stage ``s``'s task times under ``factors`` (without spill or spilling CPU), their
    sum, and each task's prefix (the time of the tasks before it); computed once per stage
    and factors."""
    key = (float(s), *factors.tolist())
    hit = b.task_times.get(key)
    if hit is not None:
        b.task_times.move_to_end(key)
        return hit
    durations = factors @ b.groups[s]
    prefix = np.cumsum(durations) - durations
    durations.flags.writeable = prefix.flags.writeable = False
    entry = (durations, float(durations.sum()), prefix)
    b.task_times[key] = entry
    b.task_times_held += 2 * durations.size
    budget = 2 * REFINED_KEPT * sum(g.shape[1] for g in b.groups)
    while b.task_times_held > budget and len(b.task_times) > 1:
        _, (old, _, _) = b.task_times.popitem(last=False)
        b.task_times_held -= 2 * old.size
    return entry


def _slots(bounds: WorkloadBounds, target: ClusterConfig) -> int:
    """Slots the replay can use at most: the observed executors' where the layout is kept."""
    base = bounds.base
    same = (target.executors, target.executor_cores) == (base.executors, base.executor_cores)
    if same and bounds.observed_slots:
        return max(target.slots, bounds.observed_slots)
    return target.slots


def _factors(b: WorkloadBounds, cols: np.ndarray, s: int) -> np.ndarray:
    """(cols, 5) factors of stage ``s`` under each column's target, as `all_stage_times`
    has them."""
    cpu, gc, disk, net, slots, hosts, per_host, cores, executors, peers = cols[:, :SLOTS_COLUMN].T
    base = b.base
    k0 = b.k0[s]
    k1 = scaled_concurrency(k0, b.total_ms[s], b.longest_ms[s], base, slots, hosts, per_host)
    d = b.demand[s]
    cf0, cf1 = contention_factors(
        k0, k1, d, base.host_cores, cores, b.taken[s], b.other[s], b.jvm_other[s]
    )
    if b.lock_share[s] > 0:
        # As `rescale.all_stage_times`: tasks per executor process, per target column.
        executors_here = np.ceil(executors / np.maximum(hosts, 1.0))
        per_process = tasks_per_process(k1, executors_here, slots / np.maximum(executors, 1.0))
        cf0 = np.maximum(cf0, b.lock_stretch[s])
        cf1 = np.maximum(cf1, laws.lock_factor(per_process, b.lock_share[s]))
    cpu_f = (
        cpu
        * cf1
        / cf0
        * laws.executor_background_factor(b.background[s], base.executors, executors)
        * laws.co_running_factor(b.co_running[s], k0, k1, base.host_cores, cores)
    )
    disk_f = disk * laws.io_streams(k1, b.disk_share[s]) / laws.io_streams(k0, b.disk_share[s])
    net_f = (
        net
        * laws.io_streams(k1, b.net_share[s])
        / laws.io_streams(k0, b.net_share[s])
        * laws.remote_share_factor(base.peers, peers)
    )
    # `OTHER` is in the last group (in the CPU group where threads share a lock); where the
    # target fetches nothing remotely its wait for remote data goes (`rescale`): both groups
    # are taken down by that share, which keeps the bound below the replay.
    kept = 1.0 - b.fetch_latency[s] * (1.0 - laws.fetch_latency_factor(base.peers, peers))
    cpu_group = cpu_f * kept if b.lock_share[s] > 0 else cpu_f
    return np.stack([cpu_group, cpu_f * gc, disk_f, net_f, kept], axis=1)


def _bound(b: WorkloadBounds, cols: np.ndarray) -> np.ndarray:
    """max(work ÷ slots, longest milestone chain) for each column (ms)."""
    n_cols = cols.shape[0]
    slots = cols[:, SLOTS_COLUMN]
    n_stages = len(b.candidates)
    spans = np.zeros((n_stages, n_cols))
    work = np.zeros(n_cols)
    for s in range(n_stages):
        f = _factors(b, cols, s)
        stage_work = f @ b.stage_totals[s]
        work += stage_work
        span = stage_work / slots
        cand = b.candidates[s]
        if cand.shape[1]:
            span = np.maximum(span, _start_and_finish(b, s, f, slots))
        spans[s] = span
    return np.maximum(work / slots, _path(b, spans, n_cols)) * SAFETY


def _start_and_finish(b: WorkloadBounds, s: int, f: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Per column, the latest ``B_i / S + d_i`` over stage ``s``'s candidate tasks (module doc)."""
    top = b.top[s]
    running = np.minimum(np.maximum(slots - 1.0, 0.0), top.shape[1] - 1).astype(np.int64)
    longest_running = (f * top[:, running].T).sum(axis=1)
    started = np.maximum(f @ b.before[s] - longest_running[:, None], 0.0) / slots[:, None]
    return (started + f @ b.candidates[s]).max(axis=1)


def _path(b: WorkloadBounds, spans: np.ndarray, n_cols: int) -> np.ndarray:
    """Longest milestone chain per column; a milestone's times are dropped once read."""
    n = len(b.prereqs)
    times: list[np.ndarray | None] = [None] * n
    readers = [0] * n
    for pre in b.prereqs:
        for p in pre:
            readers[p] += 1
    readers[b.end_milestone] += 1
    zero = np.zeros(n_cols)
    for m in b.order:
        start = zero
        for p in b.prereqs[m]:
            t = times[p]
            if t is not None:
                start = np.maximum(start, t)
            readers[p] -= 1
            if readers[p] == 0:
                times[p] = None
        stage = b.complete_stage.get(m)
        if stage is None:
            times[m] = start + b.lags[m]
        else:
            times[m] = start + spans[stage] + b.tails[stage]
    end = times[b.end_milestone]
    return end if end is not None else zero


def _longest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values (all when there are fewer), ascending."""
    if values.size <= k:
        return np.arange(values.size)
    return np.sort(np.argpartition(values, values.size - k)[values.size - k :])


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


__all__ = ["WorkloadBounds", "lower_bounds_s", "prepare", "refined_bound_s", "target_key"]
