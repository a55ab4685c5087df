"""The text form of a `FleetSummary` (``perfmodel fleet``): rich tables, no highlighting,
and nothing from the logs (names, ids, paths) read as markup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfmodel.report.fleet_rows import REGRESSION_HEADERS, regression_row

if TYPE_CHECKING:
    from perfmodel.fleet.summary import FleetSummary

MAX_ROWS = 10
"""Failed applications and unreadable logs listed at most (summary.html lists them all)."""


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
    """The terminal summary; ``out_dir`` is where the run wrote its tables."""
    console.print(
        Text(
            f"perfmodel fleet: {s.applications} application(s) from {s.logs} log(s) "
            f"({s.analysed_now} analysed now, {s.skipped} unchanged since the last run), "
            f"{s.errors} error(s); {s.held_core_hours:,.1f} core-hours held, "
            f"{s.wasted_core_hours:,.1f} wasted."
            + (
                f" {s.duplicate_logs} log(s) repeat an application another log holds: "
                "counted once (the JSON lists them)."
                if s.duplicate_logs
                else ""
            )
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
            [[_name(a), a["why"], a["failed_tasks"]] for a in s.failed[:MAX_ROWS]],
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
            [[e["log_path"], e["reason"].splitlines()[0][:160]] for e in s.error_list[:MAX_ROWS]],
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
