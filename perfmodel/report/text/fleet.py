"""The text form of a `FleetSummary` (``perfmodel fleet``): rich tables, no highlighting,
and nothing from the logs (names, ids, paths) read as markup."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfmodel.report.fleet_rows import REGRESSION_HEADERS, clip, regression_row, what_if_row

if TYPE_CHECKING:
    from perfmodel.fleet.summary import FleetSummary

MAX_ROWS = 10
"""Failed applications and unreadable logs listed at most (summary.html lists them all); a
line under the table says how many more there are and where they are."""


def amount(value: float, places: int = 1) -> str:
    """``value`` with ``places`` decimals, or with two significant digits where those would
    round a non-zero value under 1 to zero: 0.04 core-hours must not read as 0.0."""
    if value == 0 or abs(value) >= 1:
        return f"{value:,.{places}f}"
    digits = max(places, 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def _t(value: Any) -> Text:
    """A cell: always literal text (log data may hold ``[brackets]``)."""
    if value is None:
        return Text("–")
    if isinstance(value, float):
        return Text(amount(value, 2))
    return Text(str(value))


def _name(a: dict[str, Any]) -> str:
    return f"{a['app_name'] or '(unnamed)'} ({a['app_id']})"


def render_summary(s: FleetSummary, console: Console, out_dir: str) -> None:
    """The terminal summary; ``out_dir`` is where the run wrote its tables."""
    console.print(
        Text(
            f"perfmodel fleet: {s.applications} application(s) from {s.logs} log(s) "
            f"({s.analysed_now} analysed now, {s.skipped} unchanged since the last run), "
            f"{s.errors} error(s); {amount(s.held_core_hours)} core-hours held, "
            f"{amount(s.wasted_core_hours)} wasted."
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
            ["what-if", "apps", "observed s", "predicted s", "not predicted"],
            [what_if_row(p, full=False) for p in s.predictions],
        )
    if s.failed:
        _table(
            console,
            "Failed or unfinished applications",
            ["application", "why", "failed tasks"],
            [[_name(a), a["why"], a["failed_tasks"]] for a in s.failed[:MAX_ROWS]],
        )
        _more(console, len(s.failed), f"{Path(out_dir) / 'summary.html'} or --json")
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
            [[e["log_path"], clip(e["reason"])] for e in s.error_list[:MAX_ROWS]],
        )
        errors_table = Path(out_dir) / "errors.parquet" if out_dir else Path("errors.parquet")
        _more(console, len(s.error_list), f"{errors_table} or --json")
    console.print(Text(f"Tables and summary.html in {out_dir}"))


def _more(console: Console, rows: int, where: str) -> None:
    """Under a table cut at `MAX_ROWS`: how many rows it left out and where they all are."""
    if rows > MAX_ROWS:
        console.print(Text(f"… and {rows - MAX_ROWS} more (see {where})"))


def _table(console: Console, title: str, header: list[str], rows: list[list[Any]]) -> None:
    if not rows:
        return
    table = Table(title=Text(title), title_justify="left", show_edge=False)
    for h in header:
        table.add_column(Text(h))
    for row in rows:
        table.add_row(*(_t(v) for v in row))
    console.print(table)
