"""What a log says about executors coming and going: the inputs the allocation policy needs.

The policy (`perfmodel.simulate.allocation`) decides *when* to ask for or give back an
executor; how long the cluster manager then takes is a property of the cluster, and the log
measures it:

- **start-up**: from a request to the executor's registration. The driver asks for its
  first executors once it has started (its own block manager registers: ``ready_ms``, the
  driver's entry in the log; on YARN, once the application master runs), and those register
  at the times the log shows (``initial_ms``). For executors asked for later, the policy is
  run over the log's own backlog with the log's executors (observed mode): each logged
  executor is matched to the request it answered, in order, and the median gap is the
  start-up (``request_ms``). A log without such requests (a static run) uses the start-up
  of the executors asked for at the driver's start.
- **first task**: from registration to the executor's first task, over the executors that
  registered while tasks were waiting (a locality wait, a slow first offer).
- **kill**: from the policy's decision to kill an idle executor to its removal in the log.

Beside them, per replayed stage, the data its tasks leave on their executors (shuffle files
for shuffle tracking, cached blocks for ``cachedExecutorIdleTimeout``), and per job the
shuffles it uses (executors holding them are kept while it runs).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageNode
from perfmodel.simulate.allocation import (
    AllocationCosts,
    BacklogJob,
    BacklogStage,
    ExecutorTimeline,
    LoggedExecutor,
    TaskColumns,
    executor_timeline,
)
from perfmodel.simulate.allocation_settings import AllocationSettings

_LOCAL_CLUSTER = re.compile(r"^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]$")
_MAP_STAGE_KEY_BASE = 1 << 40
"""Shuffle keys of map stages without operations (their stage id above this, so they
never meet an RDD id)."""


@dataclass(slots=True)
class AllocationFacts:
    """Everything the allocation replay takes from one log, computed once per profile."""

    costs: AllocationCosts = field(default_factory=AllocationCosts)
    stage_shuffle: list[int] = field(default_factory=list)
    """Per replayed stage (workload order): the shuffle its tasks write, -1 for none."""
    stage_caches: list[bool] = field(default_factory=list)
    """Per replayed stage: whether its tasks cache blocks (it first computes a persisted RDD)."""
    job_shuffles: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Per job id: the shuffles of its stages, run or skipped (what Spark marks in use)."""
    capacity: int | None = None
    """The most executors the cluster can hold, where the log says (local-cluster's
    workers, ``spark.cores.max``); None: not known."""
    observed: ExecutorTimeline | None = None
    """Dynamic logs: the policy run over the log's own backlog, against its executors."""
    notes: list[str] = field(default_factory=list)


def measure(
    profile: ApplicationProfile,
    stages: Sequence[StageNode],
    start_ms: float,
    end_ms: float,
    settings: AllocationSettings,
    tasks_per_executor: int,
) -> AllocationFacts:
    """The allocation facts of ``profile`` (``stages``: the replayed stage attempts in
    workload order; times in ms since ``start_ms``; ``end_ms`` likewise). O(tasks log
    tasks) for a dynamic log, O(tasks) otherwise."""
    map_ids = _map_stage_ids(profile)
    keys = _shuffle_keys(profile, map_ids)
    facts = AllocationFacts(
        stage_shuffle=[keys.get(s.stage_id, -1) for s in stages],
        stage_caches=_caching_stages(stages),
        job_shuffles={
            job.job_id: tuple(sorted({keys[s] for s in job.stage_ids if s in keys}))
            for job in profile.jobs.values()
        },
        capacity=_capacity(profile, tasks_per_executor),
    )
    logged = _logged_executors(profile, start_ms)
    if not logged:
        return facts
    src: dict[str, str] = {}
    ready = _ready_ms(profile, start_ms, logged, src)
    cols, submits = _task_columns(stages, start_ms, logged)
    initial, request, observed = _startup(
        profile,
        stages,
        cols,
        start_ms,
        end_ms,
        settings,
        tasks_per_executor,
        logged,
        facts,
        src,
        ready,
    )
    facts.observed = observed
    first = _first_task_ms(cols, submits, logged, src)
    kill = _kill_ms(observed, src)
    facts.costs = AllocationCosts(
        request_ms=request,
        ready_ms=ready,
        initial_ms=initial,
        first_task_ms=first,
        kill_ms=kill,
        sources=src,
    )
    return facts


def _logged_executors(profile: ApplicationProfile, start_ms: float) -> list[LoggedExecutor]:
    out = []
    for e in profile.executors.values():
        if e.executor_id == "driver":
            continue
        added = max(0.0, float(e.added_ms) - start_ms) if e.added_ms is not None else 0.0
        removed = float(e.removed_ms) - start_ms if e.removed_ms is not None else math.inf
        out.append(LoggedExecutor(e.executor_id, added, max(added, removed)))
    out.sort(key=lambda x: (x.added_ms, x.key))
    return out


def _ready_ms(
    profile: ApplicationProfile, start_ms: float, logged: list[LoggedExecutor], src: dict[str, str]
) -> float:
    """When the driver's allocation manager started: its own block manager's registration
    (the log's ``driver`` entry), never after the first executor; 0 without one."""
    driver = profile.executors.get("driver")
    if driver is None or driver.added_ms is None:
        src["ready_ms"] = "the application's start (the log has no driver registration)"
        return 0.0
    ready = max(0.0, float(driver.added_ms) - start_ms)
    first = min((x.added_ms for x in logged), default=math.inf)
    src["ready_ms"] = "log: the driver's registration"
    return min(ready, first)


def _map_stage_ids(profile: ApplicationProfile) -> set[int]:
    """Stages whose output another stage reads (shuffle map stages)."""
    ids = {p for s in profile.stages.values() for p in s.parent_stage_ids}
    ids.update(parent for parent, _ in profile.stage_graph.edges())
    return ids


def _shuffle_keys(profile: ApplicationProfile, map_ids: set[int]) -> dict[int, int]:
    """Stage id → the shuffle it writes. The log names no shuffle, but a map stage's own
    RDD (its newest operation) is the shuffle's: a job that reuses the shuffle declares a
    skipped stage with another id over the same RDD, and an adaptive query runs the map
    stage as a job of its own before the job that reads it; all of them get one key."""
    own: dict[int, int] = {}
    for stage in profile.stages.values():
        ops = [op.op_id for op in stage.op_nodes]
        own[stage.stage_id] = max(ops) if ops else _MAP_STAGE_KEY_BASE + stage.stage_id
    shuffled = {own[s] for s in map_ids if s in own}
    return {sid: key for sid, key in own.items() if key in shuffled or sid in map_ids}


def _caching_stages(stages: Sequence[StageNode]) -> list[bool]:
    """A stage caches blocks when it is the first to compute a persisted RDD; later stages
    that list the same RDD read the cached blocks."""
    seen: set[int] = set()
    out = []
    for stage in stages:
        cached = {op.op_id for op in stage.op_nodes if op.cached}
        out.append(bool(cached - seen))
        seen |= cached
    return out


def _capacity(profile: ApplicationProfile, tasks_per_executor: int) -> int | None:
    master = profile.resources.master.replace(" ", "")
    cores = profile.resources.executor_cores or 1
    m = _LOCAL_CLUSTER.match(master)
    if m:
        return int(m.group(1)) * max(1, int(m.group(2)) // max(cores, 1))
    cores_max = profile.properties.get("spark.cores.max")
    if master.startswith("spark://") and cores_max:
        try:
            return max(1, int(cores_max) // max(cores, 1))
        except ValueError:
            return None
    return None


def _startup(
    profile: ApplicationProfile,
    stages: Sequence[StageNode],
    cols: TaskColumns,
    start_ms: float,
    end_ms: float,
    settings: AllocationSettings,
    tasks_per_executor: int,
    logged: list[LoggedExecutor],
    facts: AllocationFacts,
    src: dict[str, str],
    ready: float,
) -> tuple[tuple[float, ...], float, ExecutorTimeline | None]:
    """(initial arrivals, request → registration, the policy read back over the log)."""
    if not settings.enabled:
        initial = tuple(x.added_ms for x in logged)
        src["initial_ms"] = (
            f"log: the {len(initial)} executor(s) of the static run registered "
            f"{_seconds(initial[0])}–{_seconds(initial[-1])} after the start"
        )
        request = statistics.median(x - ready for x in initial)
        src["request_ms"] = (
            "log: no executor was asked for mid-run (a static run); the median start-up of "
            "those asked for at the driver's start"
        )
        return initial, request, None
    observed = executor_timeline(
        _backlog_stages(stages, start_ms, facts),
        cols,
        settings,
        AllocationCosts(),
        tasks_per_executor,
        jobs=_backlog_jobs(profile, start_ms, facts),
        logged=logged,
        capacity=facts.capacity,
        start_ms=ready,
        end_ms=end_ms,
    )
    spans = observed.executors
    initial = tuple(x.added_ms for x in spans if x.requested_ms == ready)
    later = [x.added_ms - x.requested_ms for x in spans if x.requested_ms > ready]
    later = [d for d in later if d >= 0.0]
    if initial:
        src["initial_ms"] = (
            f"log: the {len(initial)} executor(s) asked for at the start registered "
            f"{_seconds(initial[0])}–{_seconds(initial[-1])} after it"
        )
    if later:
        request = statistics.median(later)
        src["request_ms"] = (
            f"log: median of {len(later)} executor(s) from the request Spark's policy made "
            f"for them (replayed over the log's backlog) to their registration "
            f"(range {_seconds(min(later))}–{_seconds(max(later))})"
        )
    elif initial:
        request = statistics.median(x - ready for x in initial)
        src["request_ms"] = "log: no executor was asked for mid-run; those asked for at the start"
    else:
        request = statistics.median(max(0.0, x.added_ms - ready) for x in logged)
        src["request_ms"] = (
            "log: no executor matched a request; the executors' registrations after the driver's"
        )
    return initial, request, observed


def _backlog_stages(
    stages: Sequence[StageNode], start_ms: float, facts: AllocationFacts
) -> list[BacklogStage]:
    out = []
    for i, stage in enumerate(stages):
        submit = _submit(stage)
        done = float(stage.complete_ms) - start_ms if stage.complete_ms is not None else math.inf
        out.append(
            BacklogStage(
                submit_ms=submit - start_ms if math.isfinite(submit) else 0.0,
                n_tasks=max(stage.num_tasks, len(stage.table)),
                shuffle=facts.stage_shuffle[i],
                caches=facts.stage_caches[i],
                complete_ms=done,
            )
        )
    return out


def _submit(stage: StageNode) -> float:
    if stage.submit_ms is not None:
        return float(stage.submit_ms)
    launch = stage.table.col("launch_ms")
    return float(launch.min()) if len(launch) else math.nan


def _task_columns(
    stages: Sequence[StageNode], start_ms: float, logged: list[LoggedExecutor]
) -> tuple[TaskColumns, np.ndarray]:
    """The replayed stages' task attempts as columns, executors as positions in ``logged``
    (a task that never ended runs to the end), and each task's stage submission. A built
    profile's stages share one set of columns, whose executor codes are looked up once."""
    position = {x.key: i for i, x in enumerate(logged)}
    lookups: dict[int, np.ndarray] = {}
    index: list[np.ndarray] = []
    executor: list[np.ndarray] = []
    launch: list[np.ndarray] = []
    finish: list[np.ndarray] = []
    submit: list[np.ndarray] = []
    for i, stage in enumerate(stages):
        table = stage.table
        n = len(table)
        if not n:
            continue
        lookup = lookups.get(id(table.columns))
        if lookup is None:
            names = table.columns.strings["executor"]
            lookup = np.array([position.get(x, -1) for x in names] or [-1], dtype=np.int64)
            lookups[id(table.columns)] = lookup
        index.append(np.full(n, i, dtype=np.int64))
        executor.append(lookup[table.col("executor")])
        a = table.col("launch_ms") - start_ms
        b = table.col("finish_ms") - start_ms
        launch.append(a)
        finish.append(np.where(np.isnan(b), np.inf, np.maximum(a, b)))
        submit.append(np.minimum(_submit(stage) - start_ms, a))
    if not index:
        empty = np.zeros(0)
        no = empty.astype(np.int64)
        return TaskColumns(no, no, empty, empty), empty
    cols = TaskColumns(
        np.concatenate(index),
        np.concatenate(executor),
        np.concatenate(launch),
        np.concatenate(finish),
    )
    return cols, np.concatenate(submit)


def _backlog_jobs(
    profile: ApplicationProfile, start_ms: float, facts: AllocationFacts
) -> list[BacklogJob]:
    out = []
    for job in profile.jobs.values():
        if job.submit_ms is None:
            continue
        end = float(job.complete_ms) - start_ms if job.complete_ms is not None else math.inf
        out.append(
            BacklogJob(float(job.submit_ms) - start_ms, end, facts.job_shuffles.get(job.job_id, ()))
        )
    return out


def _first_task_ms(
    cols: TaskColumns, submits: np.ndarray, logged: list[LoggedExecutor], src: dict[str, str]
) -> float:
    """Median registration → first task over the executors that sat idle while tasks
    waited all along (an executor that registered while others took the waiting tasks
    says nothing about its own delay). O((tasks + executors) log tasks)."""
    if not len(cols.start_ms):
        src["first_task_ms"] = "no task ran: none"
        return 0.0
    launch = cols.start_ms
    # Tasks waiting over time: +1 at its stage's submission, -1 at its launch; per distinct
    # time, the count after everything at that time.
    times = np.concatenate([submits, launch])
    deltas = np.concatenate([np.ones(len(launch)), -np.ones(len(launch))])
    order = np.argsort(times, kind="stable")
    t_sorted = times[order]
    waiting = np.cumsum(deltas[order])
    last = np.r_[t_sorted[1:] != t_sorted[:-1], True]
    at_times, waiting_at = t_sorted[last], waiting[last]
    drained = at_times[waiting_at <= 0]
    known = cols.executor >= 0
    earliest = np.full(len(logged), np.inf)
    np.minimum.at(earliest, cols.executor[known], launch[known])
    gaps = []
    for x, start in zip(logged, earliest.tolist(), strict=True):
        if math.isinf(start):
            continue
        i = int(np.searchsorted(at_times, x.added_ms, side="right")) - 1
        if i < 0 or waiting_at[i] <= 0:
            continue  # nothing waited when it registered
        j = int(np.searchsorted(drained, x.added_ms, side="right"))
        if j < len(drained) and drained[j] < start:
            continue  # the queue drained before its first task: others took the work
        gaps.append(max(0.0, start - x.added_ms))
    if not gaps:
        src["first_task_ms"] = (
            "log: no executor sat idle while tasks waited; none assumed (an executor "
            "takes its first task as it registers)"
        )
        return 0.0
    value = statistics.median(gaps)
    src["first_task_ms"] = (
        f"log: median of {len(gaps)} executor(s) that registered while tasks waited, "
        f"registration → first task"
    )
    return value


def _kill_ms(observed: ExecutorTimeline | None, src: dict[str, str]) -> float:
    lat = [d for d in (observed.kill_latency_ms if observed else []) if d >= 0.0]
    if not lat:
        src["kill_ms"] = "log: no executor the policy killed was removed; none assumed"
        return 0.0
    src["kill_ms"] = (
        f"log: median of {len(lat)} executor(s), the policy's kill decision → the removal "
        "the log records"
    )
    return statistics.median(lat)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


__all__ = ["AllocationFacts", "measure"]
