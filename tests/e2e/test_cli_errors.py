"""The CLI's one error boundary: every subcommand, given a path that is missing or holds
garbage, ends with one ``error:`` line and exit status 2, never a traceback.

Every command line runs through ``perfmodel.cli.main`` (the installed script's entry point),
so the test covers ``main`` and not only the Typer app. Most run in this process (a
subprocess per command line paid each one's start-up and imports again, 1-2 s each); a few
run as real processes of the installed ``perfmodel`` script, as a user would, so the script,
its exit status and its stderr are checked as a user sees them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_in_process

PERFMODEL = str(Path(sys.executable).with_name("perfmodel"))
CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "example-cloud.csv"


def _commands(target: Path, out: Path) -> list[list[str]]:
    """Every subcommand that reads a user's path, pointed at ``target``."""
    return [
        ["diagnose", str(target)],
        ["diagnose", str(target), "--json"],
        ["report", str(target), "-o", str(out / "report.html")],
        ["predict", str(target), "--cores", "4"],
        ["predict", str(target), "--sweep", "cores=1,2"],
        ["profile", str(target), "--out", str(out / "bundle")],
        ["profile", str(target), "--jfr", str(target), "--out", str(out / "bundle2")],
        ["flame", str(target)],
        ["flame", str(target), "--stage", "1"],
        ["classify", str(out / "garbage.py")],
        ["experiment", "run", str(target), "--store", str(out / "runs.db")],
        ["experiment", "report", str(target), "--store", str(out / "runs.db")],
        ["train", str(target), "--out", str(out / "models")],
        ["corpus", "build", "--manifest", str(target), "--out", str(out / "corpus")],
        ["recommend", str(target), "--catalog", str(CATALOG)],
        ["recommend", str(CATALOG.parent.parent / "examples" / "eventlogs" / "etl-local2.zstd")]
        + ["--catalog", str(target)],
    ]


def _garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage"
    path.write_bytes(os.urandom(4096))
    return path


IN_A_PROCESS = {"diagnose", "predict"}
"""Commands also run as real processes of the installed script (the first command line of
each)."""


@pytest.mark.parametrize("kind", ["missing", "garbage"])
def test_every_subcommand_fails_cleanly(
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "no-such-log" if kind == "missing" else _garbage(tmp_path)
    commands = _commands(target, tmp_path)
    if kind == "garbage":  # a missing store is a new, empty one; a garbage one is an error
        commands.append(["runs", "list", "--store", str(target)])
    else:  # a garbage log in a fleet is a row of its errors table, not a failed run
        commands.append(["fleet", str(target), "--out", str(tmp_path / "fleet")])
    (tmp_path / "garbage.py").write_bytes(b"\xff\xfe" + os.urandom(64))  # classify's input
    env = {**os.environ, "PERFMODEL_STATE_DIR": str(tmp_path / "state")}
    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    as_processes = set()
    for args in commands:
        code, out, err = cli_in_process(args, capsys, monkeypatch)
        said = out + err
        assert "Traceback" not in said, (args, said)
        assert code == 2, (args, code, said)
        assert err.strip().splitlines()[-1].startswith("error: "), (args, said)
        if args[0] in IN_A_PROCESS and args[0] not in as_processes:
            as_processes.add(args[0])
            done = subprocess.run(
                [PERFMODEL, *args], capture_output=True, text=True, env=env, timeout=300
            )
            said = done.stdout + done.stderr
            assert "Traceback" not in said, (args, said)
            assert done.returncode == 2, (args, done.returncode, said)
            assert done.stderr.strip().splitlines()[-1] == err.strip().splitlines()[-1], said
    assert as_processes == IN_A_PROCESS


def test_record_of_a_command_that_cannot_start(tmp_path: Path) -> None:
    out = tmp_path / "run1"
    args = [PERFMODEL, "record", "--out", str(out), "--", str(tmp_path / "no-such-command")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 2 and "error: " in done.stderr
