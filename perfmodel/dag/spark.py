"""Spark front end: a Spark event log → the framework-independent `ApplicationProfile`.

Events are folded into the profile one line at a time, so memory grows with the DAG
(jobs, stages, task attempts) and never with the log. Bad lines are reported with file
and line number and skipped; the rest is still analysed.
"""

from __future__ import annotations

import gc
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from sys import intern

import msgspec
import numpy as np

from perfmodel.dag.model import (
    ApplicationProfile,
    ExecutorInfo,
    HostUsage,
    JobNode,
    OperationNode,
    PlanNode,
    QueryNode,
    StageNode,
)
from perfmodel.dag.spark_config import resolve_resources
from perfmodel.dag.task_ingest import MAX_VALUE, TaskAccumulator, as_float
from perfmodel.errors import NotAnEventLogError
from perfmodel.profile import jvm_cpu, thread_cpu
from perfmodel.profile import spark_events as ev
from perfmodel.profile.bundle import find_event_log, is_bundle, load_resources, read_manifest
from perfmodel.profile.eventlog import (
    DEFAULT_MAX_DECOMPRESSED,
    EventLogSource,
    LogProblem,
    TextBlock,
    iter_blocks,
    resolve_event_log,
)
from perfmodel.profile.quality import DataQuality

SNIFF_LINES = 200
"""Lines read before a file with no Spark event in them is declared not an event log."""


@dataclass(slots=True)
class LoadedProfile:
    """A profile plus everything said about reading it."""

    profile: ApplicationProfile
    source: EventLogSource
    problems: list[LogProblem] = field(default_factory=list)
    bundle: Path | None = None
    """The profile bundle the event log came from (stack samples live there), if any."""
    task_end_events: int = 0
    task_end_reasons: dict[str, int] = field(default_factory=dict)
    header_lines_skipped: int = 0
    quality: DataQuality = field(default_factory=DataQuality)
    """Damage met while reading, counted by kind (see `perfmodel.profile.quality`)."""


def build_profile(
    path: str | Path,
    attempt: str | None = None,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> LoadedProfile:
    """Read the event log at ``path`` (file, compressed file, rolling directory or bundle)."""
    bundle = Path(path) if is_bundle(path) else None
    source = resolve_event_log(find_event_log(bundle) if bundle else path, attempt)
    problems: list[LogProblem] = []
    builder = _ProfileBuilder(source)
    blocks = iter_blocks(source, problems, max_decompressed_bytes=max_decompressed_bytes)
    with gc_paused():
        builder.consume(blocks, problems)
        loaded = builder.finish(problems)
        builder.release()
    loaded.quality.count_reading(problems, loaded.profile.event_counts)
    if bundle is not None:
        loaded.bundle = bundle
        host_cores = read_manifest(bundle).host_cores
        if host_cores:
            # What-if replay needs the host's real core count; a local run's log lacks it.
            loaded.profile.extra["host_cores"] = host_cores
        loaded.profile.host_usage = _host_usage(bundle)
        loaded.profile.thread_cpu = thread_cpu.load(bundle)
        loaded.profile.jvm_cpu = jvm_cpu.load(bundle)
    return loaded


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while the DAG is built (and, in the facade,
    while the workload is compiled, replayed and diagnosed).

    Ingest allocates tracked objects per event and frees no cycles, so every collection
    is wasted work, and the full ones walk the whole growing DAG again and again. Nothing
    is left for the collector afterwards either (decoded events are freed by reference
    counting), so pausing it costs no memory. The same holds for the analysis steps after
    it, where the collections walked the whole loaded profile: ~0.5 s of a 2.5 s diagnosis
    of a 6,000-stage log.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _host_usage(bundle: Path) -> HostUsage | None:
    samples = load_resources(bundle)
    if len(samples) < 2:
        return None
    return HostUsage(
        t_ms=[s.t_ms for s in samples],
        cores=[s.cpu_cores for s in samples],
    )


def _reason_text(reason: ev.TaskEndReasonJson) -> str:
    parts = [reason.reason]
    for extra in (reason.class_name, reason.kill_reason, reason.loss_reason):
        if extra:
            parts.append(extra)
    detail = reason.description or reason.message
    if detail:
        parts.append(detail.splitlines()[0][:300])
    return ": ".join(parts)


@lru_cache(maxsize=4096)
def _scope_name(scope: str | None) -> str:
    if not scope:
        return ""
    # Spark writes {"id":"…","name":"…"} (and "parent" after them): read the name of the
    # plain form directly; anything else (escapes, a parent, damage) goes through json.
    if scope.startswith('{"id":"'):
        at = scope.find('","name":"', 7)
        if at > 0 and '"' not in scope[7:at]:
            end = len(scope) - 2
            name = scope[at + 10 : end]
            if scope.endswith('"}') and '"' not in name and "\\" not in name:
                return intern(name)
    try:
        data = json.loads(scope)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return ""
    return intern(str(data.get("name", ""))) if isinstance(data, dict) else ""


def _plan(info: ev.SparkPlanInfoJson) -> PlanNode:
    """Convert a plan tree iteratively: deep plans must not hit Python's recursion limit."""
    # Names repeat in every query of a log (and metric names in every operator): interned,
    # a log of thousands of queries keeps one copy of each.
    root = PlanNode(name=intern(info.node_name))
    stack: list[tuple[ev.SparkPlanInfoJson, PlanNode]] = [(info, root)]
    while stack:
        src, node = stack.pop()
        node.description = intern(src.simple_string)
        node.metric_ids = {
            m.accumulator_id: intern(m.name) for m in src.metrics if m.accumulator_id >= 0
        }
        for child in src.children:
            child_node = PlanNode(name=intern(child.node_name))
            node.children.append(child_node)
            stack.append((child, child_node))
    return root


def _no_stage(stage_id: int, attempt: int) -> None:
    raise RuntimeError("the profile builder was released")


class _ProfileBuilder:
    """Mutable state while folding events; `finish` hands out the immutable-by-convention result."""

    def __init__(self, source: EventLogSource) -> None:
        self.source = source
        self.profile = ApplicationProfile(
            app_id=source.app_key,
            attempt=source.attempt,
            framework="spark",
            source=str(source.path),
        )
        self.quality = DataQuality()
        self.tasks = TaskAccumulator(self.quality, self._stage_of_task)
        self._stage_jobs: dict[tuple[int, int], set[int]] = {}
        """Stage attempt → its job ids (a set beside `StageNode.job_ids`: a stage that many
        jobs declare must not cost a list scan per declaration)."""
        self._query_jobs: dict[int, set[int]] = {}
        """Query id → ids of the jobs that ran it (from the jobs' properties)."""
        self._attempts_of: dict[int, list[StageNode]] = {}
        self.header_lines = 0
        self._first_problem: LogProblem | None = None
        self._seen_lines = 0
        self.orphan_job_ends: list[int] = []
        self.valid_events = 0
        self.last_time_ms: float | None = None
        self.handlers = {
            b"SparkListenerLogStart": self._log_start,
            b"SparkListenerApplicationStart": self._app_start,
            b"SparkListenerApplicationEnd": self._app_end,
            b"SparkListenerEnvironmentUpdate": self._environment,
            b"SparkListenerExecutorAdded": self._executor_added,
            b"SparkListenerExecutorRemoved": self._executor_removed,
            b"SparkListenerBlockManagerAdded": self._block_manager_added,
            b"SparkListenerJobStart": self._job_start,
            b"SparkListenerJobEnd": self._job_end,
            b"SparkListenerStageSubmitted": self._stage_submitted,
            b"SparkListenerStageCompleted": self._stage_completed,
            b"SparkListenerTaskStart": self._task_start,
            b"SparkListenerTaskEnd": self._task_end,
            (ev.SQL_PREFIX + "SparkListenerSQLExecutionStart").encode(): self._sql_start,
            (ev.SQL_PREFIX + "SparkListenerSQLExecutionEnd").encode(): self._sql_end,
            (ev.SQL_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate").encode(): self._sql_update,
        }

    def release(self) -> None:
        """Break the builder's reference cycles (its handlers and the task accumulator's
        callback are its own bound methods), so reference counting frees it and its
        per-stage sets at once, instead of a full collection walking the whole profile."""
        self.handlers.clear()
        self.tasks.on_new_stage = _no_stage

    # -- driving ---------------------------------------------------------------------

    def consume(self, blocks: Iterable[TextBlock], problems: list[LogProblem]) -> None:
        """Fold every line into the profile: the hot loop of ingest.

        A block of lines is decoded in one C call when every line in it is a standard
        Spark event; a block with anything else (a header, a corrupt line, a custom
        listener's event) is decoded line by line, which finds and reports the culprit.
        """
        counts: dict[bytes, int] = {}
        type_counts: Counter[type] = Counter()
        handler_of = {
            cls: self.handlers[name.encode()]
            for name, cls in ev.EVENT_TYPES.items()
            if name.encode() in self.handlers
        }
        decode_block = ev.BLOCK_DECODER.decode_lines
        errors = (msgspec.DecodeError, msgspec.ValidationError)
        for block in blocks:
            if self.valid_events:
                try:
                    events = decode_block(block.data)
                except errors:
                    pass
                else:
                    self.valid_events += len(events)
                    self._seen_lines += len(events)
                    type_counts.update(map(type, events))
                    for event in events:
                        handler = handler_of.get(type(event))
                        if handler is not None:
                            handler(event)
                    continue
            self._consume_lines(block, problems, counts)
        for cls, n in type_counts.items():
            name = cls.__struct_config__.tag.encode()
            counts[name] = counts.get(name, 0) + n
        first_problem = self._first_problem
        if self.valid_events == 0:
            if first_problem is None:
                raise NotAnEventLogError(
                    f"{self.source.path}: no events in it (empty after decompression)."
                )
            raise NotAnEventLogError(_not_an_event_log(self.source, first_problem))
        if self.header_lines:
            problems.insert(
                0,
                LogProblem(
                    first_problem.file if first_problem else str(self.source.path),
                    None,
                    f"skipped {self.header_lines} non-event header line(s) before the first event",
                ),
            )
        self.profile.event_counts = {k.decode(): v for k, v in counts.items()}
        self.profile.event_count = self.valid_events

    def _consume_lines(
        self, block: TextBlock, problems: list[LogProblem], counts: dict[bytes, int]
    ) -> None:
        """The careful path: one line at a time, with line numbers for every problem."""
        decoders = ev.DECODERS
        handlers = self.handlers
        prefix = ev.EVENT_PREFIX
        errors = (msgspec.DecodeError, msgspec.ValidationError)
        line_no = block.first_line - 1
        for data in bytes(block.data).split(b"\n")[: block.lines]:
            line_no += 1
            if not data or data.isspace():
                continue
            self._seen_lines += 1
            try:
                end = data.find(b'"', 10) if data.startswith(prefix) else -1
                name = data[10:end] if end > 10 else ev.event_name(data)
                decoder = decoders.get(name)
                event = decoder.decode(data) if decoder is not None else None
            except errors as exc:
                if self.valid_events == 0:
                    # Lines before the first event are a header some writers put there
                    # (Spark 1.2 metadata, vendor banners); they are not the log's events.
                    self.header_lines += 1
                    if self._first_problem is None:
                        self._first_problem = LogProblem(block.file, line_no, _describe(exc, data))
                    if self._seen_lines >= SNIFF_LINES:
                        message = _not_an_event_log(self.source, self._first_problem)
                        raise NotAnEventLogError(message) from exc
                    continue
                problems.append(LogProblem(block.file, line_no, _describe(exc, data)))
                continue
            self.valid_events += 1
            counts[name] = counts.get(name, 0) + 1
            if event is not None:
                handlers[name](event)

    def _seen_time(self, ms: float | None) -> None:
        if ms and (self.last_time_ms is None or ms > self.last_time_ms):
            self.last_time_ms = float(ms)

    def _ms(self, value: int, what: str) -> float:
        """A timestamp as a float, clamped into [0, MAX_VALUE] (and counted) when damaged."""
        if 0 <= value <= MAX_VALUE:
            return float(value)
        self.quality.add("out_of_range_value", what)
        return 0.0 if value < 0 else MAX_VALUE

    def _ms_or_none(self, value: int | None, what: str) -> float | None:
        return None if value is None else self._ms(value, what)

    # -- application-level events --------------------------------------------------

    def _log_start(self, e: ev.LogStart) -> None:
        self.profile.framework_version = e.spark_version

    def _app_start(self, e: ev.ApplicationStart) -> None:
        p = self.profile
        p.app_name = e.app_name
        if e.app_id:
            p.app_id = e.app_id
        if e.attempt_id:
            p.attempt = e.attempt_id
        p.start_ms = self._ms(e.timestamp, "application start time")
        p.user = e.user
        self._seen_time(p.start_ms)

    def _app_end(self, e: ev.ApplicationEnd) -> None:
        self.profile.end_ms = self._ms(e.timestamp, "application end time")
        self.profile.complete = True
        self._seen_time(self.profile.end_ms)

    def _environment(self, e: ev.EnvironmentUpdate) -> None:
        props = e.spark_properties
        if isinstance(props, dict):
            items = props.items()
        elif isinstance(props, list):
            items = (tuple(kv) for kv in props if isinstance(kv, list | tuple) and len(kv) == 2)
        else:
            return
        self.profile.properties.update({str(k): str(v) for k, v in items})

    def _executor_added(self, e: ev.ExecutorAdded) -> None:
        ex = self.profile.executors.get(e.executor_id)
        if ex is None:
            ex = ExecutorInfo(executor_id=e.executor_id, host=e.info.host)
            self.profile.executors[e.executor_id] = ex
        ex.host = e.info.host or ex.host
        ex.cores = e.info.total_cores
        ex.added_ms = self._ms(e.timestamp, f"executor {e.executor_id} added time")
        self._seen_time(ex.added_ms)

    def _executor_removed(self, e: ev.ExecutorRemoved) -> None:
        ex = self.profile.executors.get(e.executor_id)
        if ex is None:
            ex = ExecutorInfo(executor_id=e.executor_id, host="")
            self.profile.executors[e.executor_id] = ex
        ex.removed_ms = self._ms(e.timestamp, f"executor {e.executor_id} removed time")
        ex.removed_reason = e.reason
        self._seen_time(ex.removed_ms)

    def _block_manager_added(self, e: ev.BlockManagerAdded) -> None:
        bm = e.block_manager
        ex = self.profile.executors.get(bm.executor_id)
        if ex is None:
            ex = ExecutorInfo(executor_id=bm.executor_id, host=bm.host)
            if e.timestamp is not None:
                ex.added_ms = self._ms(e.timestamp, f"executor {bm.executor_id} added time")
            self.profile.executors[bm.executor_id] = ex
        if e.max_memory is not None:
            ex.memory_bytes = e.max_memory

    # -- jobs and stages ---------------------------------------------------------------

    def _add_job_to_stage(self, stage: StageNode, job_id: int) -> None:
        jobs = self._stage_jobs.get(stage.key)
        if jobs is None:
            jobs = self._stage_jobs[stage.key] = set(stage.job_ids)
        if job_id not in jobs:
            jobs.add(job_id)
            stage.job_ids.append(job_id)

    def _job_start(self, e: ev.JobStart) -> None:
        job = JobNode(job_id=e.job_id, stage_ids=list(e.stage_ids))
        if e.submission_time is not None:
            job.submit_ms = self._ms(e.submission_time, f"job {e.job_id} submission time")
            self._seen_time(job.submit_ms)
        props = e.properties or {}
        sql_id = props.get("spark.sql.execution.id")
        if sql_id not in (None, ""):
            try:
                job.query_id = int(sql_id)
            except (TypeError, ValueError):
                pass
        job.description = str(
            props.get("spark.job.description") or props.get("callSite.short") or ""
        )
        self.profile.jobs[e.job_id] = job
        for info in e.stage_infos:
            stage = self._stage_from_info(info, declare_only=True)
            self._add_job_to_stage(stage, e.job_id)
        if not job.stage_ids:
            job.stage_ids = [info.stage_id for info in e.stage_infos]
        if job.query_id is not None:
            self._query_jobs.setdefault(job.query_id, set()).add(e.job_id)
            query = self.profile.queries.get(job.query_id)
            if query is not None and e.job_id not in query.job_ids:
                query.job_ids.append(e.job_id)

    def _job_end(self, e: ev.JobEnd) -> None:
        job = self.profile.jobs.get(e.job_id)
        if job is None:
            # Spark logs an end without a start for a job aborted before it was submitted
            # (e.g. after a fetch failure); it ran nothing, so it is noted, not counted.
            self.orphan_job_ends.append(e.job_id)
            return
        if e.completion_time is not None:
            job.complete_ms = self._ms(e.completion_time, f"job {e.job_id} completion time")
            self._seen_time(job.complete_ms)
            if job.submit_ms is not None and job.complete_ms < job.submit_ms:
                self.quality.add("impossible_times", f"job {e.job_id} ends before it starts")
                job.complete_ms = job.submit_ms
        result = e.job_result.result
        job.result = "SUCCEEDED" if result == "JobSucceeded" else "FAILED"
        if job.result == "FAILED":
            exc = e.job_result.exception
            if isinstance(exc, dict):
                job.failure_reason = str(exc.get("Message", "")).splitlines()[0][:300] or None
            else:
                job.failure_reason = result or None

    def _new_stage(self, stage_id: int, attempt: int, name: str, num_tasks: int) -> StageNode:
        stage = StageNode(stage_id=stage_id, attempt=attempt, name=name, num_tasks=num_tasks)
        self.profile.stages[(stage_id, attempt)] = stage
        self._attempts_of.setdefault(stage_id, []).append(stage)
        return stage

    def _stage_from_info(self, info: ev.StageInfoJson, declare_only: bool = False) -> StageNode:
        key = (info.stage_id, info.attempt)
        stage = self.profile.stages.get(key)
        if stage is None:
            stage = self._new_stage(info.stage_id, info.attempt, info.name, info.num_tasks)
        graph = self.profile.stage_graph
        graph.add_node(info.stage_id)
        parents = info.parent_ids if info.parent_ids is not None else []
        stage.parent_stage_ids = list(parents)
        for parent in parents:
            graph.add_edge(parent, info.stage_id)
        if info.details:
            stage.details = intern(info.details)
        if info.rdd_info and not stage.op_nodes:
            self._operations(stage, info.rdd_info)
        if not declare_only:
            stage.name = info.name or stage.name
            stage.num_tasks = info.num_tasks or stage.num_tasks
        return stage

    def _operations(self, stage: StageNode, rdds: list[ev.RddInfoJson]) -> None:
        stage.op_nodes = [
            OperationNode(
                op_id=r.rdd_id,
                name=intern(r.name),
                scope_name=_scope_name(r.scope),
                call_site=intern(r.callsite),
                parent_ids=list(r.parent_ids),
                num_partitions=r.num_partitions,
                cached=bool(
                    r.storage_level and (r.storage_level.use_memory or r.storage_level.use_disk)
                ),
            )
            for r in rdds
        ]

    def _stage_submitted(self, e: ev.StageSubmitted) -> None:
        info = e.stage_info
        stage = self._stage_from_info(info)
        stage.status = "RUNNING"
        if info.submission_time is not None:
            stage.submit_ms = self._ms(info.submission_time, f"stage {info.stage_id} submit")
            self._seen_time(stage.submit_ms)

    def _stage_completed(self, e: ev.StageCompleted) -> None:
        info = e.stage_info
        stage = self._stage_from_info(info)
        what = f"stage {info.stage_id}"
        if info.submission_time is not None:
            stage.submit_ms = self._ms(info.submission_time, f"{what} submission time")
        if info.completion_time is not None:
            stage.complete_ms = self._ms(info.completion_time, f"{what} completion time")
            self._seen_time(stage.complete_ms)
            if stage.submit_ms is not None and stage.complete_ms < stage.submit_ms:
                self.quality.add("impossible_times", f"{what} ends before it starts")
                stage.complete_ms = stage.submit_ms
        stage.status = "FAILED" if info.failure_reason else "COMPLETE"
        if info.failure_reason:
            stage.failure_reason = info.failure_reason.splitlines()[0][:300]
        if info.accumulables:
            # Sorted unique ids: a Python set and sort (a few dozen ids) rather than
            # np.unique and np.union1d, whose overhead was most of this handler's time.
            ids = np.array(sorted({a.acc_id for a in info.accumulables}), dtype=np.int64)
            had = stage.accumulable_ids
            stage.accumulable_ids = np.union1d(had, ids) if had.size else ids

    # -- tasks -----------------------------------------------------------------------------

    def _stage_of_task(self, stage_id: int, stage_attempt: int) -> StageNode:
        """The stage attempt of a task, declared here if the log never announced it."""
        stage = self.profile.stages.get((stage_id, stage_attempt))
        if stage is None:
            # A task of a stage the log never announced (log starts mid-run).
            stage = self._new_stage(stage_id, stage_attempt, "", 0)
            stage.status = "RUNNING"
            self.profile.stage_graph.add_node(stage_id)
        return stage

    def _task_start(self, e: ev.TaskStart) -> None:
        self.tasks.start(e)

    def _task_end(self, e: ev.TaskEnd) -> None:
        """The hot path of ingest (one call per task attempt): one row of numbers."""
        reason = e.reason
        failure = None if reason.reason == "Success" else _reason_text(reason)
        finish = self.tasks.end(e, failure)
        if finish and (self.last_time_ms is None or finish > self.last_time_ms):
            self.last_time_ms = min(max(as_float(finish), 0.0), MAX_VALUE)

    # -- SQL -------------------------------------------------------------------------------

    def _query(self, execution_id: int) -> QueryNode:
        query = self.profile.queries.get(execution_id)
        if query is None:
            query = QueryNode(query_id=execution_id)
            self.profile.queries[execution_id] = query
        return query

    def _sql_start(self, e: ev.SqlExecutionStart) -> None:
        query = self._query(e.execution_id)
        query.description = e.description
        query.start_ms = self._ms(e.time, f"query {e.execution_id} start") if e.time else None
        if e.plan_info is not None:
            query.plan = _plan(e.plan_info)
        query.job_ids = sorted(self._query_jobs.get(e.execution_id, ()))
        self._seen_time(query.start_ms)

    def _sql_end(self, e: ev.SqlExecutionEnd) -> None:
        query = self._query(e.execution_id)
        query.end_ms = self._ms(e.time, f"query {e.execution_id} end") if e.time else None
        query.error = e.error_message or None
        self._seen_time(query.end_ms)

    def _sql_update(self, e: ev.SqlAdaptiveUpdate) -> None:
        if e.plan_info is not None:
            self._query(e.execution_id).plan = _plan(e.plan_info)

    # -- finishing -------------------------------------------------------------------------

    def finish(self, problems: list[LogProblem]) -> LoadedProfile:
        p = self.profile
        tasks = self.tasks
        for start in tasks.started.values():  # never ended: the log stops mid-task
            self._seen_time(min(max(as_float(start.task_info.launch_time), 0.0), MAX_VALUE))
        tasks.never_ended()
        columns = tasks.finish(p.stages)
        if p.start_ms is None:
            starts = [s.submit_ms for s in p.stages.values() if s.submit_ms is not None]
            if len(columns):
                starts.append(float(columns.arrays["launch_ms"].min()))
            if starts:
                p.start_ms = min(starts)
                p.warnings.append(
                    "the log has no application start event; duration counts from the first "
                    "stage or task"
                )
        if not p.complete:
            p.end_ms = self.last_time_ms
            cut = " (file name ends in .inprogress)" if self.source.in_progress else ""
            p.warnings.append(
                "the application did not finish in this log"
                f"{cut}: no application end event; figures cover what was logged up to "
                "the last event"
            )
        for job in p.jobs.values():
            for stage_id in job.stage_ids:
                for stage in self._attempts_of.get(stage_id, ()):
                    self._add_job_to_stage(stage, job.job_id)
        for stage in p.stages.values():
            if stage.status == "PENDING":
                jobs_done = all(
                    p.jobs[j].complete_ms is not None for j in stage.job_ids if j in p.jobs
                )
                stage.status = "SKIPPED" if stage.job_ids and jobs_done else "PENDING"
        for query in p.queries.values():
            linked = self._query_jobs.get(query.query_id, set())
            query.job_ids = sorted(set(query.job_ids) | linked)
        _link_plans(p)
        p.resources = resolve_resources(p)
        if self.source.other_attempts:
            p.warnings.append(
                f"attempt {self.source.attempt} analysed; other attempts in the log directory: "
                + ", ".join(self.source.other_attempts)
            )
        if self.orphan_job_ends:
            ids = ", ".join(str(j) for j in sorted(self.orphan_job_ends)[:10])
            p.warnings.append(
                f"{len(self.orphan_job_ends)} job(s) ended without having started (aborted "
                f"before submission; not counted as jobs): {ids}"
            )
        running = int(np.isnan(columns.arrays["finish_ms"]).sum())
        if running:
            p.warnings.append(f"{running} task(s) started but never ended in this log")
        if problems:
            bad = sum(1 for pr in problems if pr.line is not None)
            if bad:
                p.warnings.append(
                    f"{bad} line(s) could not be read and were skipped (see problems)"
                )
        return LoadedProfile(
            profile=p,
            source=self.source,
            problems=problems,
            task_end_events=tasks.task_end_events,
            task_end_reasons=dict(sorted(tasks.task_end_reasons.items())),
            header_lines_skipped=self.header_lines,
            quality=self.quality,
        )


def _link_plans(profile: ApplicationProfile) -> None:
    """Attach to each plan operator the stage attempts that updated its metrics.

    This is how Spark's own UI ties SQL operators to stages: an operator's metrics are
    accumulators, and a stage lists the accumulators its tasks updated. All metric ids of
    all operators are looked up at once in the sorted ids of all stages.
    """
    keys = list(profile.stages)
    ids = [np.asarray(s.accumulable_ids, dtype=np.int64) for s in profile.stages.values()]
    nodes = [n for q in profile.queries.values() if q.plan is not None for n in q.plan.walk()]
    if not nodes:
        return
    all_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(keys)), [len(i) for i in ids])
    order = np.argsort(all_ids, kind="stable")
    all_ids, owner = all_ids[order], owner[order]
    metric = np.fromiter((acc for n in nodes for acc in n.metric_ids), np.int64)
    node_of = np.repeat(np.arange(len(nodes)), [len(n.metric_ids) for n in nodes])
    lo = np.searchsorted(all_ids, metric, side="left")
    hi = np.searchsorted(all_ids, metric, side="right")
    found: dict[int, set[int]] = {}
    for k in np.flatnonzero(hi > lo).tolist():
        found.setdefault(int(node_of[k]), set()).update(owner[lo[k] : hi[k]].tolist())
    for i, node in enumerate(nodes):
        owners = found.get(i)
        node.stage_keys = sorted(keys[o] for o in owners) if owners else []


_PRINTABLE = re.compile(rb"[\x20-\x7e]")


def _describe(exc: Exception, data: bytes) -> str:
    snippet = data[:60]
    printable = len(_PRINTABLE.findall(snippet)) >= 0.9 * max(len(snippet), 1)
    shown = snippet.decode("utf-8", "replace") if printable else f"{len(data)} bytes of binary data"
    kind = "not valid JSON" if isinstance(exc, msgspec.DecodeError) else "unexpected field values"
    return f"{kind} ({exc}); line starts: {shown!r}"


def _not_an_event_log(source: EventLogSource, first: LogProblem) -> str:
    return (
        f"{source.path} is not a Spark event log: no Spark listener event in its first "
        f"{SNIFF_LINES} lines (line {first.line} of {first.file}: {first.message}). "
        "Point perfmodel at a file from spark.eventLog.dir, a rolling eventlog_v2_* directory, "
        "or a profile bundle."
    )
