"""The CLI run in-process by the tests, built as `perfmodel.cli.main` builds it: the named
command's module only.

`build_app()` with no command builds all eleven command modules, and typer's test runner
then turns every command's parameters into click's on each call: 43.6 ms a call, against
1-3 ms for one command (20 calls each, 2026-11-30). The suite runs the CLI in-process about
a thousand times, most of them in the fuzz tests, and py-spy found 46 s of a run's CPU (a
tenth of the whole suite's) in that conversion. A command line that names no command
(``--help``, ``--version``) or a misspelt one still gets every command, as it does from
`main`.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import Any

from typer.testing import CliRunner, Result

from perfmodel.cli import build_app, command_named


def invoke_cli(args: Sequence[str | PathLike[str]], **kwargs: Any) -> Result:
    """`perfmodel ARGS...` through typer's `CliRunner`; ``kwargs`` as its ``invoke`` takes
    them (``input``, ``env``, ``catch_exceptions``)."""
    argv = [str(a) for a in args]
    return CliRunner().invoke(build_app(command_named(argv)), argv, **kwargs)
