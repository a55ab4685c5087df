"""The text form of a `Recommendation` (``perfmodel recommend``): what the search rests on,
the recommended configuration with its Spark settings, the cheapest points and the Pareto
front, as rich tables (catalog and profile names are data, never markup)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfmodel.recommend.tuning import settings_label

if TYPE_CHECKING:
    from perfmodel.recommend.api import Recommendation
    from perfmodel.recommend.search import Point

MAX_FRONT_ROWS = 25


def render_recommendation(answer: Recommendation, console: Console) -> None:
    """Everything ``recommend`` prints, on ``console``."""
    r = answer.result
    req = r.request
    console.print(Text(f"perfmodel recommend: {answer.source}", style="bold"))
    console.print(
        Text(
            f"profiled run {answer.observed_s:.1f}s, model self-check error "
            f"{answer.model_error:+.1%}; profiled machine: {answer.machine.description}"
        )
    )
    limits = []
    if req.deadline_s is not None:
        limits.append(f"deadline {duration(req.deadline_s)} (checked on the upper bound)")
    if req.budget_usd is not None:
        limits.append(f"budget ${req.budget_usd:g} (on the predicted cost)")
    console.print(
        Text(
            f"{len(r.points)} points ({r.unique_configs} distinct configurations), "
            f"{r.replays} replayed; upper bound: each point's own 80% interval, at least "
            f"+{r.band.relative:.0%} ({r.band.source})"
            + (f"; {', '.join(limits)}" if limits else "")
        )
    )
    if answer.calibration is not None:
        c = answer.calibration
        console.print(
            Text(
                f"calibrated on {len(c.runs)} stored run(s) of {c.experiment!r}: × "
                f"{c.factor:.3f} (leave-one-out mean error {c.mean_error:.1%} → "
                f"{c.mean_loo_error:.1%})"
            )
        )
    console.print()
    rec = r.recommended
    console.print(Text("Recommended: " + describe(rec), style="bold green"))
    for key, value in rec.spark_conf().items():
        console.print(Text(f"  --conf {key}={value}"))
    twin = r.as_run(rec)
    if twin is not None:
        console.print(
            Text(
                f"  with the profiled run's settings instead: predicted "
                f"{duration(twin.predicted_s)} (upper {duration(twin.upper_s)}), "
                f"${twin.cost:.4f}"
            )
        )
    if r.fastest_within_budget is not None and r.fastest_within_budget is not rec:
        console.print(Text("Fastest within the budget: " + describe(r.fastest_within_budget)))
    console.print()
    if req.deadline_s is not None:
        console.print(_table(f"Cheapest {len(r.top)} meeting the deadline", r.top, True))
    else:
        console.print(_table(f"Cheapest {len(r.top)}", r.top, False))
    front = r.pareto
    if len(front) > MAX_FRONT_ROWS:
        step = len(front) / MAX_FRONT_ROWS
        front = [front[int(i * step)] for i in range(MAX_FRONT_ROWS - 1)] + [front[-1]]
    title = f"Pareto front, time vs cost ({len(r.pareto)} points"
    title += ", every other row shown)" if len(front) < len(r.pareto) else ")"
    console.print(_table(title, front, req.deadline_s is not None))
    for note in [*answer.notes, *r.notes]:  # as --json lists them
        console.print(Text(f"note: {note}", style="dim"))


def describe(p: Point) -> str:
    """One point in a line: size, layout, settings, predicted time with its upper bound,
    cost."""
    tuned = f", Spark settings tuned: {settings_label(p.settings)}" if p.settings else ""
    return (
        f"{p.nodes} × {p.machine.vm_type} ({p.layout.label}){tuned}, predicted "
        f"{duration(p.predicted_s)} (upper {duration(p.upper_s)}), ${p.cost:.4f}, "
        f"bottleneck {p.bottleneck}"
    )


def _table(title: str, points: list[Point], deadline: bool) -> Table:
    table = Table(title=Text(title), highlight=False, title_justify="left")
    names = (
        "vm type",
        "nodes",
        "layout",
        "settings",
        "predicted",
        "upper",
        "cost",
        "bottleneck",
        "deadline",
    )
    for name in names:
        table.add_column(
            Text(name), justify="right" if name in ("nodes", "cost") else "left", no_wrap=True
        )
    for p in points:
        table.add_row(
            Text(p.machine.vm_type),
            Text(str(p.nodes)),
            Text(p.layout.label),
            Text(settings_label(p.settings)),
            Text(duration(p.predicted_s)),
            Text(duration(p.upper_s)),
            Text(f"${p.cost:.4f}"),
            Text(p.bottleneck),
            Text(("yes" if p.meets_deadline else "no") if deadline else "-"),
        )
    return table


def duration(seconds: float) -> str:
    """Seconds as a person reads a job's length: 42.0s, 12.5min, 1.25h; '-' if unknown."""
    if not math.isfinite(seconds):
        return "-"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}min"
    return f"{seconds:.1f}s"
