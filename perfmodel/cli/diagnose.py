"""`perfmodel diagnose`: where the time of a Spark application went."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from perfmodel.cli import options
from perfmodel.cli.collector import without_cycle_collector


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose_command(
        eventlog: Path = typer.Argument(
            ...,
            help=(
                "A Spark event log: a file (plain, .zstd, .lz4, .snappy, .lzf, .gz, "
                ".inprogress), a rolling eventlog_v2_* directory, a directory holding the "
                "attempts of one application, or a profile bundle."
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
    ) -> None:
        """Bottleneck, where the time goes per stage, critical path, and findings.

        Everything shown is measured by Spark itself (task metrics); the remainder that
        Spark does not break down is shown as "unattributed", never hidden.
        """
        without_cycle_collector(
            lambda: _diagnose(eventlog, attempt, as_json, all_stages, max_decompressed)
        )


def _diagnose(
    eventlog: Path,
    attempt: str | None,
    as_json: bool,
    all_stages: bool,
    max_decompressed: int | None,
) -> None:
    # Imported here: the facade pulls in the whole analysis stack, which every other
    # command (`record` before it starts the job) would otherwise wait for.
    from rich.console import Console

    from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED, load
    from perfmodel.report import renderer
    from perfmodel.state import remember_profile

    status = Console(stderr=True)
    # Bundles take a while (locating sources, running the code models): show it.
    with status.status(f"Analysing {eventlog} …", spinner="dots"):
        cap = DEFAULT_MAX_DECOMPRESSED if max_decompressed is None else max_decompressed
        analysis = load(eventlog, attempt, max_decompressed_bytes=cap)
        result = analysis.diagnose()
    try:
        remember_profile(eventlog, attempt)
    except OSError:
        pass  # remembering is a convenience; never fail a diagnosis over it
    renderer("json" if as_json else "text").diagnosis(result, sys.stdout, all_stages=all_stages)
