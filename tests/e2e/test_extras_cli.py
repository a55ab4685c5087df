"""A command run without its extra, as a user runs it: `perfmodel ARGS` in a fresh
interpreter where the extra's modules are hidden (``sys.modules[name] = None``, which the
import system reports as never installed) stops before it starts, with one `error:` line
naming the `pip install` that adds them, and leaves no file behind. An interpreter per
command, so these run with the end-to-end tests; the extras' checks themselves are in
tests/unit/test_extras.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_LOG, REPO

SPEC = REPO / "experiments" / "sort.toml"


def _cli_without(hidden: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`perfmodel ARGS` in a fresh interpreter where the ``hidden`` modules are not installed."""
    code = (
        "import sys\n"
        f"for name in {hidden!r}:\n"
        "    sys.modules[name] = None\n"
        "from perfmodel.cli import main\n"
        f"sys.argv = ['perfmodel', *{list(args)!r}]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.mark.parametrize(
    ("hidden", "args", "extra"),
    [
        (["torch", "flair"], ["classify", "java.io.FileInputStream.readBytes"], "models"),
        (["tree_sitter"], ["corpus", "locate", "java.io.FileInputStream.readBytes"], "models"),
        (["flair"], ["train", "corpus-dir"], "train"),
        (["pyspark"], ["fleet", str(EXAMPLE_LOG), "--out", "fleet", "--engine", "spark"], "spark"),
        (
            ["matplotlib"],
            ["experiment", "report", str(SPEC), "--out", "study", "--store", "r.db"],
            "spark",
        ),
    ],
)
def test_a_command_without_its_extra_says_which_and_does_nothing(
    hidden: list[str], args: list[str], extra: str, tmp_path: Path
) -> None:
    done = _cli_without(hidden, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and f"pip install 'perfmodel[{extra}]'" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a half-run left files behind"
