"""The fleet summary's regressions and what-ifs as table rows, shared by its terminal and HTML
forms, and the cut of a long reason for the terminal."""

from __future__ import annotations

from typing import Any

MAX_REASON = 160
"""Characters of a reason shown in the terminal (the errors table holds it whole)."""


def clip(text: str, limit: int = MAX_REASON) -> str:
    """The first line of ``text`` in at most ``limit`` characters, cut at a word boundary,
    with an ellipsis wherever anything was left out (a later line or the tail)."""
    lines = text.splitlines()
    first = lines[0] if lines else ""
    if len(first) <= limit:
        return first + (" …" if len(lines) > 1 else "")
    cut = first[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:  # a word boundary not too far back; else cut the long word
        cut = cut[:space]
    return cut.rstrip() + "…"


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


def what_if_row(p: dict[str, Any], *, full: bool) -> list[Any]:
    """One scenario of the fleet as a table row: the applications predicted, their observed
    and predicted seconds, and how many it could not predict with the first reason (the
    terminal's, ``full=False``, cut to 80 characters)."""
    not_predicted: Any = 0
    if p["not_predicted"]:
        why = p["why_not"] if full else clip(p["why_not"], 80)
        not_predicted = f"{p['not_predicted']}: {why}"
    return [p["what_if"], p["apps"], p["observed_s"], p["predicted_s"], not_predicted]
