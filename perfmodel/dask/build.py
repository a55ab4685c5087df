"""A Dask task stream → the framework-independent `ApplicationProfile`.

How Dask's concepts fill the DAG model (docs/dask.md says the same to users):

* a **job** is one graph submission (a ``compute()``, ``persist()`` or ``submit()`` call),
  from the client's call to its last result received (or, for results never gathered, the
  end of its last task);
* a **stage** is one task group of a job (keys sharing a name and token, ``sum-chunk-1a2b``),
  named by its key prefix (``sum-chunk``); its parents are the groups its tasks read from.
  Dask has no stage barrier: a stage is ready when its job's first task started (or, for
  a graph that came with every thread busy, when the scheduler had it), or when its parents
  completed if it only started after that; each task waits for the tasks it read;
* a **task** is one run of a key on a worker thread, from taking the thread to storing its
  result. Its run time is its timed activities: transfers of its inputs from other workers
  (network wait, as Spark's shuffle fetch wait), reading spilled inputs, its function (of
  which its thread's CPU time, as Dask meters it) and spilling its result (disk); the
  worker's overhead around them is scheduling time. Its result's size is the data it
  produced; its inputs' sizes the data it read (remote: held by another worker);
* an **executor** is a worker: its threads are its cores, its memory limit its memory.

Times become epoch milliseconds. Dask adds the worker's estimate of its clock offset to the
scheduler to compute and transfer times; it is taken back out (``delay``), so every time is
on the clock of the host, which the stack samples use too.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from perfmodel.dag.model import (
    SHARED_LOCK,
    ApplicationProfile,
    ExecutorInfo,
    JobNode,
    OperationNode,
    ResourceConfig,
    StageNode,
    TaskInputs,
)
from perfmodel.dag.tasks import ALL_FIELDS, STATUSES, TaskColumns, TaskTable
from perfmodel.dag.thread_spans import ThreadSpans
from perfmodel.dask.stream import DaskStream, Done, Graph, SchedulerFile, Task, WorkerFile

_T = TypeVar("_T")
_COMPUTE, _TRANSFER, _DISK_READ, _DISK_WRITE = "compute", "transfer", "disk-read", "disk-write"
_VALUES = (
    "run_ms cpu_ms shuffle_fetch_wait_ms shuffle_write_ms shuffle_read_bytes "
    "shuffle_remote_read_bytes shuffle_write_bytes memory_spill_bytes disk_spill_bytes"
).split()
"""The measured task-table columns a `_Row` carries, in its ``values`` order."""
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
StageRef = tuple[int, int, str]
"""(session, job id, task group): a stage is one task group of one job."""


@dataclass(slots=True)
class BuiltProfile:
    profile: ApplicationProfile
    spans: ThreadSpans
    tasks: int
    task_end_reasons: dict[str, int]


@dataclass(slots=True)
class _Job:
    job_id: int
    session: int
    graph: Graph
    submit_ms: float
    client: str
    complete_ms: float = 0.0
    failed: bool = False


@dataclass(slots=True)
class _Row:
    """One task attempt before it becomes a table row."""

    stage: StageRef
    key: str
    prefix: str
    worker: str
    attempt: int
    launch_ms: float
    finish_ms: float
    compute: tuple[float, float] | None
    failed: bool
    values: list[float]
    """Measured values, in `_VALUES` order (``cpu_ms`` < 0: not measured)."""
    transfer_ms: float
    """Its inputs' transfer time from other workers (`_thread_times` keeps what it waited)."""
    ready_ms: float | None
    """When its inputs were all on its worker."""
    thread: int | None
    pid: int | None
    deps: list[str]


def build(
    stream: DaskStream,
    *,
    app_name: str = "",
    host_cores: int | None = None,
    local_pids: frozenset[int] = frozenset(),
) -> BuiltProfile:
    """The profile of every session (scheduler) in ``stream``, warnings for what is missing.

    ``host_cores``: cores of the host the recording ran on; ``local_pids``: processes seen
    running there (the stack samplers' targets), which tell a local cluster's workers."""
    profile = ApplicationProfile(
        app_id="dask", app_name=app_name, framework="dask", task_thread_only=True
    )
    sessions = [s for s in stream.schedulers if s.graphs or s.tasks or s.workers]
    if not sessions:
        profile.warnings.append("the recording holds no Dask scheduler records: no task ran")
    jobs: list[_Job] = []
    rows: list[_Row] = []
    for i, session in enumerate(sessions):
        prefix = f"s{i} " if len(sessions) > 1 else ""
        session_jobs = _jobs(i, session, stream, profile.warnings)
        rows += _rows(i, session, session_jobs, stream, prefix, profile.warnings)
        jobs += session_jobs  # with the job `_rows` adds for tasks of no graph
        for address, w in session.workers.items():
            removed = session.removed.get(address)
            profile.executors[prefix + address] = ExecutorInfo(
                executor_id=prefix + address,
                host=w.host,
                cores=w.nthreads or None,
                memory_bytes=w.memory_limit or None,
                added_ms=w.t * 1000.0,
                removed_ms=removed * 1000.0 if removed is not None else None,
            )
    jobs.sort(key=lambda j: (j.submit_ms, j.session))
    renumber = {(j.session, j.job_id): n for n, j in enumerate(jobs)}
    for n, job in enumerate(jobs):
        job.job_id = n
    for row in rows:
        row.stage = (row.stage[0], renumber[row.stage[:2]], row.stage[2])
    _complete_jobs(jobs, rows, stream)
    columns, spans, stage_of = _columns(rows, profile)
    _stages(profile, rows, columns, stage_of, jobs)
    stages_of: dict[int, list[int]] = {}
    for stage in profile.stages.values():
        stages_of.setdefault(stage.job_ids[0], []).append(stage.stage_id)
    for job in jobs:
        profile.jobs[job.job_id] = JobNode(
            job_id=job.job_id,
            stage_ids=sorted(stages_of.get(job.job_id, [])),
            submit_ms=job.submit_ms,
            complete_ms=job.complete_ms,
            result="FAILED" if job.failed else "SUCCEEDED",
            description=f"{len(job.graph.tasks)} task(s), {len(job.graph.keys)} result(s)",
        )
    profile.start_ms = min((j.submit_ms for j in jobs), default=None)
    profile.end_ms = max((j.complete_ms for j in jobs), default=profile.start_ms)
    # Removed once every task had ended (its own last one then, clocks apart): not lost.
    last = {r.worker: r.finish_ms for r in sorted(rows, key=lambda r: r.finish_ms)}
    done = min(profile.end_ms or 0.0, max(last.values(), default=0.0))
    for name, executor in profile.executors.items():
        if (executor.removed_ms or -np.inf) >= done or last.get(name, -np.inf) >= done:
            executor.removed_ms = None
    profile.complete = bool(sessions) and all(s.closed_t is not None for s in sessions)
    if sessions and not profile.complete:
        profile.warnings.append(
            "the scheduler did not close in this recording (killed, or still running): "
            "figures cover the tasks recorded up to its last record"
        )
    if sessions:
        profile.app_id = f"dask-{sessions[0].pid}" if sessions[0].pid else "dask"
        profile.framework_version = sessions[0].version
        profile.properties["dask.scheduler.address"] = sessions[0].address
    if isinstance(host_cores, int) and host_cores > 0:
        profile.extra["host_cores"] = host_cores
    profile.extra[SHARED_LOCK] = True  # one GIL per worker (docs/dask.md)
    profile.resources = _resources(profile, sessions, host_cores, local_pids)
    profile.event_count = stream.records
    profile.event_counts = {
        "graph": sum(len(s.graphs) for s in stream.schedulers),
        "task": sum(len(s.tasks) for s in stream.schedulers),
        "submit": sum(len(c.submits) for c in stream.clients),
        "gathered": sum(len(c.gathers) for c in stream.clients),
    }
    reasons = Counter("erred" if r.failed else "Success" for r in rows)
    return BuiltProfile(profile, spans, len(rows), dict(sorted(reasons.items())))


def _jobs(
    session_no: int, session: SchedulerFile, stream: DaskStream, warnings: list[str]
) -> list[_Job]:
    """One job per graph submission, submitted when its client called (matched by the keys
    it asked for), else when the scheduler received it."""
    clients = {c.client_id: c for c in stream.clients if c.client_id}
    first_submit: dict[tuple[str, str], int] = {}
    for client in clients.values():
        for n, submit in enumerate(client.submits):
            for key in submit.keys:
                first_submit.setdefault((client.client_id, key), n)
    used: set[tuple[str, int]] = set()
    jobs: list[_Job] = []
    unmatched = 0
    for n, graph in enumerate(session.graphs):
        submit_ms = graph.t * 1000.0
        found = [first_submit.get((graph.client, k)) for k in graph.keys]
        free = [c for c in found if c is not None and (graph.client, c) not in used]
        if free:
            used.add((graph.client, min(free)))
            submit_ms = min(submit_ms, clients[graph.client].submits[min(free)].t * 1000.0)
        else:
            unmatched += 1
        jobs.append(_Job(n, session_no, graph, submit_ms, graph.client))
    if unmatched:
        warnings.append(
            f"{unmatched} of {len(session.graphs)} graph submission(s) have no client record: "
            "their jobs start when the scheduler received them"
        )
    return jobs


def _rows(
    session_no: int,
    session: SchedulerFile,
    jobs: list[_Job],
    stream: DaskStream,
    prefix: str,
    warnings: list[str],
) -> list[_Row]:
    """Each recorded task end as a row: its job, its timed parts and the bytes it moved."""
    job_of_key: dict[str, list[tuple[float, int]]] = {}
    for job in jobs:
        for key in job.graph.tasks:
            job_of_key.setdefault(key, []).append((job.graph.t * 1000.0, job.job_id))
    files = {w.worker: w for w in stream.workers if w.worker}
    spilled = {address: _spill_deltas(w) for address, w in files.items()}
    runs: Counter[tuple[str, str]] = Counter()  # (worker, key) → records used so far
    attempts: Counter[str] = Counter()
    last_of_key: dict[str, Task] = {}
    seen: set[tuple[str, str, tuple[tuple[float, float], ...]]] = set()
    orphan: int | None = None
    out: list[_Row] = []
    for task in session.tasks:
        stamp = (task.key, task.worker, tuple((s.start, s.stop) for s in task.startstops))
        if stamp in seen or not task.startstops:
            continue  # a record written twice, or one with nothing timed
        seen.add(stamp)
        attempt = attempts[task.key]
        attempts[task.key] += 1
        file = files.get(task.worker)
        run = runs[(task.worker, task.key)]
        runs[(task.worker, task.key)] += 1
        done = _nth(file.done, task.key, run) if file is not None else None
        cpu = _nth(file.cpu_s, task.key, run) if file is not None else None
        parts = _parts(task, done)
        launch = parts[0]
        # The latest submission before it ran; one received up to a second after it (the
        # scheduler's clock) only where none came before: a later graph recomputing the key
        # must not take an earlier graph's run of it.
        sent = job_of_key.get(task.key, ())
        before = [j for t, j in sent if t <= launch]
        soon_after = [j for t, j in sent if launch < t <= launch + 1e3]
        job_id = before[-1] if before else (soon_after[0] if soon_after else None)
        if job_id is None:
            if orphan is None:
                orphan = len(jobs)
                jobs.append(_Job(orphan, session_no, Graph([], [], launch / 1000.0), launch, ""))
                warnings.append("tasks of no recorded graph submission form one job of their own")
            job_id = orphan
            jobs[orphan].submit_ms = min(jobs[orphan].submit_ms, launch)
        read = remote = 0
        for dep in task.deps:
            source = last_of_key.get(dep)
            if source is not None and source.nbytes:
                read += source.nbytes
                remote += source.nbytes if source.worker != task.worker else 0
        last_of_key[task.key] = task
        spill = spilled.get(task.worker, {}).get((task.key, run), (0, 0))
        added = session.workers.get(task.worker)
        failed = task.status != "memory"
        jobs[job_id].failed |= failed
        values = [parts[3], -1.0 if cpu is None else cpu * 1000.0, 0.0, parts[5], read, remote]
        values += [max(0, task.nbytes or 0), *spill]
        out.append(
            _Row(
                stage=(session_no, job_id, task.group or task.prefix),
                key=task.key,
                prefix=task.prefix,
                worker=prefix + task.worker,
                attempt=attempt,
                launch_ms=launch,
                finish_ms=parts[1],
                compute=parts[2],
                failed=failed,
                values=values,
                transfer_ms=parts[4],
                ready_ms=done.ready * 1000.0 if done is not None and done.ready else None,
                thread=task.thread,
                pid=added.pid if added is not None else None,
                deps=task.deps,
            )
        )
    _thread_times(out)
    return out


def _thread_times(rows: list[_Row]) -> None:
    """When each task held its thread: from when the thread was free and the task could
    run, to its result stored. Of its inputs' transfers only what the thread waited for
    counts (network wait): Dask moves data on the worker's event loop, beside the threads'
    work. From when it could run to taking the thread is the worker's overhead (scheduling
    time); a thread idle because nothing could run, or whose last result is stored after
    its next task's function began (late, by the event loop), holds no task."""
    on_thread: dict[tuple[str, int | None], list[_Row]] = {}
    for row in rows:
        on_thread.setdefault((row.worker, row.thread), []).append(row)
    for (_, thread), runs in on_thread.items():
        runs.sort(key=lambda r: r.launch_ms)
        free = -np.inf if thread is not None else np.nan
        for row, after in zip(runs, runs[1:], strict=False):  # stored late, thread moved on
            if thread is not None and row.compute and after.compute:
                row.finish_ms = max(min(row.finish_ms, after.compute[0]), row.compute[1])
        for row in runs:
            began = row.launch_ms
            runnable = min(row.ready_ms or began, began)
            if free != free:  # thread unknown: the transfers just before it
                launch = began - row.transfer_ms
            else:
                launch = min(max(free, runnable - row.transfer_ms), began)
                free = row.finish_ms
            waited = min(row.transfer_ms, max(0.0, runnable - launch))
            row.launch_ms = launch
            row.values[0] += waited  # run time
            row.values[2] = waited  # network wait


def _nth(table: dict[str, list[_T]], key: str, n: int) -> _T | None:
    """The ``n``-th record of ``key`` (a key computed twice on one worker has two)."""
    items = table.get(key)
    return items[n] if items is not None and n < len(items) else None


def _spill_deltas(worker: WorkerFile) -> dict[tuple[str, int], tuple[int, int]]:
    """Per (key, its n-th run on the worker): how much the worker's spilled bytes grew (in
    memory, on disk) while it stored the result, from its totals after each task."""
    records = sorted(
        ((d.t, key, n, d) for key, items in worker.done.items() for n, d in enumerate(items)),
        key=lambda r: r[0],
    )
    out: dict[tuple[str, int], tuple[int, int]] = {}
    before = (0, 0)
    for _, key, n, d in records:
        now = (int(d.spilled[0]), int(d.spilled[1])) if d.spilled and len(d.spilled) > 1 else before
        out[(key, n)] = (max(0, now[0] - before[0]), max(0, now[1] - before[1]))
        before = now
    return out


def _parts(
    task: Task, done: Done | None
) -> tuple[float, float, tuple[float, float] | None, float, float, float]:
    """(start, finish, function span, run ms, transfer ms, disk ms) of a task, epoch ms,
    from taking its thread to storing its result; its inputs' transfers come before and are
    not in the run time yet (`_count_transfers`).

    Its timed activities (reading spilled inputs, its function, spilling its result) are its
    run time, laid end to end. Where the worker recorded when the task took a thread and
    when its result was stored, the task spans those; what lies between beyond its
    activities is the worker's own overhead (scheduling time).
    """
    delay = done.delay if done is not None else 0.0
    spans = dict.fromkeys((_TRANSFER, _DISK_READ, _DISK_WRITE), 0.0)
    compute: tuple[float, float] | None = None
    for s in task.startstops:
        shift = delay if s.action in (_COMPUTE, _TRANSFER) else 0.0
        start, stop = (s.start - shift) * 1000.0, (s.stop - shift) * 1000.0
        if s.action == _COMPUTE and compute is None:
            compute = (start, max(stop, start))
        elif s.action in spans:
            spans[s.action] += max(stop - start, 0.0)
    transfer, disk = spans[_TRANSFER], spans[_DISK_READ] + spans[_DISK_WRITE]
    if compute is None:
        first = min(s.start for s in task.startstops) * 1000.0
        last = max(first, max(s.stop for s in task.startstops) * 1000.0)
        return first, last, None, last - first, 0.0, disk
    begin = compute[0] - spans[_DISK_READ]
    finish = compute[1] + spans[_DISK_WRITE]
    if done is not None:
        if done.began is not None:
            begin = min(begin, done.began * 1000.0)
        finish = max(finish, done.t * 1000.0)
    return begin, finish, compute, disk + compute[1] - compute[0], transfer, disk


def _complete_jobs(jobs: list[_Job], rows: list[_Row], stream: DaskStream) -> None:
    """A job completes when its client first received each of its results after submitting
    it; results never gathered complete it at its last task's end."""
    last_task: dict[int, float] = {}
    for row in rows:
        last_task[row.stage[1]] = max(last_task.get(row.stage[1], 0.0), row.finish_ms)
    gathered: dict[tuple[str, str], list[float]] = {}
    for client in stream.clients:
        for g in client.gathers:
            for key in g.keys:
                gathered.setdefault((client.client_id, key), []).append(g.t * 1000.0)
    for times in gathered.values():
        times.sort()
    for job in jobs:
        end = max(last_task.get(job.job_id, job.submit_ms), job.submit_ms)
        for key in job.graph.keys:
            times = gathered.get((job.client, key), [])
            at = int(np.searchsorted(times, job.submit_ms))
            if at < len(times):
                end = max(end, times[at])
        job.complete_ms = end


def _columns(
    rows: list[_Row], profile: ApplicationProfile
) -> tuple[TaskColumns, ThreadSpans, dict[StageRef, int]]:
    """The rows as task columns, stage after stage (stage ids by job, then first launch),
    each stage in launch order; and where each task's function ran."""
    first: dict[StageRef, float] = {}
    for row in rows:
        first[row.stage] = min(first.get(row.stage, row.launch_ms), row.launch_ms)
    stage_of = {k: n for n, k in enumerate(sorted(first, key=lambda k: (k[1], first[k], k[2])))}
    rows.sort(key=lambda r: (stage_of[r.stage], r.launch_ms, r.key))
    n = len(rows)
    stage_ids = np.fromiter((stage_of[r.stage] for r in rows), np.int64, n)
    starts = np.searchsorted(stage_ids, stage_ids)  # each row's stage's first row
    executors = {e: i for i, e in enumerate(dict.fromkeys(r.worker for r in rows))}
    hosts: dict[str, int] = {}
    host_of = {e: profile.executors[e].host if e in profile.executors else "" for e in executors}
    values = np.array([r.values for r in rows], dtype=np.float64).reshape(n, len(_VALUES))
    empty = TaskColumns.empty().arrays
    arrays = {name: np.zeros(n, dtype=empty[name].dtype) for name in ALL_FIELDS}
    arrays["task_id"] = np.arange(n, dtype=np.int64)
    arrays["index"] = np.arange(n, dtype=np.int64) - starts
    arrays["attempt"] = np.fromiter((r.attempt for r in rows), np.int64, n)
    arrays["launch_ms"] = np.fromiter((r.launch_ms for r in rows), np.float64, n)
    arrays["finish_ms"] = np.fromiter((r.finish_ms for r in rows), np.float64, n)
    failed = np.fromiter((r.failed for r in rows), np.bool_, n)
    arrays["status"] = np.where(failed, STATUSES.index("FAILED"), 0).astype(np.int32)
    arrays["executor"] = np.fromiter((executors[r.worker] for r in rows), np.int32, n)
    arrays["host"] = np.fromiter(
        (hosts.setdefault(host_of[r.worker], len(hosts)) for r in rows), np.int32, n
    )
    arrays["reported"][:] = True
    arrays["has_cpu_time"] = values[:, _VALUES.index("cpu_ms")] >= 0
    for i, name in enumerate(_VALUES):
        arrays[name] = np.maximum(values[:, i], 0.0).astype(empty[name].dtype)
    columns = TaskColumns(
        arrays=arrays,
        strings={
            "status": list(STATUSES),
            "executor": list(executors),
            "host": list(hosts),
            "locality": [""],
            "task_type": [""],
        },
        stage_id=stage_ids,
        stage_attempt=np.zeros(n, dtype=np.int64),
        failure_reasons={int(i): "erred" for i in np.flatnonzero(failed)},
    )
    keep = [i for i, r in enumerate(rows) if r.thread is not None and r.compute and r.pid]
    spans = ThreadSpans(
        pid=np.array([rows[i].pid for i in keep], dtype=np.int64),
        thread=np.array([rows[i].thread for i in keep], dtype=np.int64),
        start_ms=np.array([rows[i].compute[0] for i in keep], dtype=np.float64),  # type: ignore[index]
        stop_ms=np.array([rows[i].compute[1] for i in keep], dtype=np.float64),  # type: ignore[index]
        task_id=np.array(keep, dtype=np.int64),
        stage_id=stage_ids[np.array(keep, dtype=np.int64)],
        executor_of_pid={r.pid: r.worker for r in rows if r.pid is not None},
    )
    return columns, spans, stage_of


def _stages(
    profile: ApplicationProfile,
    rows: list[_Row],
    columns: TaskColumns,
    stage_of: dict[StageRef, int],
    jobs: list[_Job],
) -> None:
    """Stage nodes over row ranges of ``columns``, the tasks each task read (the latest run
    of each dependency begun before it) and so the stages' parents, and when each stage was
    ready (see the module's docstring)."""
    bounds: dict[int, list[int]] = {}
    runs: defaultdict[tuple[int, str], list[int]] = defaultdict(list)  # (session, key) → rows
    for i, row in enumerate(rows):
        bounds.setdefault(stage_of[row.stage], [i, i + 1])[1] = i + 1
        runs[row.stage[0], row.key].append(i)
    ref_of = {sid: ref for ref, sid in stage_of.items()}
    submit_of = {j.job_id: j.submit_ms for j in jobs}
    first_launch: dict[int, float] = {}
    for sid, (lo, hi) in sorted(bounds.items()):
        session, job, group = ref_of[sid]
        ptr, parent, at, lag = [0], [], [], []  # lag: inputs stored → the task could run
        for row in rows[lo:hi]:
            read = []
            for dep in row.deps:
                ran = [j for j in runs[session, dep] if rows[j].launch_ms <= row.launch_ms]
                if ran:
                    read.append(j := max(ran, key=lambda j: rows[j].launch_ms))
                    parent.append(p := stage_of[rows[j].stage])
                    at.append(j - bounds[p][0])
            ptr.append(len(parent))
            ended = max((rows[j].finish_ms for j in read), default=row.ready_ms or 0.0)
            lag.append(max(0.0, (row.ready_ms or ended) - row.transfer_ms - ended))
        table = TaskTable(columns, lo, hi)
        ints = [np.array(a, dtype=np.int64) for a in (ptr, parent, at)]
        stage = StageNode(
            stage_id=sid,
            attempt=0,
            name=rows[lo].prefix,
            num_tasks=hi - lo,
            parent_stage_ids=sorted(set(parent) - {sid}),
            job_ids=[job],
            complete_ms=float(table.finish_ms.max()),
            status="FAILED" if bool((table.status != 0).any()) else "COMPLETE",
            details=group,
            op_nodes=[OperationNode(op_id=sid, name=rows[lo].prefix, scope_name=group)],
            table=table,
            inputs=TaskInputs(ints[0], ints[1], ints[2], np.array(lag)),
        )
        profile.stages[(sid, 0)] = stage
        profile.stage_graph.add_node(sid)
        for p in stage.parent_stage_ids:
            profile.stage_graph.add_edge(p, sid)
        launch = float(table.launch_ms.min())
        first_launch[job] = min(first_launch.get(job, launch), launch)
    # A graph that came while every thread was busy waited for one: slots, not a lag, say
    # when its first task ran; it is ready once the scheduler had it (plus the first's delay).
    starts, ends = (np.sort(columns.arrays[name]) for name in ("launch_ms", "finish_ms"))
    came = {j.job_id: max(j.submit_ms, j.graph.t * 1e3) for j in jobs if j.job_id in first_launch}
    delay = min(((t, first_launch[j] - t) for j, t in came.items()), default=(0.0, 0.0))[1]
    threads = sum(e.cores or 1 for e in profile.executors.values())
    for job, t in came.items():
        if np.searchsorted(starts, t, "right") - np.searchsorted(ends, t, "right") >= threads:
            first_launch[job] = min(first_launch[job], t + delay)
    for stage in profile.stages.values():
        job = stage.job_ids[0]
        launch = float(stage.table.launch_ms.min())
        parents = [profile.stages[(p, 0)] for p in stage.parent_stage_ids if ref_of[p][1] == job]
        done = [p.complete_ms or 0.0 for p in parents]
        # Slots, not a lag, decide when a stage that began after its parents ended runs.
        ready = max(done) if done and max(done) <= launch else first_launch[job]
        stage.submit_ms = min(max(ready, submit_of[job]), launch)


def _resources(
    profile: ApplicationProfile,
    sessions: list[SchedulerFile],
    host_cores: int | None,
    local_pids: frozenset[int],
) -> ResourceConfig:
    """Workers, threads and memory as registered (`sources` says so); data moves by socket."""
    cfg = ResourceConfig(executors_exchange_data=True)
    src = cfg.sources
    workers = list(profile.executors.values())
    cfg.master = " ".join(f"dask {s.address}" for s in sessions if s.address)
    if cfg.master:
        src["master"] = "recorded: scheduler address"
    if not workers:
        return cfg
    points = sorted(
        [(w.added_ms or 0.0, 1) for w in workers]
        + [(w.removed_ms, -1) for w in workers if w.removed_ms is not None]
    )
    cfg.executor_instances = max(1, max(np.cumsum([d for _, d in points]).tolist()))
    src["executor_instances"] = "recorded: most workers registered at once"
    threads = [w.cores for w in workers if w.cores]
    if threads:
        cfg.executor_cores = Counter(threads).most_common(1)[0][0]
        cfg.total_slots = cfg.executor_instances * cfg.executor_cores
        src["executor_cores"] = "recorded: threads per worker (most common)"
        src["total_slots"] = "workers × threads per worker"
    memory = [w.memory_bytes for w in workers if w.memory_bytes]
    if memory:
        cfg.executor_memory_bytes = Counter(memory).most_common(1)[0][0]
        src["executor_memory_bytes"] = "recorded: worker memory limit (most common)"
    hosts = {w.host for w in workers if w.host}
    cfg.hosts = len(hosts) or None
    if cfg.hosts:
        src["hosts"] = "recorded: distinct worker hosts"
    pids = {w.pid for s in sessions for w in s.workers.values()}
    sampled_here = bool(local_pids) and None not in pids and pids <= local_pids
    if cfg.hosts == 1 and host_cores is not None and (sampled_here or hosts <= _LOOPBACK):
        cfg.hosts_fixed = True
        src["hosts"] = (
            "recorded: every worker on the recording host (a local cluster; a what-if keeps "
            "this one machine)"
        )
    return cfg
