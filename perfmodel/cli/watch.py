"""`perfmodel watch`: follow a running application, a line per completed stage, and the
usual diagnosis at its end."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from perfmodel.cli import options

EXIT_TIMEOUT = 3

HELP = (
    "Follow a running Spark application: one line per stage as it completes, with its "
    "findings (skew, spill, idle cores, a stage far over its peers, failed tasks), then "
    "the usual diagnosis when the application ends. Reads only the bytes appended since "
    "the last poll (rolling parts included). SOURCE is an in-progress log or rolling "
    "directory (local, s3://, gs://, abfs://, hdfs://) or a History Server application "
    "(http://shs:18080/history/<app-id>; with --history-server: an app id). Exit status 0 "
    "at the application's end, 3 when --timeout passed without new events, 130 on Ctrl-C "
    "(the diagnosis of what was read is printed first)."
)


def register(app: typer.Typer) -> None:
    """Add the ``watch`` command to ``app``."""
    app.command("watch", help=HELP)(watch_command)


def watch_command(
    source: Annotated[
        str, typer.Argument(help="The log to follow (see above).", show_default=False)
    ],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='JSON lines: one {"event": "stage"} object per completed stage, then '
            '{"event": "diagnosis"} with the diagnosis (docs/sources.md).',
        ),
    ] = False,
    interval: Annotated[
        float,
        typer.Option(
            "--interval",
            min=0.01,
            max=86_400.0,
            callback=options.finite,
            help="Seconds between polls for new bytes.",
        ),
    ] = 2.0,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.01,
            max=365 * 86_400.0,
            callback=options.finite,
            help="Stop when the log has not grown for this many seconds (default: wait for "
            "the application's end).",
            show_default=False,
        ),
    ] = None,
    attempt: Annotated[
        str | None, typer.Option("--attempt", help="Application attempt (default: the latest).")
    ] = None,
    max_decompressed: options.MaxDecompressed = None,
    history_server: options.HistoryServer = None,
    endpoint_url: options.EndpointUrl = None,
    ca_bundle: options.CaBundle = None,
    timeout_s: options.TimeoutS = None,
) -> None:
    """`HELP` (one string, so the help text wraps to the terminal)."""
    from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED
    from perfmodel.analysis.watch import watch
    from perfmodel.report import renderer
    from perfmodel.simulate.config import ConfigError

    if not interval > 0:
        raise ConfigError("--interval must be positive")
    if timeout is not None and not timeout > 0:
        raise ConfigError("--timeout must be positive")
    output = renderer("json" if as_json else "text")
    try:
        result = watch(
            source,
            lambda report: output.watch_stage(report, sys.stdout),
            sources=options.source_options(endpoint_url, ca_bundle, timeout_s),
            history_server=history_server,
            attempt=attempt,
            interval_s=interval,
            timeout_s=timeout,
            max_decompressed_bytes=(
                DEFAULT_MAX_DECOMPRESSED if max_decompressed is None else max_decompressed
            ),
        )
    except KeyboardInterrupt:  # Ctrl-C while decoding (not while waiting): stop at once
        typer.echo("stopped (Ctrl-C)", err=True)
        raise typer.Exit(options.EXIT_INTERRUPTED) from None
    output.watch_end(result, sys.stdout)
    if result.stopped == "timeout":
        typer.echo(f"stopped: the log did not grow for {timeout:g} s", err=True)
        raise typer.Exit(EXIT_TIMEOUT)
    if result.stopped == "interrupted":
        typer.echo("stopped (Ctrl-C)", err=True)
        raise typer.Exit(options.EXIT_INTERRUPTED)
