"""What a fleet run tells a platform team, as plain data.

`FleetSummary` is computed from the tables alone (so the summary of a resumed run covers
the whole fleet, not only the logs analysed this time); `perfmodel.report` renders it (the
terminal view, ``summary.html``, ``--json``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from perfmodel.fleet.schema import Table

TOP = 10


@dataclass(slots=True)
class FleetSummary:
    logs: int
    analysed_now: int
    skipped: int
    applications: int
    errors: int
    held_core_hours: float
    wasted_core_hours: float
    top_wasted: list[dict[str, Any]] = field(default_factory=list)
    top_runtime: list[dict[str, Any]] = field(default_factory=list)
    bottlenecks: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    regressions: list[dict[str, Any]] = field(default_factory=list)
    error_list: list[dict[str, Any]] = field(default_factory=list)
    predictions: list[dict[str, Any]] = field(default_factory=list)
    duplicate_logs: int = 0
    """Logs of an application (id and attempt) another log already holds: counted once."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """``{log_path, app_id, attempt, same_as}`` per duplicate log (``same_as``: the log
    whose figures count)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_APP_COLS = [
    "log_path",
    "app_id",
    "app_name",
    "user",
    "duration_s",
    "wasted_core_hours",
    "held_core_hours",
    "slot_utilisation",
    "bottleneck",
    "complete",
    "failed_jobs",
    "stages_failed",
    "failed_tasks",
]


def unique_apps(
    apps: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The applications once each, and the logs that repeat one.

    The same application (id and attempt) can sit in several files: a copy in an archive,
    a log both in the History Server folder and in a listing. Its core-hours are counted
    once, from the first of its logs by path; the others are listed as duplicates. Logs
    without an application id are never merged."""
    first: dict[tuple[str, str], str] = {}
    unique: list[dict[str, Any]] = []
    repeats: list[dict[str, Any]] = []
    for a in sorted(apps, key=lambda a: a["log_path"]):
        if a["app_id"] is None:
            unique.append(a)
            continue
        key = (a["app_id"], a.get("attempt") or "")
        if key in first:
            repeats.append(
                {
                    "log_path": a["log_path"],
                    "app_id": a["app_id"],
                    "attempt": a.get("attempt"),
                    "same_as": first[key],
                }
            )
        else:
            first[key] = a["log_path"]
            unique.append(a)
    return unique, repeats


def mark_duplicates(apps: Table) -> Table:
    """``apps`` with ``duplicate_of`` set on every log that repeats an application another
    log holds (`unique_apps`), and null on the others; recomputed over the whole table by
    every run, so a resumed run flags a copy found later too."""
    rows = apps.rows(["log_path", "app_id", "attempt"])
    _, repeats = unique_apps(rows)
    same_as = {r["log_path"]: r["same_as"] for r in repeats}
    return apps.with_column("duplicate_of", [same_as.get(r["log_path"]) for r in rows])


def summarise(
    tables: dict[str, Table], *, analysed_now: int, skipped: int, top: int = TOP
) -> FleetSummary:
    all_apps = tables["apps"].rows(_APP_COLS + ["attempt", "start"])
    for a in all_apps:
        a["start"] = a["start"].isoformat() if a["start"] is not None else None
    apps, repeats = unique_apps(all_apps)
    errors = tables["errors"].rows(["log_path", "kind", "reason"])
    s = FleetSummary(
        logs=len(all_apps) + len(errors),
        analysed_now=analysed_now,
        skipped=skipped,
        applications=len(apps),
        errors=len(errors),
        held_core_hours=sum(a["held_core_hours"] or 0.0 for a in apps),
        wasted_core_hours=sum(a["wasted_core_hours"] or 0.0 for a in apps),
        duplicate_logs=len(repeats),
        duplicates=repeats,
    )
    s.top_wasted = sorted(apps, key=lambda a: (-(a["wasted_core_hours"] or 0.0), a["log_path"]))[
        :top
    ]
    s.top_runtime = sorted(apps, key=lambda a: (-(a["duration_s"] or 0.0), a["log_path"]))[:top]
    runs: Counter[str] = Counter()
    names: dict[str, set[str]] = defaultdict(set)
    wasted: dict[str, float] = defaultdict(float)
    for a in apps:
        b = a["bottleneck"] or "(no model)"
        runs[b] += 1
        names[b].add(a["app_name"] or a["app_id"] or a["log_path"])
        wasted[b] += a["wasted_core_hours"] or 0.0
    s.bottlenecks = [
        {"bottleneck": b, "runs": n, "applications": len(names[b]), "wasted_core_hours": wasted[b]}
        for b, n in sorted(runs.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    s.failed = [
        {**a, "why": _failure(a)} for a in sorted(apps, key=lambda a: a["log_path"]) if _failure(a)
    ]
    s.regressions = tables["regressions"].rows()
    s.error_list = errors
    preds = tables["predictions"].rows(["what_if", "observed_s", "predicted_s", "error"])
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    why: dict[str, str] = {}  # per what-if, the first reason an application was not predicted
    for p in preds:
        t = totals[p["what_if"]]
        if p["error"] is None and p["predicted_s"] is not None:
            t[0] += p["observed_s"] or 0.0
            t[1] += p["predicted_s"]
            t[2] += 1
        else:
            t[3] += 1
            why.setdefault(p["what_if"], p["error"] or "no prediction")
    s.predictions = [
        {
            "what_if": w,
            "apps": int(n),
            "observed_s": o if n else None,
            "predicted_s": pr if n else None,
            "not_predicted": int(skipped),
            "why_not": why.get(w),
        }
        for w, (o, pr, n, skipped) in totals.items()
    ]
    return s


def _failure(a: dict[str, Any]) -> str:
    parts = []
    if a["failed_jobs"]:
        parts.append(f"{a['failed_jobs']} failed job(s)")
    if a["stages_failed"]:
        parts.append(f"{a['stages_failed']} failed stage(s)")
    if not a["complete"]:
        parts.append("no application end (running, or cut off)")
    return "; ".join(parts)
