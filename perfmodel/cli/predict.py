"""``perfmodel predict``: what would this application take with other resources?

Reads a profile (an event log or bundle, or the one ``diagnose`` last analysed), resolves
the baseline configuration from it, applies the requested change (or a ``--sweep`` grid)
and prints the replay's prediction with its model error. Every assumed baseline value is
printed with the option that would replace it. Bad input ends with one message, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from perfmodel.cli.collector import without_cycle_collector

# The simulator and the Spark front end are imported by the command, not here: every
# `perfmodel` invocation (`record` included) imports this module to build the CLI.


def register(app: typer.Typer) -> None:
    """Add the ``predict`` command to ``app``."""
    app.command(
        "predict",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": False},
    )(predict)


def predict(
    ctx: typer.Context,
    path: Annotated[
        str | None,
        typer.Argument(
            help="Event log, rolling log directory or profile bundle "
            "(default: the profile `perfmodel diagnose` last analysed)."
        ),
    ] = None,
    cores: Annotated[
        int | None, typer.Option(help="Total task cores (N of local[N] in local mode).")
    ] = None,
    executors: Annotated[
        int | None, typer.Option("--executors", "--workers", help="Executors (Dask: workers).")
    ] = None,
    executor_cores: Annotated[
        int | None,
        typer.Option("--executor-cores", "--threads", help="Cores per executor (Dask: threads)."),
    ] = None,
    mem: Annotated[
        str | None,
        typer.Option(help="Heap per executor (driver in local mode; Dask: worker memory limit)."),
    ] = None,
    cpu_speed: Annotated[
        float | None, typer.Option(help="Core speed relative to the profiled machine (1.5).")
    ] = None,
    disk_bw: Annotated[
        str | None, typer.Option(help="Disk bandwidth per host: 500MB/s, or 2x the baseline.")
    ] = None,
    net_bw: Annotated[
        str | None, typer.Option(help="Network bandwidth per host: 10Gbit/s, or 2x.")
    ] = None,
    host_cores: Annotated[
        int | None,
        typer.Option(help="Physical cores of the profiled host (default: from the log)."),
    ] = None,
    baseline_disk_bw: Annotated[
        str | None, typer.Option(help="Disk bandwidth the profiled run had (default 250MB/s).")
    ] = None,
    baseline_net_bw: Annotated[
        str | None, typer.Option(help="Network bandwidth the profiled run had (10Gbit/s).")
    ] = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option(help="Grid axis NAME=V1,V2 (repeatable; further axes may follow it)."),
    ] = None,
    attempt: Annotated[
        str | None, typer.Option(help="Application attempt, when the log holds several.")
    ] = None,
    code_vectors: Annotated[
        bool,
        typer.Option(
            "--code-vectors/--no-code-vectors",
            help="With a bundle: split each stage's unattributed task time by the resource "
            "vector the code models infer from its stack samples (else by bytes moved).",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (docs/predict.md).")] = False,
) -> None:
    """Predict the runtime and bottleneck under other resources (what-if replay)."""
    from perfmodel.analysis import load
    from perfmodel.jsonout import dump, dump_items
    from perfmodel.report.prediction_text import render_prediction, render_sweep
    from perfmodel.simulate.config import BaselineOverrides, ConfigError, WhatIf
    from perfmodel.simulate.sweep import is_axis_spec, parse_axes

    axes_specs = list(sweep or [])
    extra = list(ctx.args)
    if path is not None and is_axis_spec(path) and not Path(path).exists():
        extra.insert(0, path)
        path = None
    for token in extra:
        if not (axes_specs and is_axis_spec(token)):
            raise ConfigError(f"unexpected argument {token!r}")
        axes_specs.append(token)
    change = WhatIf(
        cores=cores,
        executors=executors,
        executor_cores=executor_cores,
        memory_bytes=_size(mem),
        cpu_speed=cpu_speed,
        disk_bw=_bw(disk_bw),
        net_bw=_bw(net_bw),
        disk_factor=_factor(disk_bw),
        net_factor=_factor(net_bw),
    )
    overrides = BaselineOverrides(
        host_cores=host_cores,
        disk_bw=_absolute_bw(baseline_disk_bw, "--baseline-disk-bw"),
        net_bw=_absolute_bw(baseline_net_bw, "--baseline-net-bw"),
    )
    if host_cores is not None and host_cores < 1:
        raise ConfigError("--host-cores must be at least 1")
    axes = parse_axes(axes_specs) if axes_specs else None
    source, remembered, attempt = _resolve_path(path, attempt)
    if not Path(source).exists():
        raise ConfigError(f"{source}: no such file or directory")

    def run() -> None:
        analysis = load(source, attempt, code_vectors=code_vectors, overrides=overrides)
        if axes is not None:
            points = analysis.iter_sweep(axes, change)
            if as_json:  # written point by point: one prediction in memory, not the grid
                items = ({"settings": p.settings, **p.prediction.as_dict()} for p in points)
                dump_items(items, sys.stdout)
            else:  # the table needs no stage: a point keeps its summary only
                typer.echo(render_sweep([p.summary() for p in points], source, remembered))
            return
        prediction = analysis.predict(change)
        if as_json:
            dump(prediction.as_dict(), sys.stdout)
        else:
            typer.echo(render_prediction(prediction, source, remembered, change))

    without_cycle_collector(run)


def _resolve_path(path: str | None, attempt: str | None) -> tuple[str, bool, str | None]:
    from perfmodel.simulate.config import ConfigError
    from perfmodel.state import last_profile

    if path is not None:
        return path, False, attempt
    last = last_profile()
    if last is None:
        raise ConfigError(
            "no profile given and none analysed yet: pass an event log or bundle, "
            "or run `perfmodel diagnose <log>` first"
        )
    return last.path, True, attempt if attempt is not None else last.attempt


def _size(text: str | None) -> int | None:
    from perfmodel.simulate.units import parse_size

    return parse_size(text) if text is not None else None


def _factor(text: str | None) -> float | None:
    from perfmodel.simulate.units import parse_factor

    return parse_factor(text) if text is not None else None


def _bw(text: str | None) -> float | None:
    from perfmodel.simulate.units import parse_bandwidth, parse_factor

    if text is None or parse_factor(text) is not None:
        return None
    return parse_bandwidth(text)


def _absolute_bw(text: str | None, option: str) -> float | None:
    from perfmodel.simulate.config import ConfigError
    from perfmodel.simulate.units import parse_bandwidth, parse_factor

    if text is None:
        return None
    if parse_factor(text) is not None:
        raise ConfigError(f"{option} needs an absolute bandwidth such as 500MB/s")
    return parse_bandwidth(text)
