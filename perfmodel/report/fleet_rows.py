"""The fleet summary's regressions as table rows, shared by its terminal and HTML forms."""

from __future__ import annotations

from typing import Any

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
