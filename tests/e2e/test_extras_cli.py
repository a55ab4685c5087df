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
        # Without --out too: the report reads bundles (pyarrow) and the study's code.
        (["pyarrow"], ["experiment", "report", str(SPEC), "--store", "r.db"], "spark"),
        (["pyarrow"], ["experiment", "run", str(SPEC), "--store", "r.db"], "spark"),
        (
            ["pyarrow"],
            ["experiment", "calibrate", "--split", "s.toml", "--out", "i.json", "--store", "r.db"],
            "spark",
        ),
        (["pyarrow"], ["experiment", "settings", str(SPEC), "--store", "r.db"], "spark"),
        (["pyarrow"], ["diagnose", "s3://perfmodel-test/eventlogs/app-1"], "remote"),
        (["pyarrow"], ["profile", str(EXAMPLE_LOG), "--out", "bundle"], "bundles"),
        (["pyarrow"], ["record", "--no-pyspy", "--out", "bundle", "--", "true"], "bundles"),
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


@pytest.fixture(scope="module")
def example_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real bundle of the example log, written by `perfmodel profile` (pyarrow present)."""
    out = tmp_path_factory.mktemp("bundle") / "bundle"
    subprocess.run(
        [sys.executable, "-m", "perfmodel", "profile", str(EXAMPLE_LOG), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


@pytest.mark.parametrize("command", ["diagnose", "predict", "flame"])
def test_a_bundle_without_pyarrow_names_the_bundles_extra(
    command: str, example_bundle: Path, tmp_path: Path
) -> None:
    before = sorted(p.name for p in example_bundle.iterdir())
    done = _cli_without(["pyarrow"], command, str(example_bundle), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: reading the recorded bundle ")
    assert lines[0].endswith("pip install 'perfmodel[bundles]'")
    assert sorted(p.name for p in example_bundle.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["diagnose", str(EXAMPLE_LOG)],
        ["predict", str(EXAMPLE_LOG), "--cores", "4"],
        ["report", str(EXAMPLE_LOG), "-o", "report.html"],
        # The fleet's Parquet tables are arro3's: fleet runs on the light install.
        ["fleet", str(EXAMPLE_LOG), "--out", "fleet"],
    ],
)
def test_a_bare_event_log_needs_neither_pyarrow_nor_networkx(
    args: list[str], tmp_path: Path
) -> None:
    done = _cli_without(["pyarrow", "networkx"], *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
