"""Following a running application: a report with findings per stage as it completes, then
the usual diagnosis at its end.

The front end follows the log and hands over each completed stage attempt's figures
(`perfmodel.spark.live`); this module says what they mean. Each `StageReport` carries the
findings of its stage:

* **skew**: the longest successful task ran ≥ `SKEW_FACTOR` × the median and ≥
  `SKEW_MIN_TASK_S` (the rule the diagnosis' stage sentences and the fleet use);
* **spill**: tasks spilled to disk (or memory) during the stage;
* **idle cores**: task time filled under `IDLE_UTILISATION` of the slots the
  application held over the stage's run (fewer tasks than slots, or stragglers);
* **slow stage**: the stage ran ≥ `SLOW_FACTOR` × the median of the stages completed
  before it, and ≥ `SLOW_MIN_S`;
* **failed tasks**: task attempts that ended in failure (or the stage itself failed).

At the end the profile read goes through the facade (`analyse_loaded`), so the final
diagnosis is the one `perfmodel diagnose` gives on the finished log.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from perfmodel.analysis.diagnosis import Diagnosis
from perfmodel.analysis.facade import Analysis, analyse_loaded, locate
from perfmodel.errors import EventLogNotFoundError
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED
from perfmodel.profile.sources.follow import FollowControl
from perfmodel.profile.sources.stores import LogPath, SourceOptions
from perfmodel.profile.sources.uri import is_history_url
from perfmodel.spark.live import CompletedStage, follow_log

SKEW_FACTOR = 3.0
SKEW_MIN_TASK_S = 1.0
SLOW_FACTOR = 3.0
SLOW_MIN_S = 5.0
SLOW_MIN_PEERS = 3
IDLE_UTILISATION = 0.5
IDLE_MIN_S = 2.0

FINDING_KINDS = ("skew", "spill", "idle_cores", "slow_stage", "failed_tasks")


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    """One of `FINDING_KINDS`."""
    text: str


@dataclass(slots=True)
class StageReport:
    """One completed stage attempt, reported once."""

    stage_id: int
    attempt: int
    name: str
    status: str
    """``COMPLETE`` or ``FAILED``."""
    duration_s: float | None
    tasks: int
    failed_tasks: int
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": "stage",
            "stage_id": self.stage_id,
            "attempt": self.attempt,
            "name": self.name,
            "status": self.status,
            "duration_s": self.duration_s,
            "tasks": self.tasks,
            "failed_tasks": self.failed_tasks,
            "findings": [{"kind": f.kind, "text": f.text} for f in self.findings],
        }


@dataclass(slots=True)
class WatchResult:
    """What following an application ended with."""

    analysis: Analysis
    diagnosis: Diagnosis
    """The diagnosis of everything read (of the finished log, unless ``stopped``)."""
    stages: list[StageReport]
    stopped: str | None
    """``timeout`` or ``interrupted`` when following stopped before the application ended."""
    bytes_read: int
    polls: int


def stage_report(stage: CompletedStage, earlier_s: list[float]) -> StageReport:
    """The report of ``stage``, its findings judged against the durations of the stages
    completed before it (``earlier_s``)."""
    report = StageReport(
        stage_id=stage.stage_id,
        attempt=stage.attempt,
        name=stage.name,
        status="FAILED" if stage.failure_reason else "COMPLETE",
        duration_s=stage.duration_s,
        tasks=len(stage.task_s) + stage.failed_tasks,
        failed_tasks=stage.failed_tasks,
    )
    report.findings = _findings(report, stage, earlier_s)
    return report


def _findings(report: StageReport, stage: CompletedStage, earlier_s: list[float]) -> list[Finding]:
    out: list[Finding] = []
    if len(stage.task_s) >= 2:
        longest = max(stage.task_s)
        median = statistics.median(stage.task_s)
        if longest >= SKEW_MIN_TASK_S and median > 0 and longest >= SKEW_FACTOR * median:
            out.append(
                Finding(
                    "skew",
                    f"longest task {longest:.1f} s, {longest / median:.1f}× the median "
                    f"({median:.2f} s)",
                )
            )
    if stage.spilled_disk or stage.spilled_memory:
        out.append(
            Finding(
                "spill",
                f"spilled {_size(stage.spilled_disk)} to disk "
                f"({_size(stage.spilled_memory)} in memory before serialisation)",
            )
        )
    duration = report.duration_s
    if stage.slots and duration and duration >= IDLE_MIN_S:
        used = stage.busy_s / (duration * stage.slots)
        if used < IDLE_UTILISATION:
            out.append(
                Finding(
                    "idle_cores",
                    f"tasks filled {used:.0%} of {stage.slots} task slots over the stage "
                    f"({report.tasks} task(s))",
                )
            )
    if duration is not None and len(earlier_s) >= SLOW_MIN_PEERS:
        peers = max(statistics.median(earlier_s), 1e-3)
        if duration >= SLOW_MIN_S and duration >= SLOW_FACTOR * peers:
            out.append(
                Finding(
                    "slow_stage",
                    f"{duration:.1f} s, {duration / peers:.1f}× the median of "
                    f"the {len(earlier_s)} stages before it",
                )
            )
    if stage.failed_tasks or stage.failure_reason:
        why = (
            f"; stage failed: {stage.failure_reason.splitlines()[0][:160]}"
            if stage.failure_reason
            else ""
        )
        out.append(Finding("failed_tasks", f"{stage.failed_tasks} task attempt(s) failed{why}"))
    return out


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _followed_location(
    text: str,
    sources: SourceOptions,
    control: FollowControl,
    *,
    history_server: str | None,
    attempt: str | None,
    max_decompressed_bytes: int,
) -> LogPath:
    """Where to follow ``text``: a History Server application as a store that downloads
    it again when the server says it changed (waiting for the server to list it: it does
    so only after its next scan), anything else as `locate` finds it."""
    if history_server is None and not is_history_url(text):
        return locate(text, sources, max_decompressed_bytes=max_decompressed_bytes)
    # Imported when needed, as `locate` does: following a log on disk or in a store never
    # pays for an HTTP client's start-up (ssl, http.client: CPU that is all overhead here).
    from perfmodel.profile.sources.history import live_history_log

    while True:
        try:
            return live_history_log(
                text,
                sources,
                max_decompressed_bytes,
                control.interval_s,
                history_server=history_server,
                attempt=attempt,
            )
        except EventLogNotFoundError:
            if not control.wait():
                raise


def watch(
    text: str,
    on_stage: Callable[[StageReport], None],
    *,
    sources: SourceOptions | None = None,
    history_server: str | None = None,
    attempt: str | None = None,
    interval_s: float = 2.0,
    timeout_s: float | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> WatchResult:
    """Follow the application at ``text`` (a log location, or with ``history_server`` an
    application id on it) to its end, calling ``on_stage`` for each stage attempt as it
    completes; stop early when the log did not grow for ``timeout_s`` or on Ctrl-C while
    waiting (`WatchResult.stopped` says which)."""
    control = FollowControl(interval_s=interval_s, timeout_s=timeout_s)
    sources = sources or SourceOptions()
    log = _followed_location(
        text,
        sources,
        control,
        history_server=history_server,
        attempt=attempt,
        max_decompressed_bytes=max_decompressed_bytes,
    )
    durations: list[float] = []
    reports: list[StageReport] = []

    def completed(stage: CompletedStage) -> None:
        report = stage_report(stage, durations)
        if stage.duration_s is not None:
            durations.append(stage.duration_s)
        reports.append(report)
        on_stage(report)

    # The History Server's zip holds only the attempt asked for: nothing left to pick.
    picked = None if history_server is not None or is_history_url(text) else attempt
    loaded = follow_log(
        log, completed, control, attempt=picked, max_decompressed_bytes=max_decompressed_bytes
    )
    analysis = analyse_loaded(loaded)
    return WatchResult(
        analysis=analysis,
        diagnosis=analysis.diagnose(),
        stages=reports,
        stopped=control.stopped,
        bytes_read=control.bytes_read,
        polls=control.polls,
    )
