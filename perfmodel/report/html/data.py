"""The report page of one application, as plain data (a list of sections).

Everything the page shows is computed here, in Python, from the facade's answers, so a
test (or a notebook) can compare the page's numbers with `Analysis.diagnose()` without a
browser, and the page's script only draws. Sections are generic (``cards``, ``timeline``,
``dag``, ``stages``, ``flame``, ``whatif``, ``list``, ``table``, ``scatter``): the
experiment page and a later fleet index page are other lists of the same kinds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from perfmodel._version import __version__
from perfmodel.analysis.diagnosis import RESOURCE_WORDS, Diagnosis, StageDiagnosis, short_name
from perfmodel.errors import PerfmodelError
from perfmodel.report.html.graphs import (
    dag_layout,
    flame_section,
    longest_first,
    stage_key,
)
from perfmodel.report.html.timeline import TaskRow, build_timeline, timeline_rows

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis

HIST_BINS = 20
MAX_DETAILED_STAGES = 300
"""Stages with full detail (histogram, functions); the rest keep their headline numbers."""
MAX_PAGE_STAGES = 2000
"""Stages on the page at most (the summary still counts them all)."""
CORE_FACTORS = (0.25, 0.5, 1, 2, 4)
MEMORY_FACTORS = (0.25, 0.5, 1, 2, 4)


@dataclass(slots=True)
class Section:
    id: str
    title: str
    kind: str
    data: Any
    note: str = ""


@dataclass(slots=True)
class Page:
    """What the template renders: a title and sections (see `perfmodel.report.html.page`)."""

    title: str
    subtitle: str
    sections: list[Section] = field(default_factory=list)
    generated: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    version: str = __version__

    def to_json(self) -> dict[str, Any]:
        return _finite(asdict(self))


def _finite(value: Any) -> Any:
    """NaN and infinities become null: the page's data must be strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _card(key: str, label: str, value: Any, detail: str = "") -> dict[str, Any]:
    return {"key": key, "label": label, "value": value, "detail": detail}


def summary_cards(d: Diagnosis) -> list[dict[str, Any]]:
    """The headline numbers, each with a stable key the tests (and users' scripts) look up."""
    ex = d.executors
    cards = [
        _card(
            "app",
            "Application",
            d.app_name or d.app_id,
            f"{d.app_id} · {d.framework} {d.spark_version}",
        ),
        _card(
            "duration",
            "Duration",
            f"{d.duration_s:.1f} s",
            "complete" if d.complete else "did not finish in this log",
        ),
        _card("complete", "Complete", "yes" if d.complete else "no"),
        _card("jobs", "Jobs", d.jobs, f"{d.failed_jobs} failed"),
        _card(
            "stages",
            "Stage attempts",
            len(d.stages),
            f"{d.stages_completed} completed, {d.stages_failed} failed, {d.stages_skipped} skipped",
        ),
        _card("tasks", "Tasks", d.tasks, f"{d.failed_tasks} not successful"),
        _card(
            "executors",
            "Executors × cores",
            f"{ex.count} × {ex.cores or '?'}",
            f"{ex.total_slots or '?'} slots on {ex.hosts or '?'} host(s), master {ex.master or '?'}"
            + (" · dynamic allocation" if ex.dynamic_allocation else ""),
        ),
        _card(
            "utilisation",
            "Slot utilisation",
            f"{d.slot_utilisation:.0%}" if d.slot_utilisation is not None else "unknown",
        ),
        _card(
            "bottleneck",
            "Bottleneck",
            d.bottleneck or "unknown",
            f"largest measured share: {RESOURCE_WORDS[d.dominant]}" if d.dominant else "",
        ),
        _card(
            "model_error",
            "Model self-check",
            f"{d.model_error:+.1%}" if d.model_error is not None else "n/a",
            "baseline replay vs observed runtime",
        ),
        _card(
            "critical_path",
            "Critical path",
            _chain(d.critical_path),
            f"{len(d.critical_path)} stage(s): {d.critical_path_s:.1f} s in stages, "
            f"{d.critical_path_gaps_s:.1f} s between them",
        ),
    ]
    return cards


def _chain(stage_ids: list[int], shown: int = 6) -> str:
    """``0 → 1 → 2 → … → 9``: a long path cut in the middle (the DAG shows all of it)."""
    if not stage_ids:
        return "none"
    if len(stage_ids) <= shown:
        return " → ".join(str(s) for s in stage_ids)
    head = " → ".join(str(s) for s in stage_ids[: shown - 2])
    return f"{head} → … → {stage_ids[-1]}"


def _durations_by_stage(rows: list[TaskRow]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for _ex, launch, finish, stage, attempt, _task, status in rows:
        if status == "SUCCESS":
            out[stage_key(stage, attempt)].append(max(0.0, finish - launch) / 1000.0)
    return out


def _histogram(durations: list[float]) -> dict[str, list[float]]:
    if not durations:
        return {"edges": [], "counts": []}
    top = max(durations) or 1.0
    counts, edges = np.histogram(np.asarray(durations), bins=HIST_BINS, range=(0.0, top))
    return {"edges": [round(float(e), 4) for e in edges], "counts": counts.tolist()}


def _stage_entry(
    s: StageDiagnosis, critical: set[int], detail: bool, durations: list[float]
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "key": stage_key(s.stage_id, s.attempt),
        "id": s.stage_id,
        "attempt": s.attempt,
        "name": s.name,
        "short": short_name(s.name, 40),
        "status": s.status,
        "jobs": s.job_ids,
        "duration_s": s.duration_s,
        "tasks": s.tasks_run,
        "failed": s.failed_tasks,
        "task_time_s": s.task_time_s,
        "decomposition_s": s.decomposition,
        "shares": s.shares,
        "code_vector": s.code_vector,
        "code_bottleneck": s.code_bottleneck,
        "skew": s.skew,
        "median_task_s": s.median_task_s,
        "max_task_s": s.max_task_s,
        "stragglers": s.stragglers,
        "bytes": {
            "input": s.input_bytes,
            "output": s.output_bytes,
            "shuffle read": s.shuffle_read_bytes,
            "shuffle write": s.shuffle_write_bytes,
            "memory spill": s.memory_spill_bytes,
            "disk spill": s.disk_spill_bytes,
        },
        "share_of_app": s.share_of_app,
        "important": s.important,
        "critical": s.stage_id in critical,
        "summary": s.summary,
        "disagreements": s.disagreements,
        "detailed": detail,
    }
    if detail:
        entry["histogram"] = _histogram(durations)
        entry["top_functions"] = s.top_functions
    return entry


def stage_entries(d: Diagnosis, rows: list[TaskRow]) -> list[dict[str, Any]]:
    """One entry per stage attempt, at most `MAX_PAGE_STAGES` of them (a driver-heavy log
    has tens of thousands of stages; the page keeps the ones that decide the run), full
    detail for `MAX_DETAILED_STAGES`."""
    critical = set(d.critical_path)
    kept = {(s.stage_id, s.attempt) for s in longest_first(d.stages, MAX_PAGE_STAGES, critical)}
    detailed = {
        (s.stage_id, s.attempt) for s in longest_first(d.stages, MAX_DETAILED_STAGES, critical)
    }
    durations = _durations_by_stage(rows)
    return [
        _stage_entry(
            s,
            critical,
            (s.stage_id, s.attempt) in detailed,
            durations.get(stage_key(s.stage_id, s.attempt), []),
        )
        for s in d.stages
        if (s.stage_id, s.attempt) in kept
    ]


def _sweep_curve(analysis: Analysis, axis: str, values: list[str], xs: list[float]) -> dict:
    points = analysis.sweep([f"{axis}={','.join(values)}"])
    return {
        "x": xs,
        "predicted_s": [p.prediction.predicted_s for p in points],
        "labels": values,
    }


def whatif_section(analysis: Analysis, d: Diagnosis) -> dict[str, Any]:
    """Runtime against cores and against memory, the observed point, and the advice."""
    out: dict[str, Any] = {
        "advice": [a["text"] for a in d.advice],
        "bottleneck": d.bottleneck,
        "model_error": d.model_error,
        "observed_s": d.duration_s,
        "curves": [],
        "intervals": None,
    }
    if not analysis.profile.stages:
        out["error"] = "the log holds no stages: nothing to replay"
        return out
    base = analysis.baseline
    try:
        replay = analysis.predict().baseline_replay_s
        slots = base.executors * base.executor_cores
        cores = sorted({max(1, round(slots * f)) for f in CORE_FACTORS})
        out["curves"].append(
            {
                "axis": "cores",
                "title": "Runtime against task cores (whole application)",
                "x_label": "task cores",
                "observed": {"x": slots, "y": d.duration_s, "replay": replay},
                **_sweep_curve(
                    analysis, "cores", [str(c) for c in cores], [float(c) for c in cores]
                ),
            }
        )
        mib = max(1, base.memory_bytes // (1024 * 1024))
        mems = sorted({max(64, round(mib * f)) for f in MEMORY_FACTORS})
        out["curves"].append(
            {
                "axis": "mem",
                "title": "Runtime against executor memory",
                "x_label": "executor heap (GiB)",
                "observed": {"x": round(mib / 1024, 3), "y": d.duration_s, "replay": replay},
                **_sweep_curve(
                    analysis, "mem", [f"{m}m" for m in mems], [round(m / 1024, 3) for m in mems]
                ),
            }
        )
    except PerfmodelError as exc:
        out["error"] = f"no what-if curves for this log: {exc}"
    return out


def quality_section(d: Diagnosis) -> dict[str, Any] | None:
    """The damage met while reading (`perfmodel.profile.quality`), when there was any."""
    q = d.data_quality
    if not q.get("damaged") and not d.problems:
        return None
    return {
        "headline": q.get("headline", ""),
        "affects_answer": bool(q.get("affects_answer")),
        "counts": {k: v for k, v in q.get("counts", {}).items() if v},
        "examples": q.get("examples", {}),
        "problems": d.problems[:50],
        "problems_total": len(d.problems),
    }


def application_page(analysis: Analysis) -> Page:
    """Every section of `perfmodel report` for one loaded log or bundle."""
    d = analysis.diagnose()
    rows = timeline_rows(analysis.profile)
    timeline = build_timeline(analysis.profile, rows=rows)
    stages = stage_entries(d, rows)
    page = Page(
        title=d.app_name or d.app_id,
        subtitle=f"{d.app_id} · {d.framework} {d.spark_version} · {d.source}",
    )
    page.sections.append(Section("summary", "Summary", "cards", {"cards": summary_cards(d)}))
    quality = quality_section(d)
    if quality is not None:
        page.sections.append(
            Section(
                "quality",
                "Data quality",
                "quality",
                quality,
                "The log was damaged: these counts say what was skipped or repaired while "
                "reading it, so the numbers below rest on what could be read.",
            )
        )
    page.sections.append(
        Section(
            "timeline",
            "Timeline",
            "timeline",
            asdict(timeline),
            "One lane per executor slot (lanes assigned by start time: Spark does not log "
            "slots); bars coloured by stage; shaded: no task running anywhere (driver only).",
        )
    )
    page.sections.append(
        Section(
            "dag",
            "Stage DAG",
            "dag",
            dag_layout(analysis, d),
            "The critical path in red (dashed where the driver, not a shuffle, chained two "
            "stages), stages that matter outlined. Click a stage for its detail.",
        )
    )
    page.sections.append(
        Section("stages", "Per stage", "stages", {"stages": stages, "total": len(d.stages)})
    )
    flame = flame_section(analysis)
    if flame is not None:
        page.sections.append(Section("flame", "Flame graph", "flame", flame))
    page.sections.append(Section("whatif", "What-if", "whatif", whatif_section(analysis, d)))
    page.sections.append(
        Section(
            "alerts",
            "Alerts",
            "list",
            {
                "items": [a["text"] for a in d.alerts] or ["No alert for this log."],
                "notes": [
                    "Each alert names what controls it and a suggested value; where that is a "
                    "setting, the runtime predicted with it (the settings what-if, as "
                    "predict --conf). Thresholds: docs/alerts.md."
                ],
            },
        )
    )
    page.sections.append(
        Section(
            "findings",
            "Findings",
            "list",
            {"items": d.findings, "warnings": d.warnings, "notes": analysis.notes},
        )
    )
    return page
