"""The replayable workload: a profile compiled into per-stage arrays and a milestone graph.

Compiling once and replaying many times is what makes sweeps cheap and the replay fast:
every task's time is split here into resource components (numpy arrays, one row per
component, one column per task in launch order), and the driver's timeline is turned into
*milestones* (job submitted, stage ready, stage complete, job complete, application end),
each firing a fixed observed lag after its prerequisites. The replay then only rescales
arrays and runs the scheduler; it never touches a `TaskRun` again.

How a task's time is split into components is `perfmodel.simulate.stage_work`.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.model import LOCK_HELD_MS, SHARED_LOCK, ApplicationProfile, StageKey, StageNode
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.tasks import TaskRun
from perfmodel.simulate import (
    allocation_costs,
    cpu_floor,
    executor_background,
    interpreter_lock,
    jit_load,
    laws,
    shared_machine,
    spill_fallback,
)
from perfmodel.simulate.app_tasks import AppTasks
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.host_usage import StageCpu, stage_cpu
from perfmodel.simulate.stage_work import Gates, StageWork, stage_works
from perfmodel.simulate.thread_demand import (
    StageThreadCpu,
    measure_stages,
    other_load,
    thread_cpu_note,
    waited_note,
)

# Milestone kinds.
APP_START, JOB_SUBMIT, STAGE_READY, STAGE_COMPLETE, JOB_COMPLETE, APP_END = range(6)


@dataclass(slots=True)
class Milestone:
    """A point in the application's timeline: fires ``lag_ms`` after all prerequisites."""

    kind: int
    ref: int
    """Job id, or index into `Workload.stages`, or -1."""
    prereqs: list[int]
    lag_ms: float
    observed_ms: float
    """When it happened in the profiled run (ms since application start)."""


@dataclass(slots=True)
class Workload:
    """Everything the replay needs; built once per profile (and vector set)."""

    app_id: str
    observed_ms: float
    stages: list[StageWork]
    milestones: list[Milestone]
    end_milestone: int
    executors: list[tuple[float, float, int]] = field(default_factory=list)
    """Observed executors as (added, removed or inf, cores), ms since start; empty when
    the log has none (local mode, old logs)."""
    notes: list[str] = field(default_factory=list)
    thread_cpu: dict[StageKey, StageThreadCpu] = field(default_factory=dict)
    """Stages whose CPU demand came from measured per-thread CPU, and what was measured."""
    app_cpu_ms: float = 0.0
    """CPU the application's own threads used over its run, measured per thread in local
    mode (`perfmodel.simulate.cpu_floor`); 0 where not measured."""
    allocation: allocation_costs.AllocationFacts | None = None
    """What the log says about executors coming and going (start-up, data they hold), for
    the dynamic allocation replay; None in local mode."""
    machine: shared_machine.SharedMachine | None = None
    """Where the executors ran on one machine (a namespace cluster's): how crowded it was
    (`perfmodel.simulate.shared_machine`); None elsewhere."""
    driver_start: shared_machine.DriverStart | None = None
    """On that machine, the driver's start-up before its first job and the executors that
    started beside it; None elsewhere, or where the driver was not measured."""
    exchanged_bytes: float = 0.0
    """Bytes the ended tasks read of other tasks' output (Spark's shuffle reads, a Dask
    task's inputs), wherever it was: what would cross between peers that the baseline, on
    one peer, fetched at home (`replay.new_transfers_note`)."""

    @property
    def n_tasks(self) -> int:
        return sum(s.n_tasks for s in self.stages)


def compile_workload(
    profile: ApplicationProfile,
    baseline: ClusterConfig,
    vectors: Mapping[StageKey, ResourceVector] | None = None,
    demands: Mapping[StageKey, float] | None = None,
    fallback: Mapping[StageKey, float] | None = None,
    growth_unseen: Collection[StageKey] = (),
) -> Workload:
    """Split every task's time into components and lay out the observed timeline.

    ``demands``: cores per task estimated from a bare log (`perfmodel.spark.bare_demand`),
    used for stages whose demand the profile did not measure and no code vector sets.
    ``fallback``: per stage, the share of its on-CPU samples in an aggregation's fallback
    to sorting (`perfmodel.dag.fallback_samples`), where a bundle has samples.
    ``growth_unseen``: stages of ``demands`` whose estimate does not carry the CPU time a
    task gains beside other tasks (`BareLogEstimates.growth_unseen`); where their demand is
    used, that growth is the host's law (`laws.CO_RUNNING_CPU`), as for a bundle whose
    per-thread CPU shows no JIT to set it by."""
    tasks = AppTasks.of(profile)
    start = _start_ms(profile, tasks)
    end = _end_ms(profile, start, tasks)
    notes: list[str] = []
    if not profile.complete:
        notes.append(
            "the log has no application end (in progress or cut off): observed runtime is "
            "taken to the last event, and unfinished tasks are left out"
        )
    concurrency = task_concurrency(tasks.table)
    stage_list = _replayed_stages(profile, tasks)
    measured = _measured_cpu(profile, baseline, stage_list)
    threaded = _thread_cpu(profile, tasks, stage_list)
    jvm = profile.thread_cpu is None or profile.thread_cpu.jvm_runtime
    if threaded:
        notes.append(thread_cpu_note(threaded, jvm))
    if set(measured) - set(threaded):
        notes.append(
            f"CPU demand per task measured from the host's CPU use for "
            f"{len(set(measured) - set(threaded))} stage(s) (Python workers and JVM threads "
            "included)"
        )
    milestones: list[Milestone] = [Milestone(APP_START, -1, [], 0.0, 0.0)]
    job_submit: dict[int, int] = {}
    job_complete: dict[int, int] = {}
    # Job submissions are anchored to the latest job-level milestone before them: the
    # driver submits after an earlier job ends (sequential code) or while one runs
    # (concurrent actions); either way the observed gap is the driver's own time.
    jobs = sorted(
        (j for j in profile.jobs.values() if j.submit_ms is not None),
        key=lambda j: (j.submit_ms, j.job_id),
    )
    # (time, tie-break, milestone) of job-level milestones, as a heap of those not yet
    # reached by the submissions walked in time order; `anchor_best` is the latest reached.
    job_level: list[tuple[float, int, int]] = [(0.0, 1, 0)]
    anchor_best: tuple[float, int, int] | None = None
    stage_index: dict[StageKey, int] = {}
    works: list[StageWork] = []
    per_job_stages: dict[int, list[int]] = defaultdict(list)
    owners = [_owning_job(profile, stage, _submit_of(stage, tasks)) for stage in stage_list]
    for i, (stage, jid) in enumerate(zip(stage_list, owners, strict=True)):
        if jid is not None:
            per_job_stages[jid].append(i)
        stage_index[stage.key] = i
    works = stage_works(
        stage_list, owners, tasks, baseline, concurrency, vectors, measured, threaded
    )
    if fallback:
        notes.extend(spill_fallback.measure(works, fallback))
    background = executor_background.estimate(profile, tasks.table)
    if background.ratio > 0:
        notes.append(background.note())
        for work in works:
            work.executor_background = background.ratio
    machine = _shared_machine(profile, baseline, tasks, stage_list, start)
    driver = _driver_start(profile, baseline, start) if machine is not None else None
    if machine is not None:
        notes.append(machine.note())
        for work, window in zip(works, machine.stages, strict=True):
            work.machine, work.machine_cores = window, machine.cores
    gamma = 0.0
    if threaded and profile.thread_cpu is not None:
        ratio = jit_load.jit_ratio(profile.thread_cpu, start, end)
        ended = tasks.parts.ended
        gamma = jit_load.co_running_gamma(
            ratio,
            jit_load.mean_co_running(
                tasks.table.col("cpu_ms")[ended], concurrency[ended], baseline.host_cores
            ),
        )
        notes.append(jit_load.gamma_note(ratio, gamma, jvm))
    grown = 0
    for stage, work in zip(stage_list, works, strict=True):
        thread_measured = threaded.get(stage.key)
        if thread_measured is not None:
            work.cpu_demand = thread_measured.demand
            work.co_running = gamma
            work.other_cores, work.taken_cores, work.jvm_other_cores = other_load(
                thread_measured, work.concurrency, baseline.host_cores
            )
            continue
        estimated = demands.get(stage.key) if demands else None
        if estimated is not None and stage.key not in measured and not work.vector:
            work.cpu_demand = estimated
            if stage.key in growth_unseen:
                work.co_running = laws.CO_RUNNING_CPU
                grown += 1
    if grown:
        notes.append(jit_load.estimated_gamma_note(laws.CO_RUNNING_CPU, grown))
    if profile.extra.get(SHARED_LOCK):
        held = profile.extra.get(LOCK_HELD_MS, {})
        lock_note = interpreter_lock.measure(
            works, baseline, held
        ) or interpreter_lock.unmeasured_note(works)
        if lock_note:
            notes.append(lock_note)

    for job in jobs:
        assert job.submit_ms is not None  # only submitted jobs are in `jobs`
        t_submit = float(job.submit_ms) - start
        while job_level and job_level[0][0] <= t_submit + 1e-9:
            reached = heapq.heappop(job_level)
            if anchor_best is None or reached > anchor_best:
                anchor_best = reached
        # A job logged before the application's start (clock skew) anchors on the start.
        anchor_time, _, anchor = anchor_best or (0.0, 1, 0)
        m = len(milestones)
        milestones.append(
            Milestone(JOB_SUBMIT, job.job_id, [anchor], max(0.0, t_submit - anchor_time), t_submit)
        )
        job_submit[job.job_id] = m
        heapq.heappush(job_level, (t_submit, 0, m))
        if job.complete_ms is not None:
            # Completion milestones are created after the stages; reserve the time now so
            # later submissions can anchor on it.
            heapq.heappush(job_level, (float(job.complete_ms) - start, 1, -1 - job.job_id))
    # Stage milestones.
    done_of_id: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    """Stage id → (attempt, complete milestone, time) of its attempts completed so far."""
    for idx, (stage, work) in enumerate(zip(stage_list, works, strict=True)):
        t_submit = float(stage.submit_ms) - start if stage.submit_ms is not None else 0.0
        prereqs: list[tuple[float, int]] = []
        jid = owners[idx]
        if jid is not None and jid in job_submit:
            sj = milestones[job_submit[jid]]
            prereqs.append((sj.observed_ms, job_submit[jid]))
        for parent_id in _parent_ids(profile, stage):
            for _, mi, t_done in done_of_id.get(parent_id, ()):
                if t_done <= t_submit + 1e-9:
                    prereqs.append((t_done, mi))
        for attempt, mi, t_done in done_of_id.get(stage.stage_id, ()):
            if attempt < stage.attempt and t_done <= t_submit + 1e-9:
                prereqs.append((t_done, mi))
        if not prereqs:
            prereqs.append((0.0, 0))
        base = max(t for t, _ in prereqs)
        ready = len(milestones)
        milestones.append(
            Milestone(
                STAGE_READY, idx, [m for _, m in prereqs], max(0.0, t_submit - base), t_submit
            )
        )
        done = len(milestones)
        t_done = _stage_end(stage, start, tasks)
        milestones.append(Milestone(STAGE_COMPLETE, idx, [ready], 0.0, t_done))
        work.ready_milestone, work.complete_milestone = ready, done
        last_task = _last_task_end(stage, start, tasks)
        work.tail_ms = max(0.0, t_done - last_task) if last_task is not None else 0.0
        if stage.complete_ms is not None:
            done_of_id[stage.stage_id].append((stage.attempt, done, t_done))
    # Job completions.
    remap: dict[int, int] = {}
    for job in jobs:
        if job.complete_ms is None:
            continue
        t_done = float(job.complete_ms) - start
        prereqs = [
            (milestones[works[i].complete_milestone].observed_ms, works[i].complete_milestone)
            for i in per_job_stages.get(job.job_id, [])
            if milestones[works[i].complete_milestone].observed_ms <= t_done + 1e-9
        ]
        if not prereqs:
            prereqs = [(milestones[job_submit[job.job_id]].observed_ms, job_submit[job.job_id])]
        base = max(t for t, _ in prereqs)
        m = len(milestones)
        milestones.append(
            Milestone(JOB_COMPLETE, job.job_id, [p for _, p in prereqs], t_done - base, t_done)
        )
        job_complete[job.job_id] = m
        remap[-1 - job.job_id] = m
    for ms in milestones:
        ms.prereqs = [remap.get(p, p) if p < 0 else p for p in ms.prereqs]
    _gate(stage_list, works, tasks, milestones, start)
    # Application end: after the latest milestone that happened before it, and after every
    # job that ended before it. Jobs that ran side by side (Dask futures, a driver's threads)
    # need not end in the order they did: a replay with more slots may end the latest one
    # first, and the application still waited for all of them.
    candidates = [(ms.observed_ms, i) for i, ms in enumerate(milestones) if ms.kind != APP_END]
    t_end = end - start
    anchor_time, anchor = max((t, i) for t, i in candidates if t <= t_end + 1e-9)
    jobs_ended = [
        i
        for i, ms in enumerate(milestones)
        if ms.kind == JOB_COMPLETE and ms.observed_ms <= t_end + 1e-9 and i != anchor
    ]
    end_m = len(milestones)
    milestones.append(
        Milestone(APP_END, -1, [anchor, *jobs_ended], max(0.0, t_end - anchor_time), t_end)
    )
    return Workload(
        app_id=profile.app_id,
        observed_ms=t_end,
        stages=works,
        milestones=milestones,
        end_milestone=end_m,
        executors=_executor_timeline(profile, baseline, start),
        notes=notes
        + waited_note(
            [w.other_cores for w in works],
            [w.taken_cores for w in works],
            [w.jvm_other_cores for w in works],
            jvm,
        ),
        thread_cpu=threaded,
        app_cpu_ms=(
            cpu_floor.application_cpu_ms(profile.thread_cpu, start, end)
            if profile.thread_cpu is not None and baseline.local_mode
            else 0.0
        ),
        machine=machine,
        driver_start=driver,
        exchanged_bytes=float(
            np.nan_to_num(tasks.table.col("shuffle_read_bytes")[tasks.parts.ended]).sum()
        ),
        allocation=(
            None
            if baseline.local_mode
            else allocation_costs.measure(
                profile,
                stage_list,
                start,
                end - start,
                baseline.allocation,
                max(1, baseline.executor_cores // max(baseline.task_cpus, 1)),
            )
        ),
    )


def _shared_machine(
    profile: ApplicationProfile,
    baseline: ClusterConfig,
    tasks: AppTasks,
    stages: list[StageNode],
    start: float,
) -> shared_machine.SharedMachine | None:
    """How crowded the machine the executors shared was, where the bundle says they shared
    the recording's machine and measured their threads (cluster mode only)."""
    found = shared_machine.machine_of(profile.extra)
    if found is None or profile.thread_cpu is None or baseline.local_mode:
        return None
    cores, limits = found
    launch = tasks.table.col("launch_ms")
    finish = tasks.table.col("finish_ms")
    ended = tasks.parts.ended
    if not ended.any():
        return None
    first = float(np.nanmin(launch[ended]))
    last = float(np.nanmax(finish[ended]))
    windows: list[tuple[float, float] | None] = []
    for stage in stages:
        rows = tasks.finished_rows(stage)
        if len(rows) == 0:
            windows.append(None)
            continue
        windows.append((float(np.nanmin(launch[rows])), float(np.nanmax(finish[rows]))))
    executor_cores = {
        e.executor_id: e.cores or baseline.executor_cores for e in profile.executors.values()
    }
    return shared_machine.estimate(
        profile.thread_cpu, cores, limits, executor_cores, start, first, last, windows
    )


def _driver_start(
    profile: ApplicationProfile, baseline: ClusterConfig, start: float
) -> shared_machine.DriverStart | None:
    """The driver's start-up beside the executors starting on the shared machine
    (`shared_machine.DriverStart`), where the bundle measured the driver's threads."""
    found = shared_machine.machine_of(profile.extra)
    submits = [j.submit_ms for j in profile.jobs.values() if j.submit_ms is not None]
    if found is None or profile.thread_cpu is None or not submits:
        return None
    cores, limits = found
    known = [q for q in limits.values() if q is not None]
    quota = float(np.median(known)) if known else float(baseline.executor_cores)
    registered = [
        e.added_ms
        for e in profile.executors.values()
        if e.executor_id != "driver" and e.added_ms is not None
    ]
    return shared_machine.driver_start(
        profile.thread_cpu, cores, quota, start, min(submits), registered
    )


def _measured_cpu(
    profile: ApplicationProfile, baseline: ClusterConfig, stages: list[StageNode]
) -> dict[StageKey, StageCpu]:
    """Per stage, the CPU its tasks used, where the profile measured the host's CPU use.

    Only in local mode: there every task runs on the one measured host (a recording of a
    cluster application's driver says nothing about its executors' hosts).
    """
    usage = profile.host_usage
    if usage is None or not baseline.local_mode or baseline.host_cores_assumed:
        return {}
    return stage_cpu(usage, baseline.host_cores, {s.key: _finished_runs(s) for s in stages})


def _thread_cpu(
    profile: ApplicationProfile, tasks: AppTasks, stages: list[StageNode]
) -> dict[StageKey, StageThreadCpu]:
    """Per stage, its CPU measured per thread (bundles recorded with it; any mode: each
    executor's own threads were read)."""
    if profile.thread_cpu is None or not stages:
        return {}
    found = measure_stages(
        profile.thread_cpu, tasks.table, tasks.parts, [tasks.finished_rows(s) for s in stages]
    )
    return {s.key: m for s, m in zip(stages, found, strict=True) if m is not None}


def _executor_timeline(
    profile: ApplicationProfile, baseline: ClusterConfig, start: float
) -> list[tuple[float, float, int]]:
    """When each executor could run tasks; the driver only counts in local mode."""
    if baseline.local_mode:
        return []
    out: list[tuple[float, float, int]] = []
    for e in profile.executors.values():
        if e.executor_id == "driver":
            continue
        added = max(0.0, float(e.added_ms) - start) if e.added_ms is not None else 0.0
        gone = float(e.removed_ms) - start if e.removed_ms is not None else float("inf")
        out.append((added, gone, e.cores or baseline.executor_cores))
    return sorted(out)


def _start_ms(profile: ApplicationProfile, tasks: AppTasks) -> float:
    if profile.start_ms is not None:
        return float(profile.start_ms)
    launch = tasks.table.col("launch_ms")
    times = [float(launch.min())] if launch.size else []
    times += [j.submit_ms for j in profile.jobs.values() if j.submit_ms is not None]
    return float(min(times)) if times else 0.0


def _end_ms(profile: ApplicationProfile, start: float, tasks: AppTasks) -> float:
    if profile.end_ms is not None:
        return float(profile.end_ms)
    times: list[float] = [start]
    finish = tasks.table.col("finish_ms")
    if tasks.parts.ended.any():
        times.append(float(np.nanmax(finish)))
    times += [s.complete_ms for s in profile.stages.values() if s.complete_ms is not None]
    times += [j.complete_ms for j in profile.jobs.values() if j.complete_ms is not None]
    return float(max(times))


def _gate(
    stage_list: list[StageNode],
    works: list[StageWork],
    tasks: AppTasks,
    ms: list[Milestone],
    start: float,
) -> None:
    """`StageWork.gates` from the stages' `TaskInputs`, for every stage where the profile has
    them, and each stage made ready no earlier than the other stages it reads (so that those
    are runnable first). Inputs from a stage of no replayed task, from one placed after it in
    FIFO order (a later job), or from a task of the stage itself launched after it are left
    out: its readiness, and its own launch order, say when those ran."""
    if all(stage.inputs is None for stage in stage_list):
        return
    index = {}  # stage id → its latest attempt's index
    for i, stage in sorted(enumerate(stage_list), key=lambda p: p[1].attempt):
        index[stage.stage_id] = i
    # Each stage's column of each row of its table (-1: the task did not end), all stages
    # end to end from `offset`; FIFO priorities as ranks (equal priorities, equal ranks).
    offset = np.zeros(len(stage_list) + 1, dtype=np.int64)
    flat = []
    for i, stage in enumerate(stage_list):
        lo, hi = tasks.rows[stage.key]
        col = np.full(hi - lo, -1, dtype=np.int64)
        ended = tasks.finished_rows(stage) - lo
        col[ended] = np.arange(len(ended))
        flat.append(col)
        offset[i + 1] = offset[i] + hi - lo
    column_of_row = np.concatenate(flat)
    rank = np.unique(np.array([w.priority for w in works]), axis=0, return_inverse=True)[1]
    rank = rank.reshape(-1)

    launch = tasks.table.col("launch_ms")
    for i, (stage, work) in enumerate(zip(stage_list, works, strict=True)):
        finished = tasks.finished_rows(stage)
        launched = launch[finished] - start
        rows = finished - tasks.rows[stage.key][0]
        inputs = stage.inputs
        if inputs is None:
            none = np.zeros(len(rows) + 1, dtype=np.int64)
            work.gates = Gates(none, none[:0], none[:0], np.zeros(len(rows)), launched)
            continue
        first, counts = inputs.ptr[rows], inputs.ptr[rows + 1] - inputs.ptr[rows]
        at = np.arange(int(counts.sum())) + np.repeat(first - np.cumsum(counts) + counts, counts)
        owner = np.repeat(np.arange(len(rows)), counts)
        parent = np.array([index.get(int(p), -1) for p in inputs.stage_ids[at]], dtype=np.int64)
        column = np.full(len(at), -1, dtype=np.int64)
        # From the stage itself, or one placed before it in FIFO order (an earlier job).
        picked = (parent >= 0) & ((parent == i) | (rank[parent] < rank[i]))
        column[picked] = column_of_row[offset[parent[picked]] + inputs.rows[at[picked]]]
        # An input from the stage itself was launched before the task (placed before it).
        keep = (column >= 0) & ((parent != i) | (column < owner))
        ptr = np.concatenate([[0], np.cumsum(np.bincount(owner[keep], minlength=len(rows)))])
        lag = inputs.lag_ms[rows]
        work.gates = Gates(ptr.astype(np.int64), parent[keep], column[keep], lag, launched)
        ready = ms[work.ready_milestone]
        waits = [works[p].ready_milestone for p in set(parent[keep].tolist()) - {i}]
        base = max([ms[m].observed_ms for m in ready.prereqs + waits], default=0.0)
        ready.prereqs = sorted(set(ready.prereqs) | set(waits))
        ready.lag_ms = max(0.0, ready.observed_ms - base)


def _replayed_stages(profile: ApplicationProfile, tasks: AppTasks) -> list[StageNode]:
    """Stage attempts that ran, in submission order (skipped stages ran nothing)."""
    ran = [s for s in profile.stages.values() if s.submit_ms is not None or tasks.any_ended(s)]
    return sorted(ran, key=lambda s: (_submit_of(s, tasks), s.stage_id, s.attempt))


def _submit_of(stage: StageNode, tasks: AppTasks) -> float:
    if stage.submit_ms is not None:
        return float(stage.submit_ms)
    return tasks.first_launch[tasks.position[stage.key]]


def _stage_end(stage: StageNode, start: float, tasks: AppTasks) -> float:
    if stage.complete_ms is not None:
        return float(stage.complete_ms) - start
    last = _last_task_end(stage, start, tasks)
    return last if last is not None else _submit_of(stage, tasks) - start


def _last_task_end(stage: StageNode, start: float, tasks: AppTasks) -> float | None:
    last = tasks.last_finish[tasks.position[stage.key]]
    return None if math.isnan(last) else last - start


def _owning_job(profile: ApplicationProfile, stage: StageNode, submit: float) -> int | None:
    """The job that submitted this attempt: the latest of its jobs submitted before it."""
    best: tuple[float, int] | None = None
    for jid in stage.job_ids:
        job = profile.jobs.get(jid)
        if job is None or job.submit_ms is None or job.submit_ms > submit + 1e-6:
            continue
        if best is None or job.submit_ms >= best[0]:
            best = (float(job.submit_ms), jid)
    return best[1] if best else None


def _parent_ids(profile: ApplicationProfile, stage: StageNode) -> list[int]:
    ids = set(stage.parent_stage_ids)
    if stage.stage_id in profile.stage_graph:
        ids.update(profile.stage_graph.predecessors(stage.stage_id))
    return sorted(ids)


def _finished_runs(stage: StageNode) -> list[TaskRun]:
    """The stage's ended attempts as objects (the measured-CPU path of bundles only)."""
    tasks = [t for t in stage.tasks if t.finish_ms is not None]
    tasks.sort(key=lambda t: (t.launch_ms, t.index, t.attempt))
    return tasks
