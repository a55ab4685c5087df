"""`perfmodel report`: one self-contained HTML page about a Spark application."""

from __future__ import annotations

from pathlib import Path

import typer

from perfmodel.cli import options
from perfmodel.cli.collector import without_cycle_collector


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        eventlog: str = typer.Argument(
            ...,
            help="A Spark event log (any form or location diagnose reads) or a profile "
            "bundle. With --history-server: an app id.",
            show_default=False,
        ),
        out: Path = typer.Option(
            Path("report.html"),
            "--out",
            "-o",
            parser=options.output_path,
            help="The HTML file to write (an existing regular file is replaced; a folder, "
            "device, FIFO or symbolic link is refused).",
        ),
        attempt: str | None = typer.Option(
            None, "--attempt", help="Application attempt to report on (default: the latest)."
        ),
        open_page: bool = typer.Option(
            False, "--open", help="Open the report in the default browser when written."
        ),
        max_decompressed: options.MaxDecompressed = None,
        history_server: options.HistoryServer = None,
        endpoint_url: options.EndpointUrl = None,
        ca_bundle: options.CaBundle = None,
        timeout_s: options.TimeoutS = None,
    ) -> None:
        """Write one HTML page: summary, timeline, stage DAG, stages, flames, what-if, findings.

        Self-contained (scripts and styles inlined, nothing fetched): it opens offline.
        """
        from rich.console import Console

        from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED, load, locate
        from perfmodel.atomic import check_output
        from perfmodel.report import render_to_file, renderer

        html = renderer("html")
        check_output(out)  # before the analysis: a refused path costs nothing
        sources = options.source_options(endpoint_url, ca_bundle, timeout_s)
        cap = DEFAULT_MAX_DECOMPRESSED if max_decompressed is None else max_decompressed

        def run() -> Path:
            status = Console(stderr=True)
            with status.status("Locating the log …", spinner="dots") as spinner:
                log = locate(
                    eventlog, sources, history_server=history_server, max_decompressed_bytes=cap
                )
                spinner.update(f"Analysing {log} …")
                analysis = load(log, attempt, max_decompressed_bytes=cap)
                spinner.update("Building the report …")
                return render_to_file(out, lambda f: html.application(analysis, f))

        written = without_cycle_collector(run)
        typer.echo(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)", err=True)
        if open_page:
            import webbrowser  # here: it imports shlex and subprocess, for --open only

            webbrowser.open(written.resolve().as_uri())
