"""`perfmodel report`: one self-contained HTML page about a Spark application."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import typer
from rich.console import Console

from perfmodel.cli.collector import without_cycle_collector
from perfmodel.profile.codecs import DEFAULT_MAX_DECOMPRESSED


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        eventlog: Path = typer.Argument(
            ...,
            help="A Spark event log (any form diagnose reads) or a profile bundle.",
            show_default=False,
        ),
        out: Path = typer.Option(
            Path("report.html"), "--out", "-o", help="The HTML file to write."
        ),
        attempt: str | None = typer.Option(
            None, "--attempt", help="Application attempt to report on (default: the latest)."
        ),
        open_page: bool = typer.Option(
            False, "--open", help="Open the report in the default browser when written."
        ),
        max_decompressed: int = typer.Option(
            DEFAULT_MAX_DECOMPRESSED,
            "--max-decompressed-bytes",
            help="Refuse logs that decompress to more than this (guards against bombs).",
        ),
    ) -> None:
        """Write one HTML page: summary, timeline, stage DAG, stages, flames, what-if, findings.

        Self-contained (scripts and styles inlined, nothing fetched): it opens offline.
        """
        from perfmodel.analysis import load
        from perfmodel.report.html import application_page, write_html

        def run() -> Path:
            status = Console(stderr=True)
            with status.status(f"Analysing {eventlog} …", spinner="dots") as spinner:
                analysis = load(eventlog, attempt, max_decompressed_bytes=max_decompressed)
                spinner.update("Building the report …")
                page = application_page(analysis)
                return write_html(page, out)

        written = without_cycle_collector(run)
        typer.echo(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)", err=True)
        if open_page:
            webbrowser.open(written.resolve().as_uri())
