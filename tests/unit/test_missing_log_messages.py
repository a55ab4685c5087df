"""What `perfmodel diagnose` says about a path that does not exist and an attempt a log
does not hold: no suggestion to scan a directory without logs (``/``), and the log's own
application id, not its file name taken for one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfmodel.errors import EventLogNotFoundError
from perfmodel.profile.eventlog_paths import resolve_event_log
from tests.cli_runner import invoke_cli
from tests.conftest import EXAMPLE_LOG, TEST_DATA

WORDCOUNT = TEST_DATA / "eventlogs" / "wordcount.lz4"


def _message(path: Path, attempt: str | None = None) -> str:
    with pytest.raises(EventLogNotFoundError) as info:
        resolve_event_log(path, attempt)
    return str(info.value)


def test_a_path_under_the_root_does_not_suggest_scanning_the_root() -> None:
    missing = Path("/perfmodel-no-such-log-here")
    assert not missing.exists()
    text = _message(missing)
    assert text == f"No event log at {missing}: it does not exist."
    assert "Point perfmodel" not in text


def test_the_cli_says_the_path_does_not_exist_in_one_line() -> None:
    result = invoke_cli(["diagnose", "/perfmodel-no-such-log-here"])
    assert result.exit_code == 2
    said = "error: No event log at /perfmodel-no-such-log-here: it does not exist.\n"
    assert result.stderr == said


def test_a_directory_of_other_files_is_not_suggested(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log\n")
    text = _message(tmp_path / "zzzz")
    assert text.endswith("it does not exist.") and "holds event logs" not in text


def test_a_directory_holding_logs_is_suggested(tmp_path: Path) -> None:
    shutil.copyfile(WORDCOUNT, tmp_path / "local-1.lz4")
    text = _message(tmp_path / "zzzz")
    assert text.endswith(f"{tmp_path} holds event logs: point perfmodel at it to list them.")


def test_missing_attempt_of_a_file_names_the_logs_application() -> None:
    text = _message(EXAMPLE_LOG, attempt="1")
    assert text == (
        "etl-local2.zstd holds no attempt 1 of application local-1795356373666 "
        "(perfmodel-example-etl); attempts in it: none (its name carries no attempt id)."
    )


def test_missing_attempt_lists_the_attempts_beside_the_file(tmp_path: Path) -> None:
    for attempt in (1, 2):
        shutil.copyfile(WORDCOUNT, tmp_path / f"application_1_0001_{attempt}.lz4")
    text = _message(tmp_path / "application_1_0001_1.lz4", attempt="3")
    assert text.startswith("application_1_0001_1.lz4 holds no attempt 3 of application ")
    assert text.endswith("; attempts in it: 1; other attempts beside it: 2.")
    assert "application_1_0001 " not in text  # the log's own id, not its file's
