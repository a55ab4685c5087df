"""``summary.html``: the fleet summary as one self-contained page (inline CSS and SVG, no
scripts, nothing fetched). Sections are plain functions of `FleetSummary`, each returning
an HTML fragment, so the application page's template could host them unchanged."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from perfmodel.report.fleet_rows import REGRESSION_HEADERS, regression_row, what_if_row

if TYPE_CHECKING:
    from perfmodel.fleet.summary import FleetSummary

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1b1b1b}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%}td,th{padding:3px 8px;text-align:left;
border-bottom:1px solid #eee;vertical-align:top}th{background:#f6f6f6}
td.n{text-align:right;font-variant-numeric:tabular-nums}.bar{fill:#c0504d}
.muted{color:#777}
"""


def _e(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return html.escape(str(value))


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table; numbers right-aligned, everything escaped."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="n">{_e(v)}</td>' if isinstance(v, int | float) else f"<td>{_e(v)}</td>"
            for v in row
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def bars(items: Sequence[tuple[str, float]], unit: str) -> str:
    """A horizontal bar chart as inline SVG."""
    if not items:
        return ""
    top = max(v for _, v in items) or 1.0
    height = 20 * len(items)
    parts = []
    for i, (label, value) in enumerate(items):
        w = 500 * value / top
        y = 20 * i
        parts.append(
            f'<text x="0" y="{y + 14}" font-size="12">{_e(label[:45])}</text>'
            f'<rect class="bar" x="300" y="{y + 3}" width="{w:.1f}" height="14"/>'
            f'<text x="{305 + w:.1f}" y="{y + 14}" font-size="12">{value:,.2f} {_e(unit)}</text>'
        )
    return f'<svg width="900" height="{height}" role="img">{"".join(parts)}</svg>'


def _app(a: dict[str, Any]) -> str:
    return f"{a['app_name'] or '(unnamed)'} ({a['app_id']})"


def sections(s: FleetSummary) -> list[tuple[str, str]]:
    """(title, fragment) per section, in reading order."""
    out = [
        (
            "Most wasted core-hours",
            bars([(_app(a), a["wasted_core_hours"] or 0.0) for a in s.top_wasted], "h")
            + table(
                ["application", "user", "wasted h", "held h", "utilisation", "log"],
                [
                    [
                        _app(a),
                        a["user"],
                        a["wasted_core_hours"],
                        a["held_core_hours"],
                        a["slot_utilisation"],
                        a["log_path"],
                    ]
                    for a in s.top_wasted
                ],
            ),
        ),
        (
            "Longest runs",
            table(
                ["application", "runtime s", "bottleneck", "start"],
                [[_app(a), a["duration_s"], a["bottleneck"], a["start"]] for a in s.top_runtime],
            ),
        ),
        (
            "Recurring bottlenecks",
            table(
                ["bottleneck", "runs", "applications", "wasted h"],
                [
                    [b["bottleneck"], b["runs"], b["applications"], b["wasted_core_hours"]]
                    for b in s.bottlenecks
                ],
            ),
        ),
        (
            "Regressions",
            table(
                list(REGRESSION_HEADERS),
                [regression_row(r, full=True) for r in s.regressions],
            )
            if s.regressions
            else '<p class="muted">None: no application ran beyond its own noise.</p>',
        ),
        (
            "Failed or unfinished applications",
            table(
                ["application", "why", "failed tasks", "log"],
                [[_app(a), a["why"], a["failed_tasks"], a["log_path"]] for a in s.failed],
            )
            if s.failed
            else '<p class="muted">None.</p>',
        ),
    ]
    if s.predictions:
        out.append(
            (
                "What-ifs across the fleet",
                table(
                    ["what-if", "applications", "observed s", "predicted s", "not predicted"],
                    [what_if_row(p, full=True) for p in s.predictions],
                ),
            )
        )
    if s.error_list:
        out.append(
            (
                "Logs that could not be analysed",
                table(
                    ["log", "kind", "reason"],
                    [[e["log_path"], e["kind"], e["reason"]] for e in s.error_list],
                ),
            )
        )
    return out


def fleet_page(s: FleetSummary) -> str:
    """The whole page: the headline figures, then every section."""
    head = (
        f"<p>{s.applications} application(s) from {s.logs} log(s), {s.errors} error(s); "
        f"{s.held_core_hours:,.1f} core-hours held, {s.wasted_core_hours:,.1f} wasted "
        "(held − task time; see docs/fleet.md).</p>"
    )
    body = "".join(f"<h2>{_e(title)}</h2>{fragment}" for title, fragment in sections(s))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>perfmodel fleet</title><style>{CSS}</style></head>"
        f"<body><h1>perfmodel fleet</h1>{head}{body}</body></html>\n"
    )
