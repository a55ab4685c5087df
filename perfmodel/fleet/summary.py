"""What a fleet run tells a platform team, as plain data, and its terminal rendering.

`FleetSummary` is computed from the tables alone (so the summary of a resumed run covers
the whole fleet, not only the logs analysed this time); the terminal view and
``summary.html`` both render it. Log data (names, ids, paths) is never read as markup.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
from rich.console import Console
from rich.table import Table
from rich.text import Text

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


REGRESSION_HEADERS = (
    "application",
    "scope",
    "latest s",
    "median s",
    "threshold s",
    "latest run",
    "earlier runs",
)


def regression_row(r: dict[str, Any], *, full: bool) -> list[Any]:
    """One regression as a table row: the terminal's (``full=False``) keeps ids short and the
    last five earlier runs; the HTML page names the stage, the log and every earlier run."""
    if r["scope"] == "app":
        scope = "run"
    else:
        scope = f"stage {r['stage_id']}" + (f" {r['stage_name']}" if full else "")
    latest = f"{r['latest_app_id']} ({r['latest_log']})" if full else r["latest_app_id"]
    earlier = r["earlier_app_ids"] if full else r["earlier_app_ids"][-5:]
    return [
        r["app_name"],
        scope,
        r["latest_s"],
        r["baseline_median_s"],
        r["threshold_s"],
        latest,
        ", ".join(earlier),
    ]


def summarise(
    tables: dict[str, pa.Table], *, analysed_now: int, skipped: int, top: int = TOP
) -> FleetSummary:
    apps = tables["apps"].select(_APP_COLS + ["start"]).to_pylist()
    for a in apps:
        a["start"] = a["start"].isoformat() if a["start"] is not None else None
    errors = tables["errors"].select(["log_path", "kind", "reason"]).to_pylist()
    s = FleetSummary(
        logs=len(apps) + len(errors),
        analysed_now=analysed_now,
        skipped=skipped,
        applications=len(apps),
        errors=len(errors),
        held_core_hours=sum(a["held_core_hours"] or 0.0 for a in apps),
        wasted_core_hours=sum(a["wasted_core_hours"] or 0.0 for a in apps),
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
    s.regressions = tables["regressions"].to_pylist()
    s.error_list = errors
    preds = tables["predictions"].select(["what_if", "observed_s", "predicted_s", "error"])
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for p in preds.to_pylist():
        t = totals[p["what_if"]]
        if p["error"] is None and p["predicted_s"] is not None:
            t[0] += p["observed_s"] or 0.0
            t[1] += p["predicted_s"]
            t[2] += 1
    s.predictions = [
        {"what_if": w, "apps": int(n), "observed_s": o, "predicted_s": pr}
        for w, (o, pr, n) in totals.items()
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


def _t(value: Any) -> Text:
    """A cell: always literal text (log data may hold ``[brackets]``)."""
    if value is None:
        return Text("–")
    if isinstance(value, float):
        return Text(f"{value:,.2f}")
    return Text(str(value))


def _name(a: dict[str, Any]) -> str:
    return f"{a['app_name'] or '(unnamed)'} ({a['app_id']})"


def render_summary(s: FleetSummary, console: Console, out_dir: str) -> None:
    """The terminal summary (rich, no highlighting, no markup from the data)."""
    console.print(
        Text(
            f"perfmodel fleet: {s.applications} application(s) from {s.logs} log(s) "
            f"({s.analysed_now} analysed now, {s.skipped} unchanged since the last run), "
            f"{s.errors} error(s); {s.held_core_hours:,.1f} core-hours held, "
            f"{s.wasted_core_hours:,.1f} wasted."
        )
    )
    _table(
        console,
        "Most wasted core-hours",
        ["application", "wasted h", "held h", "utilisation", "runtime s"],
        [
            [
                _name(a),
                a["wasted_core_hours"],
                a["held_core_hours"],
                a["slot_utilisation"],
                a["duration_s"],
            ]
            for a in s.top_wasted
        ],
    )
    _table(
        console,
        "Longest runs",
        ["application", "runtime s", "bottleneck", "start"],
        [[_name(a), a["duration_s"], a["bottleneck"], a["start"]] for a in s.top_runtime],
    )
    _table(
        console,
        "Recurring bottlenecks",
        ["bottleneck", "runs", "applications", "wasted h"],
        [
            [b["bottleneck"], b["runs"], b["applications"], b["wasted_core_hours"]]
            for b in s.bottlenecks
        ],
    )
    if s.predictions:
        _table(
            console,
            "What-ifs across the fleet",
            ["what-if", "apps", "observed s", "predicted s"],
            [[p["what_if"], p["apps"], p["observed_s"], p["predicted_s"]] for p in s.predictions],
        )
    if s.failed:
        _table(
            console,
            "Failed or unfinished applications",
            ["application", "why", "failed tasks"],
            [[_name(a), a["why"], a["failed_tasks"]] for a in s.failed[:TOP]],
        )
    if s.regressions:
        _table(
            console,
            "Regressions (latest run beyond its own noise)",
            list(REGRESSION_HEADERS),
            [regression_row(r, full=False) for r in s.regressions],
        )
    if s.error_list:
        _table(
            console,
            "Logs that could not be analysed",
            ["log", "reason"],
            [[e["log_path"], e["reason"].splitlines()[0][:160]] for e in s.error_list[:TOP]],
        )
    console.print(Text(f"Tables and summary.html in {out_dir}"))


def _table(console: Console, title: str, header: list[str], rows: list[list[Any]]) -> None:
    if not rows:
        return
    table = Table(title=Text(title), title_justify="left", show_edge=False)
    for h in header:
        table.add_column(Text(h))
    for row in rows:
        table.add_row(*(_t(v) for v in row))
    console.print(table)
