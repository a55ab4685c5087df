"""A Dask task stream → the framework-independent `ApplicationProfile`.

How Dask's concepts fill the DAG model (docs/dask.md says the same to users):

* a **job** is one graph submission (a ``compute()``, ``persist()`` or ``submit()`` call):
  submitted when the client called, complete when the client received its last result
  (or, for results never gathered, when the last of its tasks ended);
* a **stage** is one task group of a job (tasks whose keys share a name and token, e.g.
  ``sum-chunk-1a2b``), named by its key prefix (``sum-chunk``); its parents are the
  groups its tasks' dependencies belong to. Dask has no stage barrier: a stage is ready
  when the job is submitted, or when its parents completed if it only started after that;
* a **task** is one run of a key on a worker thread. Its time on the worker is its
  dependencies' transfers from other workers (network wait, like Spark's shuffle fetch
  wait), reading spilled inputs back, the function call (run time, of which the thread's
  CPU time as Dask metered it) and spilling its result (disk: reading and writing spilled
  data). ``nbytes`` of its result is the data it produced for its dependents; the sizes of
  its dependencies, the data it read (remote: those held by another worker);
* an **executor** is a worker: its threads are its cores, its memory limit its memory.

Times are converted to epoch milliseconds; compute and transfer times are moved back by
the worker's estimate of its clock offset to the scheduler (``delay``), which Dask adds,
so every time is on the host clock the stack samples use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from perfmodel.dag.model import (
    ApplicationProfile,
    ExecutorInfo,
    JobNode,
    OperationNode,
    ResourceConfig,
    StageNode,
)
from perfmodel.dag.tasks import ALL_FIELDS, STATUSES, TaskColumns, TaskTable
from perfmodel.dask.stream import DaskStream, Done, Graph, SchedulerFile, Task, WorkerFile

_T = TypeVar("_T")
_COMPUTE, _TRANSFER, _DISK_READ, _DISK_WRITE = "compute", "transfer", "disk-read", "disk-write"


@dataclass(slots=True)
class ThreadSpans:
    """Where each task's function ran: process, thread and time, for tying stack samples to
    tasks (`perfmodel.dask.samples`). One entry per task row with a known thread."""

    pid: np.ndarray
    thread: np.ndarray
    start_ms: np.ndarray
    stop_ms: np.ndarray
    task_id: np.ndarray
    stage_id: np.ndarray
    executor_of_pid: dict[int, str] = field(default_factory=dict)


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
    complete_ms: float | None = None
    failed: bool = False


@dataclass(slots=True)
class _Row:
    """One task attempt before it becomes a table row."""

    stage: tuple[int, int, str]
    """(session, job id, group): a stage is one task group of one job."""
    key: str
    worker: str
    attempt: int
    launch_ms: float
    finish_ms: float
    compute: tuple[float, float] | None
    failed: bool
    values: dict[str, float]
    thread: int | None
    pid: int | None
    deps: list[str]
    prefix: str


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
    warnings = profile.warnings
    sessions = [s for s in stream.schedulers if s.graphs or s.tasks or s.workers]
    if not sessions:
        warnings.append("the recording holds no Dask scheduler records: no task ran")
    many = len(sessions) > 1
    jobs: list[_Job] = []
    rows: list[_Row] = []
    for i, session in enumerate(sessions):
        prefix = f"s{i} " if many else ""
        session_jobs = _jobs(i, session, stream, warnings)
        rows.extend(_rows(i, session, session_jobs, stream, prefix, warnings))
        jobs.extend(session_jobs)  # with the job `_rows` adds for tasks of no graph
        _executors(profile, session, prefix)
    jobs.sort(key=lambda j: (j.submit_ms, j.session))
    renumber = {(j.session, j.job_id): n for n, j in enumerate(jobs)}
    for n, job in enumerate(jobs):
        job.job_id = n
    for row in rows:
        s, j, g = row.stage
        row.stage = (s, renumber[(s, j)], g)
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
            description=_describe(job.graph),
        )
    submits = [j.submit_ms for j in jobs]
    ends = [j.complete_ms for j in jobs if j.complete_ms is not None]
    profile.start_ms = min(submits) if submits else None
    profile.end_ms = max(ends) if ends else profile.start_ms
    for executor in profile.executors.values():
        if executor.removed_ms is not None and executor.removed_ms >= (profile.end_ms or 0.0):
            executor.removed_ms = None  # shut down with the cluster, after the run: not lost
    profile.complete = bool(sessions) and all(s.closed_t is not None for s in sessions)
    if sessions and not profile.complete:
        warnings.append(
            "the scheduler did not close in this recording (killed, or still running): "
            "figures cover the tasks recorded up to its last record"
        )
    first = sessions[0] if sessions else None
    if first is not None:
        profile.app_id = f"dask-{first.pid}" if first.pid else "dask"
        profile.framework_version = first.version
        profile.properties["dask.scheduler.address"] = first.address
    if isinstance(host_cores, int) and host_cores > 0:
        profile.extra["host_cores"] = host_cores
    profile.resources = _resources(profile, sessions, host_cores, local_pids)
    reasons = Counter("Success" if not r.failed else "erred" for r in rows)
    profile.event_count = stream.records
    profile.event_counts = dict(Counter(_kind_counts(stream)))
    return BuiltProfile(profile, spans, len(rows), dict(sorted(reasons.items())))


def _kind_counts(stream: DaskStream) -> dict[str, int]:
    return {
        "graph": sum(len(s.graphs) for s in stream.schedulers),
        "task": sum(len(s.tasks) for s in stream.schedulers),
        "worker-added": sum(len(s.workers) for s in stream.schedulers),
        "submit": sum(len(c.submits) for c in stream.clients),
        "gathered": sum(len(c.gathers) for c in stream.clients),
    }


def _describe(graph: Graph) -> str:
    names = Counter(_prefix_of(k) for k in graph.keys)
    shown = ", ".join(f"{n}×{k}" if n > 1 else k for k, n in names.most_common(3))
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{len(graph.tasks)} task(s) for {shown}{more}"


def _prefix_of(key: str) -> str:
    """Roughly Dask's `key_split` of a stored key (a plain key, or a tuple key's text), for
    a job's description; stages take the prefix the scheduler recorded."""
    name = key[2:].split("'", 1)[0] if key.startswith("('") else key
    words = name.split("-")
    kept = [words[0]]
    for word in words[1:]:
        if len(word) >= 8 and all(c in "0123456789abcdef" for c in word):
            break
        kept.append(word)
    return "-".join(kept)


def _jobs(
    session_no: int, session: SchedulerFile, stream: DaskStream, warnings: list[str]
) -> list[_Job]:
    """One job per graph submission, submitted when its client called (else when the
    scheduler got it)."""
    by_client = {c.client_id: c for c in stream.clients if c.client_id}
    used: set[tuple[str, int]] = set()
    first_submit: dict[tuple[str, str], int] = {}
    for client in by_client.values():
        for n, submit in enumerate(client.submits):
            for key in submit.keys:
                first_submit.setdefault((client.client_id, key), n)
    jobs: list[_Job] = []
    unmatched = 0
    for n, graph in enumerate(session.graphs):
        submit_ms = graph.t * 1000.0
        client = by_client.get(graph.client)
        match = None
        if client is not None:
            candidates = [first_submit.get((graph.client, k)) for k in graph.keys]
            found = [c for c in candidates if c is not None and (graph.client, c) not in used]
            match = min(found) if found else None
        if match is not None and client is not None:
            used.add((graph.client, match))
            submit_ms = min(submit_ms, client.submits[match].t * 1000.0)
        else:
            unmatched += 1
        jobs.append(_Job(n, session_no, graph, submit_ms, graph.client))
    if unmatched and session.graphs:
        warnings.append(
            f"{unmatched} of {len(session.graphs)} graph submission(s) have no client record: "
            "their jobs start when the scheduler received them, and end at their last task"
        )
    return jobs


def _worker_files(stream: DaskStream) -> dict[str, WorkerFile]:
    return {w.worker: w for w in stream.workers if w.worker}


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
            job_of_key.setdefault(key, []).append((job.graph.t, job.job_id))
    worker_files = _worker_files(stream)
    spilled = {addr: _spill_deltas(w) for addr, w in worker_files.items()}
    seen: dict[str, int] = {}
    last_of_key: dict[str, Task] = {}
    out: list[_Row] = []
    orphan_job: int | None = None
    duplicates: set[tuple[str, str, tuple[tuple[float, float], ...]]] = set()
    for task in session.tasks:
        stamp = (task.key, task.worker, tuple((s.start, s.stop) for s in task.startstops))
        if stamp in duplicates:
            continue
        duplicates.add(stamp)
        if not task.startstops:
            continue
        attempt = seen.get(task.key, 0)
        seen[task.key] = attempt + 1
        wfile = worker_files.get(task.worker)
        done = _take(wfile.done, task.key) if wfile is not None else None
        cpu = _take(wfile.cpu_s, task.key) if wfile is not None else None
        parts = _parts(task, done)
        job_id = _job_for(job_of_key.get(task.key, ()), parts.launch)
        if job_id is None:
            if orphan_job is None:
                orphan_job = len(jobs)
                orphan = Graph(keys=[], tasks=[], t=parts.launch / 1000.0)
                jobs.append(_Job(orphan_job, session_no, orphan, parts.launch, ""))
                warnings.append(
                    "some tasks belong to no recorded graph submission; they form one job "
                    "of their own"
                )
            job_id = orphan_job
            jobs[orphan_job].submit_ms = min(jobs[orphan_job].submit_ms, parts.launch)
        read = remote = 0
        for dep in task.deps:
            source = last_of_key.get(dep)
            if source is not None and source.nbytes:
                read += source.nbytes
                if source.worker != task.worker:
                    remote += source.nbytes
        last_of_key[task.key] = task
        mem_spill, disk_spill = spilled.get(task.worker, {}).get((task.key, attempt), (0, 0))
        values = {
            "run_ms": parts.run_ms,
            "cpu_ms": -1.0 if cpu is None else cpu * 1000.0,
            "shuffle_fetch_wait_ms": parts.transfer_ms,
            "shuffle_write_ms": parts.disk_ms,
            "shuffle_read_bytes": read,
            "shuffle_remote_read_bytes": remote,
            "shuffle_write_bytes": max(0, task.nbytes or 0),
            "memory_spill_bytes": mem_spill,
            "disk_spill_bytes": disk_spill,
        }
        added = session.workers.get(task.worker)
        out.append(
            _Row(
                stage=(session_no, job_id, task.group or task.prefix),
                key=task.key,
                worker=prefix + task.worker,
                attempt=attempt,
                launch_ms=parts.launch,
                finish_ms=parts.finish,
                compute=parts.compute,
                failed=task.status != "memory",
                values=values,
                thread=task.thread,
                pid=added.pid if added is not None else None,
                deps=task.deps,
                prefix=task.prefix,
            )
        )
        if task.status != "memory":
            jobs[job_id].failed = True
    return out


def _take(table: dict[str, list[_T]], key: str) -> _T | None:
    """The next record of ``key`` (a key computed twice on one worker has two)."""
    items = table.get(key)
    return items.pop(0) if items else None


def _spill_deltas(worker: WorkerFile) -> dict[tuple[str, int], tuple[int, int]]:
    """Per (key, attempt): how much the worker's spilled data grew (in memory, on disk)
    while it stored the key's result, from the worker's totals after each task."""
    records: list[tuple[float, str, Done]] = [
        (d.t, key, d) for key, items in worker.done.items() for d in items
    ]
    records.sort(key=lambda r: r[0])
    out: dict[tuple[str, int], tuple[int, int]] = {}
    attempts: Counter[str] = Counter()
    before = (0, 0)
    for _, key, d in records:
        now = tuple(d.spilled[:2]) if d.spilled and len(d.spilled) >= 2 else before
        grew = (max(0, now[0] - before[0]), max(0, now[1] - before[1]))
        out[(key, attempts[key])] = grew
        attempts[key] += 1
        before = (int(now[0]), int(now[1]))
    return out


@dataclass(slots=True)
class _Parts:
    """A task's time on its worker, in epoch ms (see `_parts`)."""

    launch: float
    finish: float
    compute: tuple[float, float] | None
    run_ms: float
    transfer_ms: float
    disk_ms: float


def _parts(task: Task, done: Done | None) -> _Parts:
    """When a task held a worker thread and what it did there.

    Its timed activities (transfers of its inputs from other workers, reading spilled
    inputs, its function, spilling its result) are its run time, laid end to end: a
    transfer that ended well before the function started counts its own duration only,
    never the wait for a thread or other inputs. Where the worker recorded when the task
    took a thread and when its result was stored, the task spans those, and what lies
    between them beyond its activities is the worker's own overhead (scheduling time).
    """
    delay = done.delay if done is not None else 0.0
    spans = {a: 0.0 for a in (_TRANSFER, _DISK_READ, _DISK_WRITE)}
    compute: tuple[float, float] | None = None
    for s in task.startstops:
        shift = delay if s.action in (_COMPUTE, _TRANSFER) else 0.0
        start, stop = (s.start - shift) * 1000.0, (s.stop - shift) * 1000.0
        stop = max(stop, start)
        if s.action == _COMPUTE and compute is None:
            compute = (start, stop)
        elif s.action in spans:
            spans[s.action] += stop - start
    transfer, disk = spans[_TRANSFER], spans[_DISK_READ] + spans[_DISK_WRITE]
    if compute is None:
        first = min(s.start for s in task.startstops) * 1000.0
        last = max(first, max(s.stop for s in task.startstops) * 1000.0)
        return _Parts(first, last, None, last - first, transfer, disk)
    run = transfer + disk + compute[1] - compute[0]
    launch = compute[0] - transfer - spans[_DISK_READ]
    finish = compute[1] + spans[_DISK_WRITE]
    if done is not None and done.began is not None:
        launch = min(launch, done.began * 1000.0 - transfer)
    if done is not None:
        finish = max(finish, done.t * 1000.0)
    return _Parts(launch, finish, compute, run, transfer, disk)


def _job_for(graphs: Sequence[tuple[float, int]], launch_ms: float) -> int | None:
    """The latest submission listing the key before the task ran (1 s of clock slack)."""
    best = None
    for t, job_id in graphs:
        if t * 1000.0 <= launch_ms + 1000.0 or best is None:
            best = job_id
    return best


def _complete_jobs(jobs: list[_Job], rows: list[_Row], stream: DaskStream) -> None:
    """A job completes when its client first received all its results after submitting
    it; results never gathered complete it at its last task's end."""
    last_task: dict[int, float] = {}
    for row in rows:
        j = row.stage[1]
        last_task[j] = max(last_task.get(j, row.finish_ms), row.finish_ms)
    gathered: dict[tuple[str, str], list[float]] = {}
    for client in stream.clients:
        for g in client.gathers:
            for key in g.keys:
                gathered.setdefault((client.client_id, key), []).append(g.t * 1000.0)
    for times in gathered.values():
        times.sort()
    for job in jobs:
        end = last_task.get(job.job_id, job.submit_ms)
        for key in job.graph.keys:
            times = gathered.get((job.client, key), [])
            at = int(np.searchsorted(times, job.submit_ms))
            if at < len(times):
                end = max(end, times[at])
        job.complete_ms = end


def _columns(
    rows: list[_Row], profile: ApplicationProfile
) -> tuple[TaskColumns, ThreadSpans, dict[tuple[int, int, str], int]]:
    """The rows as task columns, stage after stage (stage ids by first launch), each stage
    in launch order; and where each task's function ran."""
    first: dict[tuple[int, int, str], float] = {}
    for row in rows:
        first[row.stage] = min(first.get(row.stage, row.launch_ms), row.launch_ms)
    order_of = sorted(first, key=lambda k: (k[1], first[k], k[2]))
    stage_of = {k: n for n, k in enumerate(order_of)}
    rows.sort(key=lambda r: (stage_of[r.stage], r.launch_ms, r.key))
    n = len(rows)
    columns = TaskColumns.empty()
    arrays = {name: np.zeros(n, dtype=columns.arrays[name].dtype) for name in ALL_FIELDS}
    executors: dict[str, int] = {}
    hosts: dict[str, int] = {}
    index_in_stage: Counter[int] = Counter()
    stage_ids = np.zeros(n, dtype=np.int64)
    for i, row in enumerate(rows):
        sid = stage_of[row.stage]
        stage_ids[i] = sid
        arrays["task_id"][i] = i
        arrays["index"][i] = index_in_stage[sid]
        index_in_stage[sid] += 1
        arrays["attempt"][i] = row.attempt
        arrays["launch_ms"][i] = row.launch_ms
        arrays["finish_ms"][i] = row.finish_ms
        arrays["status"][i] = STATUSES.index("FAILED" if row.failed else "SUCCESS")
        arrays["executor"][i] = executors.setdefault(row.worker, len(executors))
        host = profile.executors[row.worker].host if row.worker in profile.executors else ""
        arrays["host"][i] = hosts.setdefault(host, len(hosts))
        arrays["reported"][i] = True
        cpu = row.values["cpu_ms"]
        arrays["has_cpu_time"][i] = cpu >= 0
        for name, value in row.values.items():
            arrays[name][i] = max(value, 0.0)
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
        failure_reasons={i: "erred" for i, r in enumerate(rows) if r.failed},
    )
    spans = _thread_spans(rows, stage_ids)
    return columns, spans, stage_of


def _thread_spans(rows: list[_Row], stage_ids: np.ndarray) -> ThreadSpans:
    keep = [i for i, r in enumerate(rows) if r.thread is not None and r.compute and r.pid]
    pick = np.array(keep, dtype=np.int64)
    return ThreadSpans(
        pid=np.array([rows[i].pid for i in keep], dtype=np.int64),
        thread=np.array([rows[i].thread for i in keep], dtype=np.int64),
        start_ms=np.array([rows[i].compute[0] for i in keep], dtype=np.float64),  # type: ignore[index]
        stop_ms=np.array([rows[i].compute[1] for i in keep], dtype=np.float64),  # type: ignore[index]
        task_id=pick,
        stage_id=stage_ids[pick] if len(pick) else np.zeros(0, dtype=np.int64),
        executor_of_pid={r.pid: r.worker for r in rows if r.pid is not None},
    )


def _stages(
    profile: ApplicationProfile,
    rows: list[_Row],
    columns: TaskColumns,
    stage_of: dict[tuple[int, int, str], int],
    jobs: list[_Job],
) -> None:
    """Stage nodes over row ranges of ``columns``, with parents from task dependencies."""
    stage_of_key: dict[tuple[int, str], int] = {}
    bounds: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        sid = stage_of[row.stage]
        stage_of_key[(row.stage[0], row.key)] = sid
        b = bounds.setdefault(sid, [i, i + 1])
        b[1] = i + 1
    job_of_stage = {sid: key[1] for key, sid in stage_of.items()}
    name_of = {sid: key[2] for key, sid in stage_of.items()}
    prefix_of = {stage_of[row.stage]: row.prefix for row in rows}
    parents: dict[int, set[int]] = {sid: set() for sid in bounds}
    session_of = {sid: key[0] for key, sid in stage_of.items()}
    deps_of = _deps_by_stage(rows, stage_of)
    for sid, deps in deps_of.items():
        for dep in deps:
            parent = stage_of_key.get((session_of[sid], dep))
            if parent is not None and parent != sid:
                parents[sid].add(parent)
    submit_of = {j.job_id: j.submit_ms for j in jobs}
    graph = profile.stage_graph
    for sid in sorted(bounds):
        lo, hi = bounds[sid]
        table = TaskTable(columns, lo, hi)
        finish = float(np.max(table.finish_ms))
        job = job_of_stage[sid]
        group = name_of[sid]
        stage = StageNode(
            stage_id=sid,
            attempt=0,
            name=prefix_of[sid],
            num_tasks=hi - lo,
            parent_stage_ids=sorted(parents[sid]),
            job_ids=[job],
            status="FAILED" if bool((table.status != 0).any()) else "COMPLETE",
            details=group,
            op_nodes=[OperationNode(op_id=sid, name=prefix_of[sid], scope_name=group)],
            table=table,
        )
        stage.complete_ms = finish
        profile.stages[(sid, 0)] = stage
        graph.add_node(sid)
        for p in stage.parent_stage_ids:
            graph.add_edge(p, sid)
    first_launch: dict[int, float] = {}
    for sid in bounds:
        job = job_of_stage[sid]
        launch = float(np.min(profile.stages[(sid, 0)].table.launch_ms))
        first_launch[job] = min(first_launch.get(job, launch), launch)
    for sid in sorted(bounds):
        stage = profile.stages[(sid, 0)]
        job = job_of_stage[sid]
        launch = float(np.min(stage.table.launch_ms))
        same_job = [
            profile.stages[(p, 0)].complete_ms
            for p in stage.parent_stage_ids
            if job_of_stage[p] == job
        ]
        done = max((t for t in same_job if t is not None), default=None)
        # Dask starts a task as soon as its own inputs exist: a stage is ready when its job's
        # first task started (the job's start-up, kept), or when its parents completed if
        # it only started after that (then slots, not a lag, decide when it runs).
        ready = first_launch[job] if done is None or done > launch else done
        stage.submit_ms = min(max(ready, submit_of[job]), launch)


def _deps_by_stage(
    rows: list[_Row], stage_of: dict[tuple[int, int, str], int]
) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for row in rows:
        out.setdefault(stage_of[row.stage], set()).update(row.deps)
    return out


def _executors(profile: ApplicationProfile, session: SchedulerFile, prefix: str) -> None:
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


def _resources(
    profile: ApplicationProfile,
    sessions: list[SchedulerFile],
    host_cores: int | None,
    local_pids: frozenset[int],
) -> ResourceConfig:
    """Workers, threads and memory as the scheduler registered them; `sources` says so."""
    cfg = ResourceConfig()
    src = cfg.sources
    workers = list(profile.executors.values())
    cfg.master = " ".join(f"dask {s.address}" for s in sessions if s.address)
    if cfg.master:
        src["master"] = "recorded: scheduler address"
    if not workers:
        return cfg
    cfg.executor_instances = _max_alive(workers)
    src["executor_instances"] = "recorded: most workers registered at once"
    threads = [w.cores for w in workers if w.cores]
    if threads:
        cfg.executor_cores = Counter(threads).most_common(1)[0][0]
        src["executor_cores"] = "recorded: threads per worker (most common)"
    memory = [w.memory_bytes for w in workers if w.memory_bytes]
    if memory:
        cfg.executor_memory_bytes = Counter(memory).most_common(1)[0][0]
        src["executor_memory_bytes"] = "recorded: worker memory limit (most common)"
    hosts = {w.host for w in workers if w.host}
    cfg.hosts = len(hosts) or None
    if cfg.hosts:
        src["hosts"] = "recorded: distinct worker hosts"
    if cfg.executor_cores:
        cfg.total_slots = cfg.executor_instances * cfg.executor_cores
        src["total_slots"] = "workers × threads per worker"
    pids = {w.pid for s in sessions for w in s.workers.values()}
    sampled_here = bool(local_pids) and None not in pids and pids <= local_pids
    loopback = hosts <= {"127.0.0.1", "localhost", "::1"}
    if cfg.hosts == 1 and host_cores is not None and (sampled_here or loopback):
        cfg.hosts_fixed = True
        src["hosts"] = (
            "recorded: every worker on the recording host (a local cluster; a what-if keeps "
            "this one machine)"
        )
    return cfg


def _max_alive(workers: list[ExecutorInfo]) -> int:
    points = sorted(
        [(w.added_ms or 0.0, 1) for w in workers]
        + [(w.removed_ms, -1) for w in workers if w.removed_ms is not None]
    )
    running = best = 0
    for _, delta in points:
        running += delta
        best = max(best, running)
    return max(best, 1)
