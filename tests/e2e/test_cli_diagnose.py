"""`perfmodel diagnose` as a user runs it: real logs, bad inputs, JSON schema."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from perfmodel.state import last_profile
from tests.cli_runner import invoke_cli
from tests.conftest import EXAMPLE_LOG, REPO, shared_eventlogs
from tests.e2e.test_golden_diagnosis import GOLDEN, comparable, differences

REQUIRED_KEYS = {
    "app_id",
    "spark_version",
    "duration_s",
    "complete",
    "jobs",
    "stages",
    "tasks",
    "failed_tasks",
    "executors",
    "sql_executions",
    "critical_path",
    "warnings",
}


def run(*args: str) -> tuple[int, str, str]:
    result = invoke_cli(args)
    return result.exit_code, result.stdout, result.stderr


def test_diagnose_example_terminal_output() -> None:
    code, out, _ = run("diagnose", str(EXAMPLE_LOG))
    assert code == 0, out
    assert "perfmodel-example-etl" in out
    assert "Findings" in out
    assert "Critical path" in out
    remembered = last_profile()
    assert remembered is not None and remembered.path == str(EXAMPLE_LOG.resolve())


def test_diagnose_json_schema() -> None:
    code, out, _ = run("diagnose", str(EXAMPLE_LOG), "--json")
    assert code == 0
    data = json.loads(out)
    assert REQUIRED_KEYS <= data.keys()
    assert data["complete"] is True
    assert data["spark_version"].startswith("4.")
    stage = data["stages"][0]
    assert {"stage_id", "attempt", "num_tasks", "duration_s", "decomposition"} <= stage.keys()
    assert set(stage["decomposition"]) == {
        "cpu",
        "gc",
        "network",
        "disk",
        "scheduling",
        "unattributed",
    }
    assert isinstance(data["critical_path"], list) and data["critical_path"]


def _bad(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _assert_clean_error(path: Path) -> str:
    code, out, err = run("diagnose", str(path))
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    assert "error:" in err
    return err


def test_empty_file(tmp_path: Path) -> None:
    err = _assert_clean_error(_bad(tmp_path, "empty", b""))
    assert "empty" in err


def test_binary_garbage(tmp_path: Path) -> None:
    rng = random.Random(1)
    data = bytes(rng.randrange(256) for _ in range(200_000))
    _assert_clean_error(_bad(tmp_path, "garbage.bin", data))


def test_text_that_is_not_an_event_log(tmp_path: Path) -> None:
    text = "\n".join(f"2024-01-01 INFO line {i} of some application log" for i in range(500))
    err = _assert_clean_error(_bad(tmp_path, "app.log", text.encode()))
    assert "not a Spark event log" in err


def test_wrong_codec_suffix(tmp_path: Path) -> None:
    plain = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n'
    _assert_clean_error(_bad(tmp_path, "log.lz4", os.urandom(5000)))
    # Plain JSON wrongly named .zstd is still read: the content is sniffed.
    code, _, _ = run("diagnose", str(_bad(tmp_path, "plain.zstd", plain)))
    assert code == 0


def test_missing_path(tmp_path: Path) -> None:
    _assert_clean_error(tmp_path / "nope")


def test_corrupt_line_is_reported_and_rest_analysed(tmp_path: Path) -> None:
    raw = zstandard.ZstdDecompressor().stream_reader(EXAMPLE_LOG.open("rb")).read()
    lines = raw.splitlines()
    victim = len(lines) // 2
    lines[victim] = lines[victim][: len(lines[victim]) // 2]  # cut mid-JSON
    path = _bad(tmp_path, "corrupt", b"\n".join(lines) + b"\n")
    code, out, _ = run("diagnose", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert any(p["line"] == victim + 1 and p["file"] == str(path) for p in data["problems"])
    assert data["complete"] is True


def test_truncated_compressed_log(tmp_path: Path) -> None:
    data = EXAMPLE_LOG.read_bytes()
    path = _bad(tmp_path, "cut.zstd", data[: len(data) // 2])
    code, out, _ = run("diagnose", str(path), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["complete"] is False
    assert result["tasks"] > 0
    assert any("did not finish" in w for w in result["warnings"])


CONSOLE_SCRIPT_LOGS = (
    "example_spark_event_log.txt",
    "local-1776286786993.zstd",
    "eventlog_v2_local-1623876083964",
    "truncated_eventlog.inprogress",
)
"""A log of each kind a user passes (plain, zstd, a rolling directory, one still being
written). Every shared log's diagnosis is compared with its golden file in the test's own
process (tests/e2e/test_golden_diagnosis.py): a process of its own costs a second of CPU."""


@pytest.mark.parametrize("name", CONSOLE_SCRIPT_LOGS)
def test_the_console_script_diagnoses_each_kind_of_log(name: str) -> None:
    """The installed console script, as a user runs it, prints the golden diagnosis."""
    log = shared_eventlogs() / name
    exe = Path(sys.executable).with_name("perfmodel")
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run(
        [str(exe), "diagnose", str(log), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert REQUIRED_KEYS <= json.loads(proc.stdout).keys()
    want = json.loads((GOLDEN / f"{name}.json").read_text())
    diffs = differences(want, comparable(proc.stdout, log))
    assert not diffs, "\n".join(diffs[:40])


def test_non_standard_header_is_skipped_and_reported(tmp_path: Path) -> None:
    """Vendor logs (and Spark 1.2's metadata block) put non-event lines before the events."""
    raw = zstandard.ZstdDecompressor().stream_reader(EXAMPLE_LOG.open("rb")).read()
    header = b"SPARK_VERSION 4.3.0\nCOMPRESSION_CODEC none\n=== LOG_HEADER_END ===\n"
    path = _bad(tmp_path, "with-header", header + raw)
    code, out, _ = run("diagnose", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["complete"] is True
    assert any("header" in p["message"] for p in data["problems"])


def test_help_explains_inputs() -> None:
    code, out, _ = run("diagnose", "--help")
    assert code == 0
    assert "rolling" in out and "--json" in out


def test_cut_task_start_line_is_reported(tmp_path: Path) -> None:
    """Task starts are read lazily; a damaged one must still be reported, not skipped."""
    raw = zstandard.ZstdDecompressor().stream_reader(EXAMPLE_LOG.open("rb")).read()
    lines = raw.splitlines()
    victim = next(i for i, line in enumerate(lines) if b'"SparkListenerTaskStart"' in line[:40])
    lines[victim] = lines[victim][: len(lines[victim]) * 2 // 3]
    path = _bad(tmp_path, "cut-start", b"\n".join(lines) + b"\n")
    code, out, _ = run("diagnose", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert any(p["line"] == victim + 1 for p in data["problems"])


def test_python_ipc_waits_are_not_counted_as_io() -> None:
    from perfmodel.embed.stage_inference import waits_on_python_worker

    jvm_waiting = (
        "java.lang.Thread.run",
        "org.apache.spark.api.python.BasePythonRunner$ReaderInputStream.read",
        "sun.nio.ch.EPoll.wait",
    )
    assert waits_on_python_worker(jvm_waiting)
    reading_a_file = ("java.lang.Thread.run", "java.io.FileInputStream.readBytes")
    assert not waits_on_python_worker(reading_a_file)
    python_compute = (
        "org.apache.spark.api.python.PythonRunner.compute",
        "java.util.zip.CRC32.update",
    )
    assert not waits_on_python_worker(python_compute)
