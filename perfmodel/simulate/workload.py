"""The replayable workload: a profile compiled into per-stage arrays and a milestone graph.

Compiling once and replaying many times is what makes sweeps cheap and the replay fast:
every task's time is split here into resource components (numpy arrays, one row per
component, one column per task in launch order), and the driver's timeline is turned into
*milestones* (job submitted, stage ready, stage complete, job complete, application end),
each firing a fixed observed lag after its prerequisites. The replay then only rescales
arrays and runs the scheduler; it never touches a `TaskRun` again.

How a task's time is split (the measured/inferred combination documented in
docs/predict.md):

* measured components come straight from task metrics via `decompose_task`: CPU time
  (``cpu``), GC pauses (``gc``), shuffle fetch wait (``network``), shuffle write blocking
  (``disk``) and launch/result overheads (``scheduling``);
* the *unattributed* rest is split by the stage's resource vector when one is given:
  each resource gets the part of its vector share not already covered by measured time
  (its deficit), so measured time is never overridden; names other than cpu, disk,
  network and memory go to ``other``, which no law changes; the disk part is bounded by
  what the task's spilled, read and written bytes explain, beyond that it is CPU;
* without a vector, spill I/O (``spill``: spilled bytes written and read back at the
  host's per-task disk rate) and input/output I/O (``disk``) are estimated from bytes,
  capped at the unattributed time, and the remainder counts as CPU outside the task
  thread (``cpu_other``: PySpark's Python workers, (de)serialisation), which is what
  unattributed time mostly is in practice. The estimate is visible as its own component.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.decomposition import TaskDecompositions, decompose_table
from perfmodel.dag.model import ApplicationProfile, StageKey, StageNode, TaskRun
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.segments import segment_sums
from perfmodel.dag.tasks import TaskTable
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.host_usage import StageCpu, stage_cpu
from perfmodel.simulate.laws import FloatArray
from perfmodel.simulate.thread_demand import (
    StageThreadCpu,
    measure_stages,
    other_load,
    thread_cpu_note,
    waited_note,
)

COMPONENTS: tuple[str, ...] = (
    "cpu",
    "cpu_other",
    "gc",
    "network",
    "disk",
    "spill",
    "scheduling",
    "other",
)
"""Rows of `StageWork.components`, in this order."""
CPU, CPU_OTHER, GC, NETWORK, DISK, SPILL, SCHEDULING, OTHER = range(len(COMPONENTS))

# Milestone kinds.
APP_START, JOB_SUBMIT, STAGE_READY, STAGE_COMPLETE, JOB_COMPLETE, APP_END = range(6)


@dataclass(slots=True)
class StageWork:
    """One stage attempt, ready to be rescaled and scheduled."""

    key: StageKey
    name: str
    priority: tuple[int, int]
    """FIFO order: (first job id, stage id), as Spark's default scheduler orders stages."""
    components: FloatArray
    """Milliseconds, shape (len(COMPONENTS), n_tasks); columns in launch order."""
    peak_memory: FloatArray
    """Per task: execution memory it held at peak (bytes)."""
    memory_spill: FloatArray
    """Per task: in-memory size of the data it spilled (bytes)."""
    disk_spill: FloatArray
    """Per task: on-disk size of the data it spilled (bytes)."""
    read_bytes: FloatArray
    """Per task: bytes it read (input plus shuffle), as stored (serialised, compressed)."""
    concurrency: float
    """Baseline: mean number of tasks running on the same host while these ran (≥ 1)."""
    cpu_demand: float
    """Cores one running task keeps busy when it has the host to itself: measured from the
    host's CPU use where the profile has it, else CPU-like components ÷ run time."""
    disk_share: float
    network_share: float
    observed_ms: float
    ready_milestone: int
    complete_milestone: int
    tail_ms: float
    """Observed gap from the last task's end to the stage's completion."""
    vector: dict[str, float] = field(default_factory=dict)
    other_cores: float = 0.0
    """Cores other load on the host (other processes, the JVM's GC, JIT and other threads)
    asked for beside the stage's tasks, where measured per-thread CPU shows the tasks waited
    for cores: what makes their observed slowdown (`laws.contention_factor`); kept on the
    target. 0 where nothing was measured or they did not wait."""
    taken_cores: float = 0.0
    """Cores load of a higher priority than the application's took on the host while the
    stage's tasks waited (it takes, rather than shares: `rescale.free_cores`); kept on the
    target. 0 where not measured, where they did not wait, or the application was not
    niced."""

    @property
    def n_tasks(self) -> int:
        return int(self.components.shape[1])


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

    @property
    def n_tasks(self) -> int:
        return sum(s.n_tasks for s in self.stages)


def compile_workload(
    profile: ApplicationProfile,
    baseline: ClusterConfig,
    vectors: Mapping[StageKey, ResourceVector] | None = None,
    demands: Mapping[StageKey, float] | None = None,
) -> Workload:
    """Split every task's time into components and lay out the observed timeline.

    ``demands``: cores per task estimated from a bare log (`perfmodel.embed.bare_demand`),
    used for stages whose demand the profile did not measure and no code vector sets."""
    tasks = _AppTasks.of(profile)
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
    if threaded:
        notes.append(thread_cpu_note(threaded))
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
    works = _stage_works(stage_list, owners, tasks, baseline, concurrency, vectors, measured)
    for stage, work in zip(stage_list, works, strict=True):
        thread_measured = threaded.get(stage.key)
        if thread_measured is not None:
            work.cpu_demand = thread_measured.demand
            work.other_cores, work.taken_cores = other_load(
                thread_measured, work.concurrency, baseline.host_cores
            )
            continue
        estimated = demands.get(stage.key) if demands else None
        if estimated is not None and stage.key not in measured and not work.vector:
            work.cpu_demand = estimated

    for job in jobs:
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
    # Application end: after the latest milestone that happened before it.
    candidates = [(ms.observed_ms, i) for i, ms in enumerate(milestones) if ms.kind != APP_END]
    t_end = end - start
    anchor_time, anchor = max((t, i) for t, i in candidates if t <= t_end + 1e-9)
    end_m = len(milestones)
    milestones.append(Milestone(APP_END, -1, [anchor], max(0.0, t_end - anchor_time), t_end))
    return Workload(
        app_id=profile.app_id,
        observed_ms=t_end,
        stages=works,
        milestones=milestones,
        end_milestone=end_m,
        executors=_executor_timeline(profile, baseline, start),
        notes=notes + waited_note([w.other_cores for w in works], [w.taken_cores for w in works]),
        thread_cpu=threaded,
    )


SATURATED = 0.85
"""Host utilisation above which tasks are taken to have been CPU-starved: their measured
cores per task is then a lower bound of what they would use alone."""


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
    profile: ApplicationProfile, tasks: _AppTasks, stages: list[StageNode]
) -> dict[StageKey, StageThreadCpu]:
    """Per stage, its CPU measured per thread (bundles recorded with it; any mode: each
    executor's own threads were read)."""
    if profile.thread_cpu is None or not stages:
        return {}
    found = measure_stages(
        profile.thread_cpu, tasks.table, tasks.parts, [tasks.finished_rows(s) for s in stages]
    )
    return {s.key: m for s, m in zip(stages, found, strict=True) if m is not None}


def measured_demand(cpu: StageCpu, thread_cpu_ms: float) -> float:
    """Cores a task of the stage would keep busy alone, from what the host measured.

    Below saturation the measured cores per task is the demand. On a saturated host it is
    only a lower bound; the task is then taken as two pipelined lanes — its thread (CPU time
    from task metrics) and everything else it caused (a Python worker, GC and JIT threads) —
    which alone run side by side, so the longer lane bounds its time.
    """
    observed = cpu.cores_per_task
    if cpu.utilisation < SATURATED or cpu.cpu_ms <= 0:
        return observed
    longest = max(thread_cpu_ms, cpu.cpu_ms - thread_cpu_ms)  # ≥ cpu_ms / 2 > 0
    return max(observed, cpu.cpu_ms / longest)


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


@dataclass(slots=True)
class _AppTasks:
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
    def of(cls, profile: ApplicationProfile) -> _AppTasks:
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


def _start_ms(profile: ApplicationProfile, tasks: _AppTasks) -> float:
    if profile.start_ms is not None:
        return float(profile.start_ms)
    launch = tasks.table.col("launch_ms")
    times = [float(launch.min())] if launch.size else []
    times += [j.submit_ms for j in profile.jobs.values() if j.submit_ms is not None]
    return float(min(times)) if times else 0.0


def _end_ms(profile: ApplicationProfile, start: float, tasks: _AppTasks) -> float:
    if profile.end_ms is not None:
        return float(profile.end_ms)
    times: list[float] = [start]
    finish = tasks.table.col("finish_ms")
    if tasks.parts.ended.any():
        times.append(float(np.nanmax(finish)))
    times += [s.complete_ms for s in profile.stages.values() if s.complete_ms is not None]
    times += [j.complete_ms for j in profile.jobs.values() if j.complete_ms is not None]
    return float(max(times))


def _replayed_stages(profile: ApplicationProfile, tasks: _AppTasks) -> list[StageNode]:
    """Stage attempts that ran, in submission order (skipped stages ran nothing)."""
    ran = [s for s in profile.stages.values() if s.submit_ms is not None or tasks.any_ended(s)]
    return sorted(ran, key=lambda s: (_submit_of(s, tasks), s.stage_id, s.attempt))


def _submit_of(stage: StageNode, tasks: _AppTasks) -> float:
    if stage.submit_ms is not None:
        return float(stage.submit_ms)
    return tasks.first_launch[tasks.position[stage.key]]


def _stage_end(stage: StageNode, start: float, tasks: _AppTasks) -> float:
    if stage.complete_ms is not None:
        return float(stage.complete_ms) - start
    last = _last_task_end(stage, start, tasks)
    return last if last is not None else _submit_of(stage, tasks) - start


def _last_task_end(stage: StageNode, start: float, tasks: _AppTasks) -> float | None:
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


def _stage_works(
    stages: list[StageNode],
    owners: list[int | None],
    tasks: _AppTasks,
    baseline: ClusterConfig,
    concurrency: np.ndarray,
    vectors: Mapping[StageKey, ResourceVector] | None,
    measured: Mapping[StageKey, StageCpu],
) -> list[StageWork]:
    """Every replayed stage's `StageWork`, computed as application-wide arrays (one column
    per ended task attempt, stage after stage) and handed to each stage as views of its
    columns: the same figures, to the last bit, as the per-stage loop this replaced, which
    spent ~30 numpy calls on each of a many-job log's thousands of small stages."""
    positions = [tasks.position[s.key] for s in stages]
    f_starts, f_counts = tasks.finished_bounds
    counts = f_counts[positions] if positions else np.zeros(0, dtype=np.int64)
    rows = (
        np.concatenate([tasks.finished_rows(s) for s in stages])
        if stages
        else np.zeros(0, dtype=np.int64)
    )
    rows = rows.astype(np.int64, copy=False)
    starts = (np.cumsum(counts) - counts).astype(np.int64)
    n = len(rows)
    parts = tasks.parts
    t = tasks.table
    comp = np.zeros((len(COMPONENTS), n), dtype=np.float64)
    comp[CPU] = parts.cpu[rows]
    comp[GC] = parts.gc[rows]
    comp[NETWORK] = parts.network[rows]
    comp[DISK] = parts.disk[rows]
    comp[SCHEDULING] = parts.scheduling[rows]
    unattributed = parts.unattributed[rows]
    input_bytes = t.col("input_bytes")[rows]
    io_bytes = (input_bytes + t.col("output_bytes")[rows]).astype(np.float64)
    peak = t.col("peak_execution_memory")[rows].astype(np.float64)
    mem_spill = t.col("memory_spill_bytes")[rows].astype(np.float64)
    disk_spill = t.col("disk_spill_bytes")[rows].astype(np.float64)
    read = (input_bytes + t.col("shuffle_read_bytes")[rows]).astype(np.float64)
    remote = t.col("shuffle_remote_read_bytes")[rows].astype(np.float64)
    k = concurrency[rows]
    wall = comp.sum(axis=0) + unattributed
    # A one-task stage's (8, 1) matrix was summed as one contiguous run of 8 (pairwise, in
    # numpy), not row after row: the same here, so its figures stay the same to the bit.
    single = starts[counts == 1]
    if single.size:
        wall[single] = np.ascontiguousarray(comp[:, single].T).sum(axis=1) + unattributed[single]
    wall_sum = segment_sums(wall, starts, counts)
    k_weighted = segment_sums(k * wall, starts, counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        k_stage = np.where((counts > 0) & (wall_sum > 0), k_weighted / wall_sum, 1.0)
    # Bytes → time at the per-task share of the host's disk bandwidth (ms per byte).
    ms_per_byte = 1000.0 * np.maximum(1.0, k_stage) / baseline.disk_bw
    net_ms_per_byte = 1000.0 * np.maximum(1.0, k_stage) / baseline.net_bw
    stage_vectors = [vectors.get(s.key) if vectors else None for s in stages]
    split = [v is not None and bool(v.shares) for v in stage_vectors]
    per_row = np.repeat(ms_per_byte, counts)
    net_per_row = np.repeat(net_ms_per_byte, counts)
    by_bytes = np.repeat(~np.array(split, dtype=bool), counts) if stages else np.ones(0, bool)
    spill = np.minimum(unattributed, disk_spill * 2 * per_row)
    rest = unattributed - spill
    io = np.minimum(rest, io_bytes * per_row)
    comp[SPILL] = np.where(by_bytes, spill, 0.0)
    comp[DISK] += np.where(by_bytes, io, 0.0)
    comp[CPU_OTHER] = np.where(by_bytes, rest - io, 0.0)
    bounds = list(zip(starts.tolist(), (starts + counts).tolist(), strict=True))
    for i, vector in enumerate(stage_vectors):
        if split[i]:
            lo, hi = bounds[i]
            # Code says which resource; bytes bound how much of it can be I/O.
            caps = (disk_spill[lo:hi] * 2 * per_row[lo:hi], io_bytes[lo:hi] * per_row[lo:hi])
            net_cap = remote[lo:hi] * net_per_row[lo:hi]
            _split_by_vector(comp[:, lo:hi], unattributed[lo:hi], vector, caps, net_cap)  # type: ignore[arg-type]
    sums = {c: segment_sums(comp[c], starts, counts) for c in range(len(COMPONENTS))}
    cpu_like = (sums[CPU] + sums[CPU_OTHER] + sums[GC]).tolist()
    run_total = (wall_sum - sums[SCHEDULING]).tolist()
    cpu_sum = sums[CPU].tolist()
    disk_sum = (sums[DISK] + sums[SPILL]).tolist()
    network_sum = sums[NETWORK].tolist()
    totals = wall_sum.tolist()
    k_list = k_stage.tolist()
    works: list[StageWork] = []
    for i, stage in enumerate(stages):
        lo, hi = bounds[i]
        total = totals[i]
        stage_measured = measured.get(stage.key)
        if stage_measured is not None:
            demand = measured_demand(stage_measured, cpu_sum[i])
        else:
            demand = cpu_like[i] / run_total[i] if run_total[i] > 0 else 0.0
        vector = stage_vectors[i]
        job_id = owners[i]
        works.append(
            StageWork(
                key=stage.key,
                name=stage.name,
                priority=(job_id if job_id is not None else 1 << 30, stage.stage_id),
                components=comp[:, lo:hi],
                peak_memory=peak[lo:hi],
                memory_spill=mem_spill[lo:hi],
                disk_spill=disk_spill[lo:hi],
                read_bytes=read[lo:hi],
                concurrency=k_list[i],
                cpu_demand=demand,
                disk_share=disk_sum[i] / total if total > 0 else 0.0,
                network_share=network_sum[i] / total if total > 0 else 0.0,
                observed_ms=stage.duration_ms,
                ready_milestone=-1,
                complete_milestone=-1,
                tail_ms=0.0,
                vector=dict(vector.shares) if vector is not None else {},
            )
        )
    return works


def _split_by_vector(
    comp: np.ndarray,
    unattributed: np.ndarray,
    vector: ResourceVector,
    disk_caps: tuple[np.ndarray, np.ndarray] | None = None,
    network_cap: np.ndarray | None = None,
) -> None:
    """Give each resource the unattributed time its vector share still lacks (its deficit).

    ``disk_caps``: per task, the most spill and input/output disk time its bytes explain (at
    the per-task disk rate). The disk part is spill first (so the memory law still sees it),
    then input/output; beyond both it is CPU outside the task thread, as without a vector.
    Code tells what a frame does, not how many bytes reached a device: a read from the page
    cache runs the same code as one from the disk.

    ``network_cap``: per task, the most network time its remote shuffle bytes explain at the
    per-task share of the baseline's link, less the fetch wait Spark already measured; beyond
    it the time is CPU outside the task thread. On a cluster the frames of a sort-merge join
    or an exchange (Netty, block fetch iterators) are network code, but on a 1 Gbit/s link
    they spend their time decoding rows, not waiting for bytes: without the cap, a 10×
    slower link multiplied CPU time tenfold.
    """
    run = comp[[CPU, GC, NETWORK, DISK]].sum(axis=0) + unattributed
    measured = {
        "cpu": comp[CPU],
        "network": comp[NETWORK],
        "disk": comp[DISK],
        "memory": comp[GC],
    }
    rows = {"cpu": CPU_OTHER, "network": NETWORK, "disk": DISK, "memory": SPILL}
    deficits: dict[str, np.ndarray] = {}
    for name, share in vector.shares.items():
        have = measured.get(name, 0.0)
        deficits[name] = np.maximum(0.0, share * run - have)
    total = sum(deficits.values())
    if isinstance(total, float) or not np.any(total > 0):
        weights = {name: np.full_like(run, share) for name, share in vector.shares.items()}
        total = sum(weights.values())
    else:
        weights = deficits
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, w in weights.items():
            part = np.where(total > 0, unattributed * w / total, 0.0)
            if name == "disk" and disk_caps is not None:
                spill = np.minimum(part, disk_caps[0])
                io = np.minimum(part - spill, disk_caps[1])
                comp[SPILL] += spill
                comp[DISK] += io
                comp[CPU_OTHER] += part - spill - io
                continue
            if name == "network" and network_cap is not None:
                net = np.minimum(part, np.maximum(0.0, network_cap - comp[NETWORK]))
                comp[NETWORK] += net
                comp[CPU_OTHER] += part - net
                continue
            comp[rows.get(name, OTHER)] += part
