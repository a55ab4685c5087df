"""The `perfmodel` command: a thin layer over the library; each module adds its commands."""

from __future__ import annotations

import typer

from perfmodel import __version__
from perfmodel.cli import diagnose, experiment, models, predict, record
from perfmodel.cli.corpus import corpus_app


def _version(value: bool) -> None:
    if value:
        typer.echo(f"perfmodel {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="perfmodel",
        help=(
            "Why is this Spark job slow, and what would other resources do to it?\n\n"
            "diagnose: bottleneck, where the time goes, advice (from an event log or a "
            "profile bundle).\n\n"
            "predict: what-if replay under other resources (--cores 8 --mem 7g), on the "
            "profile diagnose last analysed or one you name.\n\n"
            "record: run a job with stack samplers on and write a profile bundle.\n\n"
            "train / classify: the code models that infer a resource vector per function.\n\n"
            "experiment / runs: run a workload under a grid of configurations, store the "
            "measurements and check predictions against them."
        ),
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version."
        ),
    ) -> None:
        """perfmodel: performance characterisation for Spark jobs."""

    diagnose.register(app)
    predict.register(app)
    record.register(app)
    models.register(app)
    experiment.register(app)
    app.add_typer(corpus_app, name="corpus")
    return app


def main() -> None:
    build_app()()
