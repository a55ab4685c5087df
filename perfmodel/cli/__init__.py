"""The `perfmodel` command: a thin layer over the library; each module adds its commands."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer

# typer 0.28 (pinned <0.29) runs its own copy of click: the installed click's exception
# classes never match what it raises.
from typer._click.exceptions import BadParameter, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from perfmodel._version import __version__
from perfmodel.errors import PerfmodelError

GROUPS = (
    "diagnose",
    "report",
    "predict",
    "record",
    "models",
    "experiment",
    "recommend",
    "fleet",
    "watch",
    "corpus",
    "cluster",
)
"""The modules of perfmodel/cli that add commands, in the order `--help` lists them."""

COMMAND_GROUPS = {
    "diagnose": "diagnose",
    "report": "report",
    "predict": "predict",
    "record": "record",
    "profile": "record",
    "flame": "record",
    "train": "models",
    "classify": "models",
    "experiment": "experiment",
    "runs": "experiment",
    "recommend": "recommend",
    "fleet": "fleet",
    "watch": "watch",
    "corpus": "corpus",
    "cluster": "cluster",
}
"""Each command's module. A run of one command builds only its own: typer builds every
registered command's parameters before it runs any, and each module imports what its
options need, together a quarter of `perfmodel watch`'s CPU on a small log (0.62 → 0.46 s),
paid again by every command."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"perfmodel {__version__}")
        raise typer.Exit()


EXIT_BAD_INPUT = 2
"""Exit status for a problem with the user's input or environment (never a bug)."""


def user_error_line(exc: BaseException) -> str:
    """The one line a user sees for an error of theirs: no traceback, no markup."""
    if isinstance(exc, OSError) and not isinstance(exc, PerfmodelError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"error: {where}{exc.strerror or exc}"
    return f"error: {exc}"


_QUOTED_HINT = re.compile(r"^(Invalid value for )(.+?): ")
"""Click's ``Invalid value for '--host-cores': `` prefix: the option's quotes are dropped, as
the other ``error:`` lines name options bare (``--mem must be …``)."""


def usage_error_line(exc: UsageError) -> str:
    """A usage error as the same one ``error:`` line as every other user error.

    Click prints a usage block, a hint and ``Error: …`` on four lines; the README promises
    one line, and scripts that read the last line of stderr expect it. Click's own wording
    of the problem is kept (it names the option and the allowed values), then the help that
    explains the command line.
    """
    text = exc.format_message()
    if isinstance(exc, BadParameter):
        text = _QUOTED_HINT.sub(lambda m: m.group(1) + m.group(2).replace("'", "") + ": ", text)
    text = " ".join(line.strip() for line in text.splitlines() if line.strip())
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    if text[:2].istitle():  # "Invalid value …", "No such option …"; not "PATH …"
        text = text[0].lower() + text[1:]
    ctx = exc.ctx
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        text += f" (see {ctx.command_path} {ctx.help_option_names[0]})"
    return f"error: {text}"


class _ErrorBoundary(TyperGroup):
    """The one place where user errors become an ``error:`` line and exit status 2.

    Library code raises `PerfmodelError` subclasses (and lets OS errors on the user's paths
    rise); every command, however deeply nested, is invoked inside this group's
    ``invoke``, so no command needs its own handler. Anything else is a bug and keeps its
    traceback.

    Click's usage errors (an unknown option or command, a value out of an option's range)
    end the same way: a subcommand's command line is parsed inside ``invoke``, the root's
    own in ``make_context``. Help for a bare group (``perfmodel``, ``perfmodel corpus``) is
    click's too (a usage error that shows the help) and is left to click.
    """

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except UsageError as exc:
            _refuse_usage(exc)

    def invoke(self, ctx: Any) -> Any:  # typer's own (vendored) click Context
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            _refuse_usage(exc)
        except (PerfmodelError, OSError) as exc:
            if isinstance(exc, BrokenPipeError):
                raise
            _refuse(user_error_line(exc))


def _refuse(line: str) -> NoReturn:
    """End the run on ``line``: flushed before the exit, so it is the last line of stderr."""
    typer.echo(line, err=True)
    sys.stderr.flush()
    raise typer.Exit(EXIT_BAD_INPUT) from None


def _refuse_usage(exc: UsageError) -> NoReturn:
    """Refuse a command line; a bare group's help (click's `NoArgsIsHelpError`) is not an
    error and goes back to click, which prints it."""
    if isinstance(exc, NoArgsIsHelpError):
        raise exc
    _refuse(usage_error_line(exc))


SUB_APPS = ("corpus", "cluster")
"""Groups whose module holds a typer sub-application (``<group>_app``) rather than a
``register(app)`` function."""


def _register(app: typer.Typer, group: str) -> None:
    """Add the commands of the module ``group`` (one of `GROUPS`) to ``app``. Imported here,
    when asked for: see `COMMAND_GROUPS`."""
    if group not in GROUPS:
        raise ValueError(f"no command module {group!r}")
    module = importlib.import_module(f"perfmodel.cli.{group}")
    if group in SUB_APPS:
        app.add_typer(getattr(module, f"{group}_app"), name=group)
    else:
        module.register(app)


def build_app(command: str | None = None) -> typer.Typer:
    """The `perfmodel` command; with ``command`` (a name in `COMMAND_GROUPS`) only that
    command's module is built, enough to run it or show its help. Anything else (``--help``,
    ``--version``, a misspelt command) gets every command."""
    app = typer.Typer(
        cls=_ErrorBoundary,
        name="perfmodel",
        help=(
            "Why is this Spark job slow, and what would other resources do to it?\n\n"
            "diagnose: bottleneck, where the time goes, advice (from an event log or a "
            "profile bundle).\n\n"
            "predict: what-if replay under other resources (--cores 8 --mem 7g) or Spark "
            "settings (--conf spark.sql.shuffle.partitions=64), on the profile diagnose last "
            "analysed or one you name.\n\n"
            "record: run a job with stack samplers on and write a profile bundle.\n\n"
            "train / classify: the code models that infer a resource vector per function.\n\n"
            "report: one self-contained HTML page about an application.\n\n"
            "recommend: the cheapest VM type, node count and executor layout that meets a "
            "deadline, from one profiled run and a catalog.\n\n"
            "fleet: many event logs at once (locally or as a PySpark job) → Parquet tables.\n\n"
            "watch: follow a running application, a line per completed stage.\n\n"
            "experiment / runs: run a workload under a grid of configurations, store the "
            "measurements and check predictions against them.\n\n"
            "cluster: a shaped Spark standalone cluster in network namespaces (root)."
        ),
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Click's plain help and usage errors: typer's rich formatter imports markdown-it,
        # pygments and attrs, half of `perfmodel --help`'s start-up.
        rich_markup_mode=None,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version."
        ),
    ) -> None:
        """perfmodel: performance characterisation for Spark jobs."""

    group = COMMAND_GROUPS.get(command) if command is not None else None
    for name in GROUPS if group is None else (group,):
        _register(app, name)
    return app


def command_named(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word, unless that is an option."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def main() -> None:
    build_app(command_named(sys.argv[1:]))()
