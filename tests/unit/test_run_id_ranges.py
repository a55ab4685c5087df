"""`experiment report`'s run id specs and read-only opening of the run store: a malformed or
reversed id range is one error line (not a traceback or an empty table), a wide range is
selected by its bounds, and an empty file given as ``--store`` is refused, not turned into a
database."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfmodel.cli import build_app
from perfmodel.cli.experiment import _select_runs
from perfmodel.runs.rows import RunOutcome
from perfmodel.runs.store import RunStore, StoreError


def _store(path: Path, runs: int = 3) -> Path:
    with RunStore(path) as store:
        exp = store.add_experiment("exp", "wl", "/spec.toml", "name='exp'", {})
        cfg = store.add_config(exp, "local[1]", "local[1]", 1, None, {"master": "local[1]"})
        for rep in range(runs):
            run = store.start_run(exp, cfg, "wl", rep, False, ["true"], None)
            store.finish_run(run, RunOutcome(status="failed", error="test run"))
    return path


def _report(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app("experiment"), ["experiment", "report", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("1-2-3", "'1-2-3' is not a run id"),
        ("1--2", "'1--2' is not a run id"),
        ("3-", "'3-' is not a run id"),
        ("3-1", "'3-1' is reversed"),
        ("0", "out of range"),
        ("99999999999999999999999", "out of range"),
        ("50-60", "no runs with ids 50 to 60"),
    ],
)
def test_a_bad_or_empty_id_spec_is_one_error_line(tmp_path: Path, spec: str, message: str) -> None:
    store = _store(tmp_path / "runs.sqlite")
    code, output = _report("--store", str(store), "--", spec)
    assert code == 2, output
    assert output.startswith("error: ") and message in output, output
    assert output.count("\n") == 1 and "Traceback" not in output


def test_a_wide_id_range_is_selected_by_its_bounds(tmp_path: Path) -> None:
    with RunStore(_store(tmp_path / "runs.sqlite"), create=False) as db:
        # A list of every id in the range would not fit in memory.
        assert [r.id for r in _select_runs(db, ["1-99999999999"])] == [1, 2, 3]
        assert [r.id for r in _select_runs(db, ["2-3", "1"])] == [1, 2, 3]


@pytest.mark.parametrize("command", [["runs", "list"], ["experiment", "report", "exp"]])
def test_an_empty_file_is_not_made_a_store_by_a_read(tmp_path: Path, command: list[str]) -> None:
    empty = tmp_path / "e.db"
    empty.touch()
    result = CliRunner().invoke(build_app(command[0]), [*command, "--store", str(empty)])
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {empty} is empty, not a run store; name an existing " + (
        "store with --store\n"
    )
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.db"]  # no -wal, no -shm


def test_an_empty_file_still_becomes_a_store_for_a_command_that_records(tmp_path: Path) -> None:
    empty = tmp_path / "e.db"
    empty.touch()
    with pytest.raises(StoreError, match="is empty"):
        RunStore(empty, create=False)
    with RunStore(empty) as store:
        assert store.runs() == []
