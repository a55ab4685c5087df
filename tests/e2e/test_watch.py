"""`perfmodel watch` on logs that grow while it reads them.

* A real PySpark job writes its (zstd) event log while `watch` follows it: every stage
  that completes is reported once, the first report arrives while the job still runs,
  each byte of the log is read once, and the final diagnosis is `diagnose`'s on the
  finished log.
* Real logs from ../shared copied into place piece by piece (a rolling directory part by
  part, a zstd file in cuts that split frames), as Spark would write them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli_runner import invoke_cli
from tests.conftest import SHARED_EVENTLOGS
from tests.e2e.conftest import need_history_server_parts, running_history_server

pytestmark = pytest.mark.slow
JOB = Path(__file__).with_name("spark_job_for_watch.py")
CLI = [sys.executable, "-c", "from perfmodel.cli import main; main()"]


def _diagnose(path: Path) -> dict:
    result = invoke_cli(["diagnose", "--json", str(path)])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.split("\n") if line.strip()]


def _completed_stages(diagnosis: dict) -> list[tuple[int, int]]:
    return sorted(
        (s["stage_id"], s["attempt"])
        for s in diagnosis["stages"]
        if s["status"] in ("COMPLETE", "FAILED")
    )


def test_watch_follows_a_running_pyspark_job(tmp_path: Path) -> None:
    log_dir = tmp_path / "events"
    log_dir.mkdir()
    errors = (tmp_path / "watch.err").open("w+")
    watcher = subprocess.Popen(
        [*CLI, "watch", str(log_dir), "--json", "--interval", "0.3", "--timeout", "240"],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
    )
    job = subprocess.Popen(
        [sys.executable, str(JOB), str(log_dir), "single", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    assert watcher.stdout is not None
    first = watcher.stdout.readline()  # blocks until the first stage is reported
    job_running_at_first_report = job.poll() is None
    # Read on through the same buffered stream: `communicate` reads the pipe beneath it and
    # would miss the lines `readline` had already buffered.
    rest = watcher.stdout.read()
    watcher.wait(timeout=300)
    assert job.wait(timeout=300) == 0, job.stderr.read() if job.stderr else ""
    errors.seek(0)
    assert watcher.returncode == 0, errors.read()
    lines = _lines(first + rest)
    stages, end = lines[:-1], lines[-1]
    assert job_running_at_first_report, "the first stage was reported only after the job ended"
    assert end["event"] == "diagnosis" and end["stopped"] is None
    (finished,) = list(log_dir.iterdir())
    assert not finished.name.endswith(".inprogress")
    assert end["bytes_read"] == finished.stat().st_size  # every byte read once
    expected = _diagnose(log_dir)
    assert end["diagnosis"] == expected
    reported = [(s["stage_id"], s["attempt"]) for s in stages]
    assert sorted(reported) == _completed_stages(expected)
    assert len(set(reported)) == len(reported)
    # The job's one slow task per map stage (3 s) is skew where the diagnosis' own rule
    # (longest ≥ 3× the median and ≥ 1 s) says so: the same stages, and some.
    skewed = {s["stage_id"] for s in stages if any(f["kind"] == "skew" for f in s["findings"])}
    by_rule = {
        s["stage_id"]
        for s in expected["stages"]
        if s["skew"] is not None and s["skew"] >= 3 and s["max_task_s"] >= 1
    }
    assert skewed == by_rule and skewed


def _copy_slowly(steps: list[tuple[Path, bytes | None]], delay_s: float) -> threading.Thread:
    """Write ``steps`` one after another (``None``: the path is an in-progress name to
    rename to the path without ``.inprogress``), as a writer would."""

    def write() -> None:
        for path, data in steps:
            time.sleep(delay_s)
            if data is None:
                os.replace(path, path.with_name(path.name.removesuffix(".inprogress")))
                continue
            with open(path, "ab") as f:
                f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _watch(path: Path) -> tuple[list[dict], dict]:
    result = invoke_cli(["watch", str(path), "--json", "--interval", "0.05", "--timeout", "60"])
    assert result.exit_code == 0, result.stderr
    lines = _lines(result.stdout)
    return lines[:-1], lines[-1]


def test_watch_reads_a_zstd_file_appended_in_cuts(tmp_path: Path) -> None:
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip("../shared is absent")
    data = (SHARED_EVENTLOGS / "local-1776286786993.zstd").read_bytes()
    growing = tmp_path / "local-1776286786993.zstd.inprogress"
    growing.write_bytes(data[:1000])
    cuts = [1000, 5000, 40_000, 40_001, 120_000, len(data)]
    steps = [(growing, data[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    writer = _copy_slowly([*steps, (growing, None)], 0.15)
    stages, end = _watch(growing)
    writer.join()
    final = tmp_path / "local-1776286786993.zstd"
    expected = _diagnose(final)
    assert end["diagnosis"] == expected and end["bytes_read"] == len(data)
    assert sorted((s["stage_id"], s["attempt"]) for s in stages) == _completed_stages(expected)


def test_watch_follows_rolling_parts(tmp_path: Path) -> None:
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip("../shared is absent")
    src = SHARED_EVENTLOGS / "eventlog_v2_local-1623876083964"
    dest = tmp_path / src.name
    dest.mkdir()
    parts = sorted(p for p in src.iterdir() if p.name.startswith("events_"))
    status = dest / "appstatus_local-1623876083964.inprogress"
    status.touch()
    first = parts[0].read_bytes()
    (dest / parts[0].name).write_bytes(first[: len(first) // 3])
    steps: list[tuple[Path, bytes | None]] = [(dest / parts[0].name, first[len(first) // 3 :])]
    for p in parts[1:]:
        steps.append((dest / p.name, p.read_bytes()))
    writer = _copy_slowly([*steps, (status, None)], 0.2)
    stages, end = _watch(dest)
    writer.join()
    expected = _diagnose(dest)
    assert end["diagnosis"] == expected
    assert end["bytes_read"] == sum(p.stat().st_size for p in parts)
    assert sorted((s["stage_id"], s["attempt"]) for s in stages) == _completed_stages(expected)


def test_watch_times_out_with_what_it_read(tmp_path: Path) -> None:
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip("../shared is absent")
    data = (SHARED_EVENTLOGS / "application_1489705648216_1600").read_bytes()
    growing = tmp_path / "application_1489705648216_1600.inprogress"
    growing.write_bytes(data[: len(data) // 2])
    result = invoke_cli(["watch", str(growing), "--json", "--interval", "0.05", "--timeout", "0.5"])
    assert result.exit_code == 3
    end = _lines(result.stdout)[-1]
    assert end["stopped"] == "timeout" and end["diagnosis"]["complete"] is False
    assert "did not grow for 0.5 s" in result.stderr


def test_watch_of_a_missing_log_is_one_error(tmp_path: Path) -> None:
    result = invoke_cli(["watch", str(tmp_path / "nope"), "--interval", "0.05", "--timeout", "0.2"])
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_watch_follows_a_running_history_server_application(tmp_path: Path) -> None:
    """A History Server serving a log that is still being written (a real log appended in
    cuts as ``.inprogress``, then renamed), followed through the server's REST API."""
    need_history_server_parts()
    name = "application_1489705648216_1600"
    data = (SHARED_EVENTLOGS / name).read_bytes()
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    growing = log_dir / f"{name}.inprogress"
    growing.write_bytes(data[: len(data) // 4])
    with running_history_server(log_dir, tmp_path / "out", 1) as url:
        cuts = [len(data) // 4, len(data) // 2, 3 * len(data) // 4, len(data)]
        steps = [(growing, data[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
        writer = _copy_slowly([*steps, (growing, None)], 1.5)
        result = invoke_cli(
            ["watch", f"{url}/history/{name}", "--json", "--interval", "0.5", "--timeout", "90"],
        )
        writer.join()
    assert result.exit_code == 0, result.stderr
    lines = _lines(result.stdout)
    stages, end = lines[:-1], lines[-1]
    expected = _diagnose(log_dir / name)
    got = end["diagnosis"]
    assert got.pop("source") == f"{url}/history/{name}"
    expected.pop("source")
    assert got == expected
    assert sorted((s["stage_id"], s["attempt"]) for s in stages) == _completed_stages(expected)
