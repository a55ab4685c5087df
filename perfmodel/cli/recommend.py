"""``perfmodel recommend``: the cheapest configuration of a catalog that meets a deadline.

Thin: reads the options, calls `perfmodel.recommend.api.recommend`, and hands the answer
to the text renderer (rich tables, data never read as markup) or the JSON one
(docs/recommend.md). Bad input raises a `PerfmodelError`, which the group turns into one
``error:`` line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from perfmodel.cli import options
from perfmodel.cli.collector import without_cycle_collector


def register(app: typer.Typer) -> None:
    """Add the ``recommend`` command to ``app``."""
    app.command("recommend")(recommend)


def recommend(
    path: Annotated[
        str,
        typer.Argument(
            help="Event log, rolling log directory or bundle, local or remote (s3://, gs://, "
            "abfs://, hdfs://, a History Server application URL; with --history-server: an "
            "app id)."
        ),
    ],
    catalog: Annotated[
        Path, typer.Option(help="Machine catalog CSV (docs/recommend.md; e.g. catalogs/).")
    ],
    deadline: Annotated[
        str | None, typer.Option(help="Finish within this (20m, 1h30m, 600s), upper bound.")
    ] = None,
    budget: Annotated[str | None, typer.Option(help="Spend at most this (5usd, $0.50).")] = None,
    max_nodes: Annotated[
        int, typer.Option(help="Largest node count tried per type.", min=1, max=10_000)
    ] = 10,
    top: Annotated[
        int,
        typer.Option(
            help="Rows of the cheapest meeting the deadline.", min=1, max=options.COUNT_MAX
        ),
    ] = 5,
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
        float | None,
        typer.Option(
            help="The profiled machine's cpu_speed on the catalog's scale.",
            min=1e-6,
            max=1e6,
            callback=options.finite,
        ),
    ] = None,
    baseline_disk_bw: options.BaselineDiskBw = None,
    baseline_net_bw: options.BaselineNetBw = None,
    history: Annotated[
        str | None,
        typer.Option(help="Experiment in the run store whose runs calibrate the predictions."),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            parser=options.output_path, help="Run store (default: $PERFMODEL_STORE or the user's)."
        ),
    ] = None,
    exhaustive: Annotated[
        bool, typer.Option(help="Replay every point (no pruning by lower bounds).")
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            help="Skip points within this fraction of a replayed one (default 0: the "
            "exhaustive search's answers; 0.02: fewer replays, and the recommendation costs "
            "at most 2% more than the cheapest).",
            min=0.0,
            max=1.0,
            callback=options.finite,
        ),
    ] = 0.0,
    attempt: options.Attempt = None,
    code_vectors: options.CodeVectors = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (docs/recommend.md).")
    ] = False,
    history_server: options.HistoryServer = None,
    endpoint_url: options.EndpointUrl = None,
    ca_bundle: options.CaBundle = None,
    timeout_s: options.TimeoutS = None,
) -> None:
    """Cheapest configuration of a VM catalog that meets a deadline, from one profiled run."""
    from perfmodel.analysis import locate
    from perfmodel.recommend.api import parse_duration, parse_money
    from perfmodel.recommend.api import recommend as run_recommend
    from perfmodel.recommend.search import Request
    from perfmodel.report import renderer
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
    sources = options.source_options(endpoint_url, ca_bundle, timeout_s)
    log = locate(path, sources, history_server=history_server)
    progress = None if as_json else _progress()
    try:
        answer = without_cycle_collector(
            lambda: run_recommend(
                log,
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
    renderer("json" if as_json else "text").recommendation(answer, sys.stdout)


def _progress() -> Callable[[int, int], None]:
    """A one-line progress count on stderr while the search replays points."""
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
