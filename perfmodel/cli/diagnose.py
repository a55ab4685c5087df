"""`perfmodel diagnose`: where the time of a Spark application went."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from perfmodel.cli import options
from perfmodel.cli.collector import without_cycle_collector

if TYPE_CHECKING:
    from perfmodel.analysis import SourceOptions


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose_command(
        eventlog: str = typer.Argument(
            ...,
            help=(
                "A Spark event log: a file (plain, .zstd, .lz4, .snappy, .lzf, .gz, "
                ".inprogress), a rolling eventlog_v2_* directory, a directory holding the "
                "attempts of one application, or a profile bundle; local or s3://, gs://, "
                "abfs://, hdfs://, or a History Server application "
                "(http://shs:18080/history/<app-id>). With --history-server: an app id."
            ),
            show_default=False,
        ),
        attempt: str | None = typer.Option(
            None, "--attempt", help="Application attempt to analyse (default: the latest)."
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Print the diagnosis as JSON (schema: docs/diagnose-json.md)."
        ),
        all_stages: bool = typer.Option(
            False, "--all-stages", help="List every stage, not only the longest ones."
        ),
        max_decompressed: options.MaxDecompressed = None,
        history_server: options.HistoryServer = None,
        endpoint_url: options.EndpointUrl = None,
        ca_bundle: options.CaBundle = None,
        timeout_s: options.TimeoutS = None,
    ) -> None:
        """Bottleneck, where the time goes per stage, critical path, and findings.

        Everything shown is measured by Spark itself (task metrics); the remainder that
        Spark does not break down is shown as "unattributed", never hidden.
        """
        sources = options.source_options(endpoint_url, ca_bundle, timeout_s)
        without_cycle_collector(
            lambda: _diagnose(
                eventlog,
                attempt,
                as_json,
                all_stages,
                max_decompressed,
                history_server,
                sources,
            )
        )


def _diagnose(
    eventlog: str,
    attempt: str | None,
    as_json: bool,
    all_stages: bool,
    max_decompressed: int | None,
    history_server: str | None,
    sources: SourceOptions,
) -> None:
    # Imported here: the facade pulls in the whole analysis stack, which every other
    # command (`record` before it starts the job) would otherwise wait for.
    from rich.console import Console

    from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED, load, locate
    from perfmodel.report import renderer
    from perfmodel.state import remember_profile

    cap = DEFAULT_MAX_DECOMPRESSED if max_decompressed is None else max_decompressed
    status = Console(stderr=True)
    # Bundles take a while (locating sources, running the code models), and so may a
    # History Server's download: show it. A location is shown scrubbed of credentials.
    with status.status("Locating the log …", spinner="dots") as spinner:
        log = locate(eventlog, sources, history_server=history_server, max_decompressed_bytes=cap)
        spinner.update(f"Analysing {log} …")
        analysis = load(log, attempt, max_decompressed_bytes=cap)
        result = analysis.diagnose()
    try:
        remember_profile(str(log), attempt)  # a remote location as its (scrubbed) URI
    except OSError:
        pass  # remembering is a convenience; never fail a diagnosis over it
    renderer("json" if as_json else "text").diagnosis(result, sys.stdout, all_stages=all_stages)
