"""What `perfmodel diagnose` says about a profile, as plain data.

The terminal view and the ``--json`` output are both renderings of `Diagnosis`, so a
notebook gets exactly what the CLI shows. Everything here is measured from the log;
code-inferred resource vectors and simulator advice are added by later stages of the
flow, never mixed in silently.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from perfmodel.analysis.critical_path import CriticalPath, critical_path
from perfmodel.analysis.task_figures import BYTE_FIELDS, TaskFigures, median_of_sorted
from perfmodel.dag.decomposition import COMPONENTS
from perfmodel.dag.loaded import LoadedProfile
from perfmodel.dag.model import ApplicationProfile, StageNode
from perfmodel.jsonout import builtin
from perfmodel.simulate.replay import Prediction
from perfmodel.spark.events import unknown_version
from perfmodel.spark.load import gc_paused

SCHEMA_VERSION = 1
IMPORTANT_SHARE = 0.05
"""A stage matters if it covers at least this share of the application's wall time..."""
MAX_IMPORTANT = 8
"""...and it is among the longest few."""
STRAGGLER_FACTOR = 1.5
STRAGGLER_MIN_EXCESS_MS = 1000.0

RESOURCE_WORDS = {
    "cpu": "CPU",
    "gc": "garbage collection",
    "network": "shuffle fetch waits (network)",
    "disk": "shuffle write (disk)",
    "scheduling": "scheduling and task launch overhead",
    "unattributed": "time the engine does not break down (often Python workers or unmeasured I/O)",
}


@dataclass(slots=True)
class StageDiagnosis:
    stage_id: int
    attempt: int
    name: str
    status: str
    job_ids: list[int]
    num_tasks: int
    tasks_run: int
    failed_tasks: int
    duration_s: float
    task_time_s: float
    decomposition: dict[str, float]
    """Task-time seconds per measured component (see `perfmodel.dag.decomposition`)."""
    shares: dict[str, float]
    cpu_measured: bool
    dominant: str | None
    median_task_s: float
    max_task_s: float
    skew: float | None
    """Longest over median successful task time; None with fewer than 2 tasks."""
    stragglers: int
    input_bytes: int
    output_bytes: int
    shuffle_read_bytes: int
    shuffle_write_bytes: int
    memory_spill_bytes: int
    disk_spill_bytes: int
    share_of_app: float
    important: bool = False
    summary: str = ""
    sampled_ms: float = 0.0
    """Thread time the stack samples of this stage stand for (0 without a bundle)."""
    top_functions: list[dict[str, Any]] = field(default_factory=list)
    """From stack samples: function, self_ms, total_ms, self_share, samples (largest first)."""
    code_vector: dict[str, float] = field(default_factory=dict)
    """Share per resource inferred from the code the stage ran (bundles only)."""
    code_bottleneck: str | None = None
    disagreements: list[str] = field(default_factory=list)
    """Where the measured decomposition and the code-inferred vector disagree."""
    spark_metrics: dict[str, int] = field(default_factory=dict)
    """Spark's raw task-metric sums for the stage attempt, as its REST API names them
    (`perfmodel.spark.metrics`; docs/diagnose-json.md)."""


@dataclass(slots=True)
class ExecutorSummary:
    count: int
    """Executors added over the whole run (dynamic allocation replaces and adds them)."""
    max_alive: int | None
    """The most executors alive at once (the cluster's size for the replay)."""
    hosts: int
    cores: int | None
    total_slots: int | None
    memory_bytes: int | None
    master: str
    dynamic_allocation: bool
    sources: dict[str, str]


@dataclass(slots=True)
class QuerySummary:
    query_id: int
    description: str
    duration_s: float
    job_ids: list[int]
    operators: int
    failed: bool


@dataclass(slots=True)
class Diagnosis:
    schema_version: int
    source: str
    app_id: str
    app_name: str
    attempt: str | None
    spark_version: str
    duration_s: float
    complete: bool
    jobs: int
    failed_jobs: int
    stages_completed: int
    stages_failed: int
    stages_skipped: int
    tasks: int
    """TaskEnd events in the log (every ended task attempt, including failed ones)."""
    failed_tasks: int
    """TaskEnd events whose reason is not Success (failures, kills, resubmissions)."""
    task_end_reasons: dict[str, int]
    sql_executions: int
    executors: ExecutorSummary
    slot_utilisation: float | None
    task_time_s: float
    decomposition: dict[str, float]
    shares: dict[str, float]
    dominant: str | None
    stages: list[StageDiagnosis]
    queries: list[QuerySummary]
    critical_path: list[int]
    critical_path_s: float
    critical_path_gaps_s: float
    findings: list[str]
    bottleneck: str | None
    """The resource the what-if model finds the run waiting on most (None without a model)."""
    model_error: float | None
    """Baseline replay vs observed runtime (signed fraction): how far to trust the advice."""
    advice: list[dict[str, Any]]
    """Simulator-quantified advice: stage_id (null = whole app), resource, share, change,
    before_s, after_s, text."""
    warnings: list[str]
    problems: list[dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)
    """Sections added by later analyses (code-inferred vectors, samples, advice)."""
    data_quality: dict[str, Any] = field(default_factory=dict)
    """Damage met while reading the log, counted by kind (`perfmodel.profile.quality`)."""
    spark_metrics: dict[str, int] = field(default_factory=dict)
    """Spark's raw task-metric sums over every stage attempt (see `StageDiagnosis`)."""
    alerts: list[dict[str, Any]] = field(default_factory=list)
    """Alerts, most impact first, each with its knob, a suggested value and the predicted
    runtime with it (`perfmodel.analysis.alerts.Alert.as_dict`; docs/alerts.md)."""

    @property
    def framework(self) -> str:
        """The engine that ran the application, as users name it (``Spark``, ``Dask``)."""
        return str(self.extra.get("framework", "Spark"))

    def to_json(self) -> dict[str, Any]:
        # msgspec's C walk, not dataclasses.asdict (which deep-copies every leaf: ~0.9 s
        # on a 6,000-stage diagnosis); unknown leaves become what json's default=str makes.
        with gc_paused():  # a dict per stage: collections would walk the whole profile
            return msgspec.to_builtins(self, enc_hook=builtin)


class _StageFigures:
    """`TaskFigures` per stage as plain lists, taken out of numpy once for all stages: a
    6,000-stage log spent most of its diagnosis in a dozen numpy calls per stage."""

    def __init__(self, f: TaskFigures) -> None:
        self.index = f.index
        self.components = f.stage_component_sums().tolist()
        self.cpu_measured = (f.cpu_measured > 0).tolist()
        self.tasks_run = f.tasks_run.tolist()
        self.succeeded = f.succeeded.tolist()
        self.duration_starts = f.duration_starts.tolist()
        self.durations = f.sorted_durations.tolist()
        self.bytes = {name: f.bytes[name].tolist() for name in BYTE_FIELDS}
        self.metrics = {name: v.tolist() for name, v in f.metric_sums.items()}


def _stage_diagnosis(stage: StageNode, app_ms: float, f: _StageFigures) -> StageDiagnosis:
    i = f.index[stage.key]
    # The same arithmetic as `TimeDecomposition.total_ms` / `.shares()` on the stage's sums.
    values = [row[i] for row in f.components]
    total_ms = sum(values)
    if total_ms <= 0:
        shares = {name: 0.0 for name in COMPONENTS}
    else:
        shares = {name: v / total_ms for name, v in zip(COMPONENTS, values, strict=True)}
    lo = f.duration_starts[i]
    durations = f.durations[lo : lo + f.succeeded[i]]
    tasks_run = f.tasks_run[i]
    median = median_of_sorted(durations)
    longest = durations[-1] if durations else 0.0
    skew = longest / median if len(durations) >= 2 and median > 0 else None
    threshold = max(median * STRAGGLER_FACTOR, median + STRAGGLER_MIN_EXCESS_MS)
    stragglers = len(durations) - bisect_right(durations, threshold) if len(durations) >= 2 else 0
    decomposition = {name: v / 1000.0 for name, v in zip(COMPONENTS, values, strict=True)}
    dominant = max(shares.items(), key=lambda kv: kv[1])[0] if total_ms > 0 else None
    duration = stage.duration_ms
    sums = {name: int(f.bytes[name][i]) for name in BYTE_FIELDS}
    return StageDiagnosis(
        stage_id=stage.stage_id,
        attempt=stage.attempt,
        name=stage.name,
        status=stage.status,
        job_ids=sorted(stage.job_ids),
        num_tasks=stage.num_tasks,
        tasks_run=tasks_run,
        failed_tasks=tasks_run - len(durations),
        duration_s=duration / 1000.0,
        task_time_s=total_ms / 1000.0,
        decomposition=decomposition,
        shares=shares,
        cpu_measured=bool(tasks_run) and f.cpu_measured[i],
        dominant=dominant,
        median_task_s=median / 1000.0,
        max_task_s=longest / 1000.0,
        skew=skew,
        stragglers=stragglers,
        input_bytes=sums["input_bytes"],
        output_bytes=sums["output_bytes"],
        shuffle_read_bytes=sums["shuffle_read_bytes"],
        shuffle_write_bytes=sums["shuffle_write_bytes"],
        memory_spill_bytes=sums["memory_spill_bytes"],
        disk_spill_bytes=sums["disk_spill_bytes"],
        share_of_app=duration / app_ms if app_ms > 0 else 0.0,
        spark_metrics={name: int(v[i]) for name, v in f.metrics.items()},
    )


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def short_name(name: str, width: int = 30) -> str:
    """A stage name without directories: "reduceByKey at job.py:61" reads better than a path."""
    head, sep, where = name.partition(" at ")
    if sep:
        where = where.rsplit("/", 1)[-1]
        name = f"{head} at {where}"
    return _cut(name, width)


def short_function(name: str, width: int = 90) -> str:
    """A sampled function with only the last two parts of its file's path.

    Python frames are named ``function (path)``, and the path of an installed package starts
    with the virtual environment's, so a table column cut at its width showed the same prefix
    for every PySpark function and lost the file name. JVM frames (no path) stay as they are.
    """
    function, sep, path = name.partition(" (")
    if sep and path.endswith(")") and path.startswith("/"):
        parts = path[:-1].split("/")
        if len(parts) > 3:
            name = f"{function} (…/{'/'.join(parts[-2:])})"
    return _cut(name, width)


def _stage_sentence(s: StageDiagnosis) -> str:
    label = short_name(s.name, 60) if s.name else "(unnamed)"
    if s.task_time_s <= 0 or s.dominant is None:
        return f"Stage {s.stage_id} ({label}): no finished tasks to break down."
    top = sorted(s.shares.items(), key=lambda kv: kv[1], reverse=True)
    main, main_share = top[0]
    text = (
        f"Stage {s.stage_id} ({label}) took {s.duration_s:.1f} s over {s.tasks_run} task(s); "
        f"{main_share:.0%} of its task time is {RESOURCE_WORDS[main]}"
    )
    if len(top) > 1 and top[1][1] >= 0.15:
        text += f", {top[1][1]:.0%} {RESOURCE_WORDS[top[1][0]]}"
    if not s.cpu_measured:
        text += " (this Spark version does not record CPU time)"
    text += "."
    if s.skew is not None and s.skew >= 3 and s.max_task_s >= 1:
        text += f" Skewed: the longest task ran {s.skew:.1f}× the median."
    if s.disk_spill_bytes:
        text += f" Spilled {_bytes(s.disk_spill_bytes)} to disk."
    if s.failed_tasks:
        text += f" {s.failed_tasks} task attempt(s) did not succeed."
    return text


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def diagnose(
    loaded: LoadedProfile,
    *,
    baseline: Prediction | None = None,
    advice: Sequence[Mapping[str, Any]] = (),
    has_samples: bool = False,
    unattributed_basis: str | None = None,
) -> Diagnosis:
    """Everything `perfmodel diagnose` reports about one loaded profile.

    The what-if parts come from the caller (the facade, `perfmodel.analysis`), which
    compiles the workload once: ``baseline`` is the replay of the observed configuration
    (the bottleneck and the model's self-check error), ``advice`` the quantified advice
    lines. Without them the diagnosis is the measured part alone. ``has_samples`` says
    the profile came with stack samples, so the findings point at them instead of asking
    for a recording. ``unattributed_basis`` says what the task time Spark's metrics leave
    unattributed is made of (measured per thread, or what the bare log suggests); its finding
    follows the one about that time, or ends the findings where that time was too small
    for one.
    """
    p = loaded.profile
    warnings = list(p.warnings)
    bottleneck = baseline.bottleneck if baseline is not None else None
    model_error = baseline.model_error if baseline is not None else None
    app_ms = p.duration_ms
    figures = TaskFigures(p)
    per_stage = _StageFigures(figures)
    stages = [
        _stage_diagnosis(s, app_ms, per_stage)
        for s in sorted(p.stages.values(), key=lambda s: s.key)
    ]
    ranked = sorted(
        (s for s in stages if s.duration_s > 0), key=lambda s: s.duration_s, reverse=True
    )
    for s in ranked[:MAX_IMPORTANT]:
        if s.share_of_app >= IMPORTANT_SHARE or s is ranked[0]:
            s.important = True
    for s in stages:
        s.summary = _stage_sentence(s)

    total = figures.parts.total()
    shares = total.shares()
    dominant = max(shares.items(), key=lambda kv: kv[1])[0] if total.total_ms > 0 else None

    res = p.resources
    executors = [e for e in p.executors.values() if e.executor_id != "driver"]
    memory = res.executor_memory_bytes
    summary = ExecutorSummary(
        count=len(executors) if executors else (1 if res.local_mode else 0),
        max_alive=res.executor_instances,
        hosts=res.hosts or len({e.host for e in executors if e.host}),
        cores=res.executor_cores,
        total_slots=res.total_slots,
        memory_bytes=memory,
        master=res.master,
        dynamic_allocation=res.dynamic_allocation,
        sources=dict(res.sources),
    )
    utilisation = None
    if res.total_slots and app_ms > 0:
        durations = figures.durations
        busy = float(np.cumsum(durations)[-1]) if durations.size else 0
        utilisation = busy / (res.total_slots * app_ms)

    path = critical_path(p)
    queries = [
        QuerySummary(
            query_id=q.query_id,
            description=q.description[:200],
            duration_s=q.duration_ms / 1000.0,
            job_ids=q.job_ids,
            operators=len(q.plan.walk()) if q.plan else 0,
            failed=q.error is not None,
        )
        for q in sorted(p.queries.values(), key=lambda q: q.query_id)
    ]
    findings = _findings(
        p, stages, shares, dominant, utilisation, path, has_samples, unattributed_basis
    )
    failed_tasks = sum(n for r, n in loaded.task_end_reasons.items() if r != "Success")
    return Diagnosis(
        schema_version=SCHEMA_VERSION,
        source=str(loaded.source.path),
        app_id=p.app_id,
        app_name=p.app_name,
        attempt=p.attempt,
        spark_version=p.framework_version or unknown_version(p.event_counts),
        duration_s=app_ms / 1000.0,
        complete=p.complete,
        jobs=len(p.jobs),
        failed_jobs=sum(1 for j in p.jobs.values() if j.result == "FAILED"),
        stages_completed=sum(1 for s in p.stages.values() if s.status == "COMPLETE"),
        stages_failed=sum(1 for s in p.stages.values() if s.status == "FAILED"),
        stages_skipped=sum(1 for s in p.stages.values() if s.status == "SKIPPED"),
        tasks=loaded.task_end_events,
        failed_tasks=failed_tasks,
        task_end_reasons=loaded.task_end_reasons,
        sql_executions=len(p.queries),
        executors=summary,
        slot_utilisation=utilisation,
        task_time_s=total.total_ms / 1000.0,
        decomposition={k: v / 1000.0 for k, v in total.as_dict().items()},
        shares=shares,
        dominant=dominant,
        stages=stages,
        queries=queries,
        critical_path=path.stage_ids,
        critical_path_s=path.stage_s,
        critical_path_gaps_s=path.gaps_s,
        findings=findings,
        bottleneck=bottleneck,
        model_error=model_error,
        advice=[dict(a) for a in advice],
        warnings=warnings,
        problems=[
            {"file": pr.file, "line": pr.line, "message": pr.message} for pr in loaded.problems
        ],
        data_quality=loaded.quality.as_dict(),
        spark_metrics=figures.spark.sums(),
        extra={"framework": _framework(p)} if _framework(p) != "Spark" else {},
    )


def _framework(p: ApplicationProfile) -> str:
    """``Spark`` (also for profiles that name none), else the front end's name: ``Dask``."""
    return p.framework.capitalize() if p.framework else "Spark"


def _findings(
    p: ApplicationProfile,
    stages: list[StageDiagnosis],
    shares: dict[str, float],
    dominant: str | None,
    utilisation: float | None,
    path: CriticalPath,
    has_samples: bool,
    unattributed_basis: str | None,
) -> list[str]:
    out: list[str] = []
    if dominant is not None:
        out.append(
            f"Across all tasks, the largest measured share of task time is "
            f"{RESOURCE_WORDS[dominant]} ({shares[dominant]:.0%})."
        )
    if shares.get("unattributed", 0.0) >= 0.3:
        where = (
            "the top functions per stage (stack samples) show which code spends it."
            if has_samples
            else "record stack samples (perfmodel record) to see which code spends it."
        )
        out.append(
            f"{shares['unattributed']:.0%} of task time is not broken down by "
            f"{_framework(p)}'s metrics; " + where
        )
        if unattributed_basis:
            out.append(f"Of that: {unattributed_basis}.")
    if utilisation is not None and p.duration_ms > 0:
        if utilisation < 0.5:
            out.append(
                f"Task slots were busy only {utilisation:.0%} of the application's wall time: "
                "driver-side work, scheduling gaps or too few tasks per stage leave cores idle."
            )
    if path.stage_ids and p.duration_ms > 0:
        shown = path.stage_ids
        chain = " → ".join(str(s) for s in shown[:12]) + (" → …" if len(shown) > 12 else "")
        out.append(
            f"Critical path: stages {chain}: {path.stage_s:.1f} s in stages "
            f"({path.stage_s * 1000 / p.duration_ms:.0%} of the run) and {path.gaps_s:.1f} s "
            "between them (driver work, job submission, start-up)."
        )
        if path.gaps_s * 1000 / p.duration_ms >= 0.3:
            out.append(
                f"{path.gaps_s * 1000 / p.duration_ms:.0%} of the run passes with no stage "
                "running on the critical path: the driver (planning, collecting results, "
                "Python code between actions) or start-up dominates, and more executor "
                "resources will not shorten it."
            )
    important = [s for s in stages if s.important]
    for s in important:
        out.append(s.summary)
    if unattributed_basis and shares.get("unattributed", 0.0) < 0.3:
        out.append(f"Unattributed task time: {unattributed_basis}.")
    return out
