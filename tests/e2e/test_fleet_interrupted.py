"""`perfmodel fleet` stopped by Ctrl-C keeps what it finished: the logs analysed by then are
saved as a finished run saves them, and the same command analyses only the rest, ending with
the tables an uninterrupted run writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from perfmodel.fleet.run import FleetInterrupted, FleetOptions, run_fleet
from tests.cli_runner import invoke_cli
from tests.fleet_helpers import read_tables

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd"
LOGS = 6
STOP_AFTER = 2


def _logs(directory: Path) -> Path:
    directory.mkdir()
    for i in range(LOGS):
        shutil.copy(EXAMPLE, directory / f"app-{i}.zstd")
    return directory


def test_an_interrupted_run_keeps_what_it_finished_and_resumes(tmp_path: Path) -> None:
    logs = _logs(tmp_path / "logs")
    finished: list[str] = []

    def interrupt(ref: object) -> None:  # Ctrl-C, as it reaches the run between two logs
        finished.append(str(ref))
        if len(finished) == STOP_AFTER:
            raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(FleetInterrupted) as stop:
        run_fleet(FleetOptions(inputs=[str(logs)], out=out, jobs=1), on_done=interrupt)
    assert (stop.value.saved, stop.value.total) == (STOP_AFTER, LOGS)
    assert pq.read_table(out / "apps.parquet").num_rows == STOP_AFTER
    assert pq.read_table(out / "_manifest.parquet").num_rows == STOP_AFTER

    resumed = run_fleet(FleetOptions(inputs=[str(logs)], out=out, jobs=1))
    assert len(resumed.analysed) == LOGS - STOP_AFTER and resumed.skipped == STOP_AFTER
    whole = tmp_path / "whole"
    run_fleet(FleetOptions(inputs=[str(logs)], out=whole, jobs=1))
    a, b = read_tables(out), read_tables(whole)
    for name in ("apps", "stages", "findings", "predictions", "errors"):
        assert a[name] == b[name], name


def test_the_command_says_what_it_saved_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(*_args: object, **_kwargs: object) -> None:
        raise FleetInterrupted(3, 10, tmp_path / "out")

    monkeypatch.setattr("perfmodel.fleet.run.run_fleet", stopped)
    logs = _logs(tmp_path / "logs")
    result = invoke_cli(["fleet", str(logs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 130
    assert result.output.strip().splitlines()[-1] == (
        f"interrupted: the 3 of 10 log(s) finished are saved in {tmp_path / 'out'}; the same "
        "command analyses the rest"
    )
