"""``perfmodel predict``: what would this application take with other resources or settings?

Reads a profile (an event log or bundle, or the one ``diagnose`` last analysed), resolves
the baseline configuration from it, applies the requested change (resources, Spark settings
given with ``--conf``, or a ``--sweep`` grid of either) and prints the replay's prediction
with its model error. Every assumed baseline value is
printed with the option that would replace it. Bad input ends with one message, exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from perfmodel.cli import options
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
            help="Event log, rolling log directory or profile bundle, local or remote "
            "(s3://, gs://, abfs://, hdfs://, a History Server application URL; with "
            "--history-server: an app id). Default: the profile `perfmodel diagnose` last "
            "analysed."
        ),
    ] = None,
    cores: options.Cores = None,
    executors: options.Executors = None,
    executor_cores: options.ExecutorCores = None,
    workers: options.Workers = None,
    threads: options.Threads = None,
    mem: options.Mem = None,
    cpu_speed: options.CpuSpeed = None,
    disk_bw: options.DiskBw = None,
    net_bw: options.NetBw = None,
    dynamic_allocation: options.DynamicAllocation = None,
    min_executors: options.MinExecutors = None,
    max_executors: options.MaxExecutors = None,
    initial_executors: options.InitialExecutors = None,
    host_cores: options.HostCores = None,
    conf: options.Conf = None,
    baseline_disk_bw: options.BaselineDiskBw = None,
    baseline_net_bw: options.BaselineNetBw = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option(
            help="Grid axis NAME=V1,V2 (repeatable; further axes may follow it); NAME is a "
            "resource option's name or a Spark setting (spark.sql.shuffle.partitions=16,64)."
        ),
    ] = None,
    attempt: options.Attempt = None,
    code_vectors: options.CodeVectors = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (docs/predict.md).")] = False,
    history_server: options.HistoryServer = None,
    endpoint_url: options.EndpointUrl = None,
    ca_bundle: options.CaBundle = None,
    timeout_s: options.TimeoutS = None,
) -> None:
    """Predict the runtime and bottleneck under other resources or Spark settings (what-if
    replay)."""
    from perfmodel.analysis import CONF, load, locate
    from perfmodel.report import ProfileSource, renderer
    from perfmodel.simulate.config import ConfigError
    from perfmodel.simulate.whatif import (
        baseline_overrides,
        change_of,
        conf_pairs,
        is_axis_spec,
        parse_axes,
    )

    axes_specs = list(sweep or [])
    extra = list(ctx.args)
    if path is not None and is_axis_spec(path, CONF) and not Path(path).exists():
        extra.insert(0, path)
        path = None
    for token in extra:
        if not (axes_specs and is_axis_spec(token, CONF)):
            raise ConfigError(f"unexpected argument {token!r}")
        axes_specs.append(token)
    change = change_of(
        {
            "cores": cores,
            "executors": executors,
            "executor-cores": executor_cores,
            "workers": workers,
            "threads": threads,
            "mem": mem,
            "cpu-speed": cpu_speed,
            "disk-bw": disk_bw,
            "net-bw": net_bw,
            "dynamic-allocation": dynamic_allocation,
            "min-executors": min_executors,
            "max-executors": max_executors,
            "initial-executors": initial_executors,
            **conf_pairs(conf or [], conf=CONF),
        },
        conf=CONF,
    )
    overrides = baseline_overrides(host_cores, baseline_disk_bw, baseline_net_bw)
    axes = parse_axes(axes_specs, CONF) if axes_specs else None
    if history_server is not None and path is None:
        raise ConfigError("--history-server: name the application id on it")
    source, remembered, attempt = _resolve_path(path, attempt)
    sources = options.source_options(endpoint_url, ca_bundle, timeout_s)
    log = locate(source, sources, history_server=history_server)
    if isinstance(log, Path) and not log.exists():
        raise ConfigError(f"{source}: no such file or directory")

    output = renderer("json" if as_json else "text")
    profile = ProfileSource(source if isinstance(log, Path) else str(log), remembered)

    def run() -> None:
        analysis = load(log, attempt, code_vectors=code_vectors, overrides=overrides)
        if axes is not None:
            # Each point is replayed as the renderer asks for it (JSON writes it at once).
            output.sweep(analysis.iter_sweep(axes, change), sys.stdout, source=profile)
            return
        output.prediction(analysis.predict(change), sys.stdout, source=profile, change=change)

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
