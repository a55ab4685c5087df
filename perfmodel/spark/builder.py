"""The fold of decoded Spark listener events into an `ApplicationProfile`.

Reading a log and understanding its events fail in different ways and change for
different reasons: `perfmodel.spark.load` deals with files, lines and damaged text, and
hands each decoded event here. A handler sees one typed event and the profile built so
far, never a line or a file, so the DAG's rules (which jobs declared a stage, when a
stage was skipped, which query ran a job) read and change without the decoding around them.
"""

from __future__ import annotations

import json
import math
import time
from array import array
from collections.abc import Callable, Iterable
from functools import lru_cache
from sys import intern
from typing import Any

import numpy as np

from perfmodel.dag.model import (
    ApplicationProfile,
    ExecutorInfo,
    JobNode,
    OperationNode,
    QueryNode,
    StageNode,
)
from perfmodel.profile.eventlog import EventLogSource
from perfmodel.profile.quality import DataQuality
from perfmodel.spark import events as ev
from perfmodel.spark.config import MAX_EXECUTOR_CORES, resolve_resources
from perfmodel.spark.sql_plans import link_plans_to_stages, plan_tree
from perfmodel.spark.task_ingest import MAX_VALUE, SPAN_SLACK_MS, TaskAccumulator, as_float


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


def _no_stage(stage_id: int, attempt: int) -> None:
    raise RuntimeError("the profile builder was released")


class ProfileBuilder:
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
        self.orphan_job_ends: list[int] = []
        self._heap_peaks: dict[str, int] = {}
        """Executor id → the most JVM heap its tasks' ends reported in use."""
        self.last_time_ms: float | None = None
        self._bad_start = False
        self._bad_end = False
        self._times = array("d")
        """Every event time seen (8 bytes each): a log without its end event is bounded by
        the latest time the rest agree on (`plausible_end`), not by its largest one."""
        self.handlers: dict[bytes, Callable[[Any], None]] = {
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
            (ev.SQL_PREFIX + "SparkListenerDriverAccumUpdates").encode(): self._driver_accums,
        }

    def release(self) -> None:
        """Break the builder's reference cycles (its handlers and the task accumulator's
        callback are its own bound methods), so reference counting frees it and its
        per-stage sets at once, instead of a full collection walking the whole profile."""
        self.handlers.clear()
        self.tasks.on_new_stage = _no_stage

    def _seen_time(self, ms: float | None) -> None:
        if ms:
            self._times.append(ms)
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

    def _end_ms(self, value: int, start_ms: float | None, what: str) -> float:
        """An end timestamp (`_ms`), seen as the log's latest time so far, and moved up to
        its start (and counted) where it comes before it."""
        end = self._ms(value, f"{what} completion time")
        self._seen_time(end)
        if start_ms is not None and end < start_ms:
            self.quality.add("impossible_times", f"{what} ends before it starts")
            return start_ms
        return end

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
        if not plausible_date(p.start_ms, time.time() * 1000.0):
            # Epoch 0 or the year 9999 would make the duration decades long: the start is
            # taken from the first stage or task instead, and the damage counted.
            self.quality.add(
                "out_of_range_value",
                f"application start time {p.start_ms:.0f} ms is not a date Spark ran at "
                "(before 2009 or in the future)",
            )
            p.start_ms = None
            self._bad_start = True
            return
        self._seen_time(p.start_ms)

    def _app_end(self, e: ev.ApplicationEnd) -> None:
        end = self._ms(e.timestamp, "application end time")
        self.profile.complete = True
        if not plausible_date(end, time.time() * 1000.0):
            # An end in the year 9999 would hold every time of the log inside the span: the
            # end is taken from the times the log's events agree on instead, as for a log
            # with no end event, and the damage counted.
            self.quality.add(
                "out_of_range_value",
                f"application end time {end:.0f} ms is not a date Spark ran at "
                "(before 2009 or in the future)",
            )
            self._bad_end = True
            return
        self.profile.end_ms = end
        self._seen_time(end)

    def _environment(self, e: ev.EnvironmentUpdate) -> None:
        props = e.spark_properties
        items: Iterable[tuple[Any, ...]]
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
        if ex.cores is not None and ex.cores > MAX_EXECUTOR_CORES:
            self.quality.add("out_of_range_value", f"executor {e.executor_id} cores")
            ex.cores = MAX_EXECUTOR_CORES
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
            job.complete_ms = self._end_ms(e.completion_time, job.submit_ms, f"job {e.job_id}")
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
            stage.complete_ms = self._end_ms(info.completion_time, stage.submit_ms, what)
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
        peaks = e.executor_metrics
        if peaks is not None and peaks.jvm_heap > 0:
            executor = e.task_info.executor_id
            if peaks.jvm_heap > self._heap_peaks.get(executor, 0):
                self._heap_peaks[executor] = min(peaks.jvm_heap, 2**62)
        if finish:
            finish = min(max(as_float(finish), 0.0), MAX_VALUE)
            self._times.append(finish)
            if self.last_time_ms is None or finish > self.last_time_ms:
                self.last_time_ms = finish

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
            query.plan = plan_tree(e.plan_info)
        if e.modified_configs:
            query.modified_configs = {str(k): str(v) for k, v in e.modified_configs.items()}
        query.job_ids = sorted(self._query_jobs.get(e.execution_id, ()))
        self._seen_time(query.start_ms)

    def _sql_end(self, e: ev.SqlExecutionEnd) -> None:
        query = self._query(e.execution_id)
        query.end_ms = self._ms(e.time, f"query {e.execution_id} end") if e.time else None
        query.error = e.error_message or None
        self._seen_time(query.end_ms)

    def _sql_update(self, e: ev.SqlAdaptiveUpdate) -> None:
        if e.plan_info is not None:
            self._query(e.execution_id).plan = plan_tree(e.plan_info)

    def _driver_accums(self, e: ev.DriverAccumUpdates) -> None:
        """A later update of a metric replaces its value; values of one metric in one
        update (a shuffle read's per-partition sizes) are summed. Spark posts them while a
        query runs, after its start: values of a query whose start the log lacks (a cut
        log) have no plan to belong to and are not kept."""
        query = self.profile.queries.get(e.execution_id)
        if query is None:
            return
        sent: dict[int, int] = {}
        for acc_id, value in e.accum_updates:
            sent[acc_id] = sent.get(acc_id, 0) + value
        query.driver_metrics.update(sent)

    # -- finishing -------------------------------------------------------------------------

    def _clamp_to_span(self, p: ApplicationProfile) -> None:
        """Stage and job times outside the application's span (start to end event, with
        `SPAN_SLACK_MS`) into it, counted: a stage "completed" in the year 9999 would make
        it the application's critical path. Tasks are checked in `TaskAccumulator.finish`."""
        start = p.start_ms
        end = p.end_ms
        if start is None and end is None:
            return
        lo = -math.inf if start is None else start - SPAN_SLACK_MS
        hi = math.inf if end is None else end + SPAN_SLACK_MS
        items: list[tuple[str, Any, str]] = [
            (f"stage {s.stage_id}", s, name)
            for s in p.stages.values()
            for name in ("submit_ms", "complete_ms")
        ]
        items += [(f"job {j.job_id}", j, "submit_ms") for j in p.jobs.values()]
        items += [(f"job {j.job_id}", j, "complete_ms") for j in p.jobs.values()]
        for what, node, name in items:
            value = getattr(node, name)
            if value is None or lo <= value <= hi:
                continue
            setattr(node, name, start if value < lo else end)
            self.quality.add("out_of_range_value", f"{what} is outside the application's span")

    def finish(self) -> ApplicationProfile:
        """Settle what only the end of the log tells: tasks that never ended, stages that
        were skipped, the jobs of each stage and query, and the log's warnings."""
        p = self.profile
        tasks = self.tasks
        for start in tasks.started.values():  # never ended: the log stops mid-task
            self._seen_time(min(max(as_float(start.task_info.launch_time), 0.0), MAX_VALUE))
        tasks.never_ended()
        trusted_end = p.complete and not self._bad_end
        if not trusted_end:
            # No end event (or an impossible one): the log's clock ends at the latest time
            # most events agree on, so one task "ending" in the year 9999 is clamped and
            # counted, as past an end event.
            self.last_time_ms = plausible_end(np.frombuffer(self._times), p.start_ms)
        self._times = array("d")
        end = p.end_ms if trusted_end else self.last_time_ms
        columns = tasks.finish(p.stages, (p.start_ms, end))
        if p.start_ms is None:
            starts = [s.submit_ms for s in p.stages.values() if s.submit_ms is not None]
            if len(columns):
                starts.append(float(columns.arrays["launch_ms"].min()))
            if starts:
                p.start_ms = min(starts)
                what = (
                    "application start time is not a plausible date"
                    if self._bad_start
                    else "log has no application start event"
                )
                p.warnings.append(f"the {what}; duration counts from the first stage or task")
        if self._bad_end:
            p.end_ms = self.last_time_ms
            p.warnings.append(
                "the application end time is not a plausible date; figures end at the last "
                "time the log's events agree on"
            )
        if not p.complete:
            p.end_ms = self.last_time_ms
            cut = " (file name ends in .inprogress)" if self.source.in_progress else ""
            p.warnings.append(
                "the application did not finish in this log"
                f"{cut}: no application end event; figures cover what was logged up to "
                "the last event"
            )
        self._clamp_to_span(p)
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
        link_plans_to_stages(p)
        for executor_id, heap in self._heap_peaks.items():
            ex = p.executors.get(executor_id)
            if ex is not None:  # an executor the log never added is not invented here
                ex.peak_heap_bytes = heap
        p.resources = resolve_resources(p, self.quality)
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
        return p


EARLIEST_SPARK_MS = 1230768000000.0
"""2009-01-01 UTC: Spark began in 2009; no application started before it."""
FUTURE_SLACK_MS = 86_400_000.0
"""A start more than a day past the reading machine's clock is not a real one."""
GAP_FLOOR_MS = 86_400_000.0


def plausible_date(ms: float, now_ms: float) -> bool:
    """Whether ``ms`` (since the epoch) is a calendar time a Spark application ran at."""
    return EARLIEST_SPARK_MS <= ms <= now_ms + FUTURE_SLACK_MS


def plausible_end(times: np.ndarray, start: float | None) -> float | None:
    """The latest event time of a log that the rest of its times agree on.

    Times sorted, the first jump that is both over a day and longer than everything
    before it (from ``start``, or the earliest time) ends the plausible ones: the driver's
    clock moves on steadily, so one task "ending" in the year 9999 stands apart by
    millennia while a real log's times never jump that way. O(n log n) in the times."""
    t = np.sort(times[np.isfinite(times) & (times > 0)])
    if len(t) == 0:
        return None
    base = t[0] if start is None else min(start, float(t[0]))
    allowed = np.maximum(GAP_FLOOR_MS, t[:-1] - base)
    jumps = np.flatnonzero(np.diff(t) > allowed)
    return float(t[jumps[0]] if len(jumps) else t[-1])
