"""Spark's side of following a running application: stage attempts as they complete.

`follow_log` resolves a log that may still be written (local, object store, HDFS or a
History Server application), makes its parts followable (`perfmodel.profile.sources.follow`:
each poll reads only the bytes appended since the last one, across rolling parts) and folds
it with the same reader and profile builder as any other load
(`perfmodel.spark.load.fold_source`), with hooks on the events a live report needs. When a
stage attempt completes, the figures gathered from its task-end events since it started are
handed over as one `CompletedStage`; what they mean (skew, spill, idle cores…) is
`perfmodel.analysis.watch`'s to say.

Per-stage figures are freed when the stage completes, so memory follows the stages running
at once, not the log.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from perfmodel.dag.loaded import LoadedProfile
from perfmodel.errors import EventLogNotFoundError, NotAnEventLogError
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED, EventLogSource, resolve_event_log
from perfmodel.profile.sources.follow import FollowControl, follow_parts
from perfmodel.profile.sources.stores import LogPath, RemotePath
from perfmodel.spark import events as ev
from perfmodel.spark.load import Hook, fold_source

_IN_PROGRESS = ".inprogress"


@dataclass(slots=True)
class CompletedStage:
    """One stage attempt as its completion event closed it, with its tasks' figures."""

    stage_id: int
    attempt: int
    name: str
    failure_reason: str | None
    duration_s: float | None
    """Submission to completion (None when the log lacks either time)."""
    task_s: array[float]
    """Wall seconds of each successful task attempt."""
    failed_tasks: int
    spilled_disk: int
    spilled_memory: int
    busy_s: float
    """Wall seconds of every task attempt, failed ones included: the slots' time used."""
    slots: int | None
    """Task slots the application held when the stage completed (None: unknown)."""


@dataclass(slots=True)
class _StageTasks:
    task_s: array[float] = field(default_factory=lambda: array("d"))
    failed: int = 0
    spilled_disk: int = 0
    spilled_memory: int = 0
    busy_s: float = 0.0


class StageTracker:
    """The hooks: per-stage task figures from task ends, a `CompletedStage` at each stage
    end (once per attempt, however often a damaged log repeats the event), the task slots
    held, and the application's end (which tells the follower the writer is finishing)."""

    def __init__(self, control: FollowControl, on_stage: Callable[[CompletedStage], None]) -> None:
        self.control = control
        self.on_stage = on_stage
        self.running: dict[tuple[int, int], _StageTasks] = {}
        self.reported: set[tuple[int, int]] = set()
        self.executor_cores: dict[str, int] = {}
        self.local_slots: int | None = None
        self.task_cpus = 1

    def hooks(self) -> dict[bytes, Hook]:
        return {
            b"SparkListenerTaskEnd": self.task_end,
            b"SparkListenerStageCompleted": self.stage_completed,
            b"SparkListenerApplicationEnd": self.app_end,
            b"SparkListenerEnvironmentUpdate": self.environment,
            b"SparkListenerExecutorAdded": self.executor_added,
            b"SparkListenerExecutorRemoved": self.executor_removed,
        }

    def app_end(self, _e: ev.ApplicationEnd) -> None:
        self.control.app_ended = True

    def environment(self, e: ev.EnvironmentUpdate) -> None:
        props = e.spark_properties
        if isinstance(props, dict):
            items = {str(k): str(v) for k, v in props.items()}
        elif isinstance(props, list):
            items = {
                str(kv[0]): str(kv[1])
                for kv in props
                if isinstance(kv, list | tuple) and len(kv) == 2
            }
        else:
            return
        master = items.get("spark.master", "")
        if master.startswith("local["):
            n = master[len("local[") :].split(",")[0].rstrip("]")
            self.local_slots = int(n) if n.isdigit() else None
        elif master == "local":
            self.local_slots = 1
        cpus = items.get("spark.task.cpus", "1")
        self.task_cpus = int(cpus) if cpus.isdigit() and int(cpus) > 0 else 1

    def executor_added(self, e: ev.ExecutorAdded) -> None:
        if e.info.total_cores:
            self.executor_cores[e.executor_id] = int(e.info.total_cores)

    def executor_removed(self, e: ev.ExecutorRemoved) -> None:
        self.executor_cores.pop(e.executor_id, None)

    def slots(self) -> int | None:
        if self.executor_cores:
            return max(1, sum(self.executor_cores.values()) // self.task_cpus)
        return self.local_slots

    def task_end(self, e: ev.TaskEnd) -> None:
        key = (int(e.stage_id), int(e.stage_attempt))
        stage = self.running.get(key)
        if stage is None:
            stage = self.running[key] = _StageTasks()
        info = e.task_info
        wall_s = max(0.0, (float(info.finish_time) - float(info.launch_time)) / 1000.0)
        stage.busy_s += wall_s
        if e.reason.reason != "Success" or info.failed:
            stage.failed += 1
        else:
            stage.task_s.append(wall_s)
        m = e.metrics
        if m is not None:
            stage.spilled_disk += int(m.disk_spilled or 0)
            stage.spilled_memory += int(m.memory_spilled or 0)

    def stage_completed(self, e: ev.StageCompleted) -> None:
        info = e.stage_info
        key = (int(info.stage_id), int(info.attempt))
        if key in self.reported:  # a duplicated event (damage) is reported once
            return
        self.reported.add(key)
        stage = self.running.pop(key, None) or _StageTasks()
        duration = None
        if info.submission_time is not None and info.completion_time is not None:
            duration = max(0.0, (info.completion_time - info.submission_time) / 1000.0)
        self.on_stage(
            CompletedStage(
                stage_id=key[0],
                attempt=key[1],
                name=info.name,
                failure_reason=info.failure_reason,
                duration_s=duration,
                task_s=stage.task_s,
                failed_tasks=stage.failed,
                spilled_disk=stage.spilled_disk,
                spilled_memory=stage.spilled_memory,
                busy_s=stage.busy_s,
                slots=self.slots(),
            )
        )


def resolve_when_there(
    path: LogPath, attempt: str | None, control: FollowControl
) -> EventLogSource:
    """The log at ``path``, waiting (poll by poll, within the timeout) for Spark to create it
    or write its first bytes."""
    while True:
        try:
            return resolve_event_log(path, attempt)
        except (EventLogNotFoundError, NotAnEventLogError):
            if not control.wait():
                raise
            refresh = getattr(path.store, "refresh", None) if isinstance(path, RemotePath) else None
            if refresh is not None:
                refresh()


def follow_log(
    path: LogPath,
    on_stage: Callable[[CompletedStage], None],
    control: FollowControl,
    *,
    attempt: str | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> LoadedProfile:
    """Follow the application at ``path`` to its end (or until ``control`` stops it),
    calling ``on_stage`` for each stage attempt as it completes; the profile of all that
    was read."""
    resolved = resolve_when_there(path, attempt, control)
    parts = follow_parts(resolved.parts, control, in_progress=resolved.in_progress)
    source = replace(resolved, parts=parts)
    tracker = StageTracker(control, on_stage)
    loaded = fold_source(
        source, max_decompressed_bytes=max_decompressed_bytes, hooks=tracker.hooks()
    )
    final = _final_location(source)
    if final is not None and control.stopped is None:
        # The finished log's own name, as `perfmodel diagnose` on it would show.
        loaded.source.path = final
        loaded.source.in_progress = False
        loaded.profile.source = str(final)
    return loaded


def _final_location(source: EventLogSource) -> LogPath | None:
    """A single in-progress file's final name, once the writer renamed it."""
    if len(source.parts) != 1 or not str(source.path).endswith(_IN_PROGRESS):
        return None
    given = source.path
    candidate = given.parent / given.name[: -len(_IN_PROGRESS)]
    return candidate if candidate.exists() else None
