"""`perfmodel fleet`: many event logs at once, as Parquet tables and a summary."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from perfmodel.cli import options
from perfmodel.extras import require_extra

HELP = (
    "Analyse many event logs: Parquet tables (apps, stages, findings, predictions, errors), "
    "a terminal summary and summary.html (docs/fleet.md).\n\n"
    "A log analysed by an earlier run into the same --out is skipped unless its path, size "
    "or mtime changed; new logs are picked up and regressions recomputed. Exit status 0 when "
    "the run completes, even with logs in the errors table; 2 for unusable input; 130 on "
    "Ctrl-C, after saving the logs finished by then (the same command resumes)."
)


def register(app: typer.Typer) -> None:
    """Add the ``fleet`` command to ``app``."""
    app.command("fleet", help=HELP)(fleet)


def fleet(
    inputs: Annotated[
        list[str] | None,
        typer.Argument(
            help="A History Server directory, a glob ('logs/app-*'), a file listing paths "
            "(one per line), single logs, or URIs: s3:// (s3a://), gs://, abfs[s]://, "
            "hdfs:// prefixes or logs (read by either engine), History Server application "
            "URLs. A NAME=VALUE argument (cores=2x, spark.sql.shuffle.partitions=64) is taken as "
            "a --what-if.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            parser=options.output_path,
            help="Folder for the tables and summary.html (each run updates them).",
        ),
    ] = Path("fleet"),
    engine: Annotated[
        str, typer.Option(help="local: a process pool on this machine; spark: a PySpark job.")
    ] = "local",
    since: Annotated[
        str | None,
        typer.Option(help="Only logs modified at or after this date (2026-11-01 or ISO time)."),
    ] = None,
    what_if: Annotated[
        list[str] | None,
        typer.Option(
            "--what-if",
            help="A scenario to predict for every application (repeatable): cores=2x, "
            "mem=0.5x, cores=16,mem=4g (factors are of each application's own baseline), or "
            "Spark settings: spark.sql.shuffle.partitions=64 (docs/settings.md).",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            help="Worker processes (local engine; default: one per core).",
            min=1,
            max=options.WORKERS_MAX,
        ),
    ] = None,
    memory_cap: Annotated[
        str | None,
        typer.Option(
            help="Memory one log's analysis may add (2g, 512m); a log needing more is "
            "recorded in the errors table."
        ),
    ] = None,
    fresh: Annotated[
        bool, typer.Option(help="Ignore earlier results in --out and analyse every log.")
    ] = False,
    master: Annotated[
        str | None,
        typer.Option(help="Spark master (default: spark-submit's, else local[*])."),
    ] = None,
    spark_conf: Annotated[
        list[str] | None, typer.Option(help="Spark setting KEY=VALUE (repeatable).")
    ] = None,
    spark_staging: Annotated[
        str | None,
        typer.Option(
            help="URI where Spark writes its Parquet before the merge (needed on a cluster: "
            "e.g. hdfs:///tmp/perfmodel-fleet)."
        ),
    ] = None,
    spark_transfer: Annotated[
        str,
        typer.Option(
            help="How workers get a log: auto, direct (open the path), binary (Spark reads it)."
        ),
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON (tables stay on disk).")
    ] = False,
    history_server: Annotated[
        str | None,
        typer.Option(
            "--history-server",
            help="Analyse the applications a Spark History Server lists (http://shs:18080) "
            "that are not yet in --out's tables (with --since: updated since then; local "
            "engine).",
            show_default=False,
        ),
    ] = None,
    endpoint_url: options.EndpointUrl = None,
    ca_bundle: options.CaBundle = None,
    timeout_s: options.TimeoutS = None,
) -> None:
    """`HELP` (one string, so the help text wraps to the terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    _check_engine_options(
        engine,
        {
            "--master": master is not None,
            "--spark-conf": bool(spark_conf),
            "--spark-staging": spark_staging is not None,
            "--spark-transfer": spark_transfer != "auto",
        },
        spark_transfer,
    )
    if engine == "spark":
        require_extra("spark", "fleet --engine spark")

    from perfmodel.analysis import CONF
    from perfmodel.fleet.run import FleetInterrupted, FleetOptions, run_fleet
    from perfmodel.report import render_to_file, renderer
    from perfmodel.simulate.config import ConfigError
    from perfmodel.simulate.units import parse_size
    from perfmodel.simulate.whatif import is_change_spec, parse_changes

    inputs = inputs or []
    paths = [i for i in inputs if not (is_change_spec(i, CONF) and not Path(i).exists())]
    specs = list(what_if or []) + [i for i in inputs if i not in paths]
    if not paths and history_server is None:
        raise ConfigError(
            "no logs given: name a directory, glob, listing file, log, URI or --history-server"
        )
    conf: list[tuple[str, str]] = []
    for item in spark_conf or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--spark-conf {item!r}: write KEY=VALUE")
        conf.append((key.strip(), value.strip()))
    opts = FleetOptions(
        inputs=paths,
        out=out,
        engine=engine,
        since=_date(since),
        scenarios=parse_changes(specs, CONF),
        jobs=jobs,
        memory_cap_bytes=parse_size(memory_cap) if memory_cap else None,
        fresh=fresh,
        master=master,
        spark_conf=conf,
        staging=spark_staging,
        transfer=spark_transfer,
        history_server=history_server,
        sources=options.source_options(endpoint_url, ca_bundle, timeout_s),
    )
    err = Console(stderr=True, highlight=False)
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    )
    try:
        with progress:
            task = progress.add_task("analysing logs", total=None)
            result = run_fleet(
                opts,
                on_start=lambda n: progress.update(task, total=n),
                on_done=lambda _ref: progress.advance(task),
            )
    except FleetInterrupted as stop:
        typer.echo(
            f"interrupted: the {stop.saved:,} of {stop.total:,} log(s) finished are saved in "
            f"{stop.out}; the same command analyses the rest",
            err=True,
        )
        raise typer.Exit(options.EXIT_INTERRUPTED) from None
    html = renderer("html")
    render_to_file(
        out.expanduser() / "summary.html", lambda f: html.fleet_summary(result.summary, f)
    )
    renderer("json" if as_json else "text").fleet_summary(
        result.summary, sys.stdout, out_dir=str(out)
    )


def _check_engine_options(engine: str, spark_only: dict[str, bool], transfer: str) -> None:
    """Refuse what the chosen engine would ignore: a Spark-engine option (``spark_only``:
    option name → given) with the local engine, and an unknown ``--spark-transfer`` with
    either, so a typo or a forgotten ``--engine spark`` is not a run that quietly did
    something else."""
    from perfmodel.fleet.run import ENGINES, FleetOptionError
    from perfmodel.fleet.spark import TRANSFERS

    if engine not in ENGINES:
        raise FleetOptionError(f"--engine must be one of {', '.join(ENGINES)}")
    if transfer not in TRANSFERS:
        raise FleetOptionError(
            f"--spark-transfer {transfer!r}: must be one of {', '.join(TRANSFERS)}"
        )
    if engine != "spark":
        for option, given in spark_only.items():
            if given:
                raise FleetOptionError(f"{option} applies to --engine spark only")


def _date(text: str | None) -> datetime | None:
    from perfmodel.simulate.config import ConfigError

    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--since {text!r}: write a date such as 2026-11-01") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
