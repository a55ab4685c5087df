"""`perfmodel diagnose`: where the time of a Spark application went."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from perfmodel.errors import PerfmodelError
from perfmodel.profile.codecs import DEFAULT_MAX_DECOMPRESSED

EXIT_BAD_INPUT = 2


def fail(message: str) -> typer.Exit:
    """Print a user-facing error on stderr and return the exit to raise."""
    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(EXIT_BAD_INPUT)


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
        max_decompressed: int = typer.Option(
            DEFAULT_MAX_DECOMPRESSED,
            "--max-decompressed-bytes",
            help="Refuse logs that decompress to more than this (guards against bombs).",
        ),
    ) -> None:
        """Bottleneck, where the time goes per stage, critical path, and findings.

        Everything shown is measured by Spark itself (task metrics); the remainder that
        Spark does not break down is shown as "unattributed", never hidden.
        """
        # Imported here: the report pipeline pulls in the whole analysis stack, which every
        # other command (`record` before it starts the job) would otherwise wait for.
        from perfmodel.report.pipeline import diagnose_path
        from perfmodel.report.render import render_diagnosis
        from perfmodel.state import remember_profile

        status = Console(stderr=True)
        try:
            # Bundles take a while (locating sources, running the code models): show it.
            with status.status(f"Analysing {eventlog} …", spinner="dots"):
                result = diagnose_path(eventlog, attempt, max_decompressed_bytes=max_decompressed)
        except PerfmodelError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            raise fail(f"cannot read {eventlog}: {exc.strerror or exc}") from None
        try:
            remember_profile(eventlog, attempt)
        except OSError:
            pass  # remembering is a convenience; never fail a diagnosis over it
        if as_json:
            json.dump(result.to_json(), sys.stdout, indent=2, default=str)
            sys.stdout.write("\n")
            return
        console = Console()
        if not console.is_terminal:
            console = Console(width=120)  # piped output: don't wrap tables at 80 columns
        render_diagnosis(result, console, all_stages=all_stages)
