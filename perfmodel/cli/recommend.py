"""``perfmodel recommend``: the cheapest configuration of a catalog that meets a deadline.

Thin: reads the options, calls `perfmodel.recommend.api.recommend`, renders the answer
(rich tables, data never read as markup) or prints the documented JSON
(docs/recommend.md). Bad input raises a `PerfmodelError`, which the group turns into one
``error:`` line.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfmodel.cli import options
from perfmodel.cli.collector import without_cycle_collector

if TYPE_CHECKING:
    from perfmodel.recommend.api import Recommendation
    from perfmodel.recommend.search import Point

MAX_FRONT_ROWS = 25


def register(app: typer.Typer) -> None:
    """Add the ``recommend`` command to ``app``."""
    app.command("recommend")(recommend)


def recommend(
    path: Annotated[str, typer.Argument(help="Event log, rolling log directory or bundle.")],
    catalog: Annotated[
        Path, typer.Option(help="Machine catalog CSV (docs/recommend.md; e.g. catalogs/).")
    ],
    deadline: Annotated[
        str | None, typer.Option(help="Finish within this (20m, 1h30m, 600s), upper bound.")
    ] = None,
    budget: Annotated[str | None, typer.Option(help="Spend at most this (5usd, $0.50).")] = None,
    max_nodes: Annotated[int, typer.Option(help="Largest node count tried per type.")] = 10,
    top: Annotated[int, typer.Option(help="Rows of the cheapest meeting the deadline.")] = 5,
    driver_node: Annotated[
        bool, typer.Option(help="Bill one more node of the same type for the driver.")
    ] = False,
    local: Annotated[
        bool,
        typer.Option(help="Each machine is one host running local[vCPUs] (no cluster)."),
    ] = False,
    baseline_machine: Annotated[
        str | None, typer.Option(help="Catalog row of the machine the profiled run used.")
    ] = None,
    baseline_cpu_speed: Annotated[
        float | None, typer.Option(help="The profiled machine's cpu_speed on the catalog's scale.")
    ] = None,
    baseline_disk_bw: options.BaselineDiskBw = None,
    baseline_net_bw: options.BaselineNetBw = None,
    history: Annotated[
        str | None,
        typer.Option(help="Experiment in the run store whose runs calibrate the predictions."),
    ] = None,
    store: Annotated[
        Path | None, typer.Option(help="Run store (default: $PERFMODEL_STORE or the user's).")
    ] = None,
    exhaustive: Annotated[
        bool, typer.Option(help="Replay every point (no pruning by lower bounds).")
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            help="Skip points within this fraction of a replayed one (default 0: the "
            "exhaustive search's answers; 0.02: fewer replays, and the recommendation costs "
            "at most 2% more than the cheapest)."
        ),
    ] = 0.0,
    attempt: options.Attempt = None,
    code_vectors: options.CodeVectors = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (docs/recommend.md).")
    ] = False,
) -> None:
    """Cheapest configuration of a VM catalog that meets a deadline, from one profiled run."""
    from perfmodel.jsonout import dumps
    from perfmodel.recommend.api import parse_duration, parse_money
    from perfmodel.recommend.api import recommend as run_recommend
    from perfmodel.recommend.search import Request
    from perfmodel.simulate.whatif import baseline_overrides

    request = Request(
        max_nodes=max_nodes,
        deadline_s=parse_duration(deadline) if deadline is not None else None,
        budget_usd=parse_money(budget) if budget is not None else None,
        top=top,
        driver_node=driver_node,
        local=local,
        exhaustive=exhaustive,
        tolerance=tolerance,
    )
    given = baseline_overrides(disk_bw=baseline_disk_bw, net_bw=baseline_net_bw)
    progress = None if as_json else _progress()
    try:
        answer = without_cycle_collector(
            lambda: run_recommend(
                path,
                catalog,
                request,
                baseline_machine=baseline_machine,
                baseline_cpu_speed=baseline_cpu_speed,
                baseline_disk_bw=given.disk_bw,
                baseline_net_bw=given.net_bw,
                history=history,
                store=store,
                attempt=attempt,
                code_vectors=code_vectors,
                progress=progress,
            )
        )
    finally:
        if progress is not None:
            progress(-1, -1)
    if as_json:
        typer.echo(dumps(answer.as_dict()))
    else:
        _render(answer)


def _progress():  # type: ignore[no-untyped-def]
    """A one-line progress count on stderr while the search replays points."""
    import sys

    shown = [False]

    def show(done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if done < 0:
            if shown[0]:
                sys.stderr.write("\r\033[K")
            return
        shown[0] = True
        sys.stderr.write(f"\rsearching: {done}/{total} points")
        sys.stderr.flush()

    return show


def _render(answer: Recommendation) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120)
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
        limits.append(f"deadline {_dur(req.deadline_s)} (checked on the upper bound)")
    if req.budget_usd is not None:
        limits.append(f"budget ${req.budget_usd:g} (on the predicted cost)")
    console.print(
        Text(
            f"{len(r.points)} points ({r.unique_configs} distinct configurations), "
            f"{r.replays} replayed; interval ±{r.band.relative:.0%} from {r.band.source}"
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
    console.print(Text("Recommended: " + _describe(rec), style="bold green"))
    for key, value in rec.spark_conf(answer.profiled_partitions).items():
        console.print(Text(f"  --conf {key}={value}"))
    if r.fastest_within_budget is not None and r.fastest_within_budget is not rec:
        console.print(Text("Fastest within the budget: " + _describe(r.fastest_within_budget)))
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
    for note in answer.as_dict()["notes"]:  # type: ignore[union-attr]
        console.print(Text(f"note: {note}", style="dim"))


def _describe(p: Point) -> str:
    return (
        f"{p.nodes} × {p.machine.vm_type} ({p.layout.label}), predicted {_dur(p.predicted_s)} "
        f"(upper {_dur(p.upper_s)}), ${p.cost:.4f}, bottleneck {p.bottleneck}"
    )


def _table(title: str, points: list[Point], deadline: bool):  # type: ignore[no-untyped-def]
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), highlight=False, title_justify="left")
    names = ("vm type", "nodes", "layout", "predicted", "upper", "cost", "bottleneck", "deadline")
    for name in names:
        table.add_column(
            Text(name), justify="right" if name in ("nodes", "cost") else "left", no_wrap=True
        )
    for p in points:
        table.add_row(
            Text(p.machine.vm_type),
            Text(str(p.nodes)),
            Text(p.layout.label),
            Text(_dur(p.predicted_s)),
            Text(_dur(p.upper_s)),
            Text(f"${p.cost:.4f}"),
            Text(p.bottleneck),
            Text(("yes" if p.meets_deadline else "no") if deadline else "-"),
        )
    return table


def _dur(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "-"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}min"
    return f"{seconds:.1f}s"
