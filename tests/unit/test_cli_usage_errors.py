"""Click's own usage errors (a value out of an option's range, an unknown option or command)
end like every other user error: one ``error:`` line on stderr and exit status 2, not click's
four-line usage block; help, the version, a command's own exit status and Ctrl-C are as they
were.

Command lines run through ``perfmodel.cli.main``, the installed script's entry point, in this
process (each subprocess pays a second of start-up); one runs as ``python -m perfmodel``, as
a user would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from perfmodel import cli
from tests.conftest import cli_in_process

LOG = str(Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd")


USAGE_ERRORS = [
    (
        ["predict", LOG, "--host-cores", "0"],
        "error: invalid value for --host-cores: 0 is not in the range 1<=x<=65536",
        "predict",
    ),
    (
        ["predict", LOG, "--host-cores", "abc"],
        "error: invalid value for --host-cores: 'abc'",
        "predict",
    ),
    (["diagnose", LOG, "--timeout-s", "0"], "error: invalid value for --timeout-s: 0", "diagnose"),
    (["fleet", LOG, "--jobs", "0"], "error: invalid value for --jobs: 0", "fleet"),
    (["fleet", LOG, "--jobs", "abc"], "error: invalid value for --jobs: 'abc'", "fleet"),
    (["runs", "show", "abc"], "error: invalid value for run_id: 'abc'", "runs show"),
    (["predict", LOG, "--bogus"], "error: no such option: --bogus", "predict"),
    (["--bogus"], "error: no such option: --bogus", ""),
    (["bogus"], "error: no such command 'bogus'", ""),
    (["corpus", "build", "--bogus"], "error: no such option: --bogus", "corpus build"),
    (["cluster", "bogus"], "error: no such command 'bogus'", "cluster"),
    # Click's parser raises this one without the command's context: no help is named.
    (["predict", LOG, "--cores"], "error: option '--cores' requires an argument", None),
]


@pytest.mark.parametrize(
    ("args", "expected", "help_of"),
    USAGE_ERRORS,
    ids=[" ".join(a[-2:]).replace(LOG, "LOG") for a, *_ in USAGE_ERRORS],
)
def test_a_usage_error_is_one_error_line(
    args: list[str],
    expected: str,
    help_of: str | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, err = cli_in_process(args, capsys, monkeypatch)
    assert code == 2, (args, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(expected), err
    if help_of is None:
        assert lines[0] == expected
    else:  # the command's help, or the group's for an unknown command (the program's name
        # is pytest's here)
        assert lines[0].endswith(f"{' ' + help_of if help_of else ''} --help)"), err
    assert "Usage:" not in err and "Traceback" not in err


def test_a_usage_error_of_the_installed_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfmodel", "predict", LOG, "--host-cores", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: invalid value for --host-cores: 0 is not in the range 1<=x<=65536"
        " (see python -m perfmodel predict --help)"
    ]


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--help"], " [OPTIONS] COMMAND [ARGS]"),
        (["predict", "--help"], " predict [OPTIONS] [path]"),
        (["corpus", "build", "--help"], " corpus build [OPTIONS]"),
        (["--version"], "perfmodel "),
    ],
)
def test_help_and_version_still_exit_0(
    args: list[str],
    shown: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, err = cli_in_process(args, capsys, monkeypatch)
    assert code == 0 and err == "", (code, err)
    assert shown in out, out


@pytest.mark.parametrize("args", [[], ["corpus"]])
def test_a_bare_group_still_shows_its_help(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = cli_in_process(args, capsys, monkeypatch)
    assert code == 2  # click's status for a group without a command
    said = out + err
    assert said.startswith("Usage: ") and " ".join([*args, "[OPTIONS] COMMAND"]) in said
    assert "error:" not in out + err


def _app_with(body: typer.models.CommandFunctionType) -> typer.Typer:
    app = cli.build_app("predict")
    app.command("probe")(body)
    return app


def _exit_7() -> None:
    raise typer.Exit(7)


def _interrupted() -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(("body", "status"), [(_exit_7, 7), (_interrupted, 130)])
def test_a_commands_own_exit_status_and_ctrl_c_pass_through(
    body: typer.models.CommandFunctionType, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        _app_with(body)(["probe"], prog_name="perfmodel")
    assert done.value.code == status
    assert "error:" not in capsys.readouterr().err


def test_record_passes_its_commands_exit_status_through(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perfmodel", "record", "--out", str(tmp_path / "run")]
        + ["--no-pyspy", "--", "sh", "-c", "exit 3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert "error:" not in done.stderr
