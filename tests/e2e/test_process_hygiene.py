"""Workloads die with perfmodel, orphans are reported, and outputs appear whole or not at all.

These run perfmodel for real as a separate process and ``kill -9`` it: nothing short of
that shows what a crash leaves behind.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from perfmodel.errors import PerfmodelError
from perfmodel.profile.record.children import REAPER_MARK
from perfmodel.report import flame, render_to_file, renderer
from tests.cli_runner import invoke_cli
from tests.conftest import REPO
from tests.process_helpers import gone

CLI = [sys.executable, "-c", "from perfmodel.cli import main; main()"]
WAIT_S = 60.0


def _env(state: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PERFMODEL_STATE_DIR": str(state)}


def _find(marker: str, parent: psutil.Process) -> psutil.Process:
    """The workload process (``marker`` is one of its arguments) under ``parent``. Not a
    child perfmodel has forked but not yet turned into the workload (``exec``): until then
    it shows perfmodel's own command line, which ends with the workload's, and has not yet
    taken its own process group."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for proc in parent.children(recursive=True):
            try:
                cmdline = proc.cmdline()
                if marker in cmdline and CLI[-1] not in cmdline:
                    return proc
            except psutil.Error:
                continue
        assert parent.is_running(), "perfmodel ended before starting the workload"
        time.sleep(0.1)
    raise AssertionError(f"no workload {marker!r} appeared within {WAIT_S:.0f} s")


def _kill_9(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_the_workload_of_record_dies_with_a_killed_perfmodel(tmp_path: Path) -> None:
    marker = "import time; time.sleep(301)"
    terminal, terminal_side = pty.openpty()  # perfmodel runs from a terminal
    perfmodel = subprocess.Popen(
        [*CLI, "record", "--out", str(tmp_path / "b"), "--no-jfr", "--no-pyspy", "--"]
        + [sys.executable, "-c", marker],
        env=_env(tmp_path / "state"),
        stdin=terminal_side,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(terminal_side)
    workload = _find(marker, psutil.Process(perfmodel.pid))
    assert os.getpgid(workload.pid) == workload.pid  # a process group of its own
    # ... so it must not read the terminal: the kernel would stop it there, unseen.
    assert os.readlink(f"/proc/{workload.pid}/fd/0") == os.devnull
    os.close(terminal)
    _kill_9(perfmodel)
    assert gone(workload), "the workload outlived perfmodel"
    assert not (tmp_path / "b").exists()  # no half-written bundle


def test_the_workload_of_experiment_run_dies_with_a_killed_perfmodel(tmp_path: Path) -> None:
    marker = "import time; time.sleep(302)"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "sleepy"\n'
        f'command = ["{sys.executable}", "-c", "{marker}"]\n'
        "[record]\njfr = false\npyspy = false\n"
    )
    perfmodel = subprocess.Popen(
        [*CLI, "experiment", "run", str(spec), "--store", str(tmp_path / "runs.db")],
        env=_env(tmp_path / "state"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workload = _find(marker, psutil.Process(perfmodel.pid))
    _kill_9(perfmodel)
    assert gone(workload), "the workload outlived perfmodel"


def test_a_later_run_reports_what_a_killed_perfmodel_left_running(tmp_path: Path) -> None:
    # The shell dies with perfmodel; the job it put in the background is killed by the
    # workload's reaper. With the reaper killed too (kill -9 of both), the job outlives
    # perfmodel, so it must be reported.
    state = tmp_path / "state"
    marker = "import time; time.sleep(303)"
    shell = f"{sys.executable} -c '{marker}' & wait"
    perfmodel = subprocess.Popen(
        [*CLI, "record", "--out", str(tmp_path / "b1"), "--no-jfr", "--no-pyspy", "--"]
        + ["sh", "-c", shell],
        env=_env(state),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    orphan = _find(marker, psutil.Process(perfmodel.pid))
    reaper = _find(REAPER_MARK, psutil.Process(perfmodel.pid))
    reaper.kill()
    assert gone(reaper)  # a zombie until perfmodel, its parent, is gone
    _kill_9(perfmodel)
    try:
        later = subprocess.run(
            [*CLI, "record", "--out", str(tmp_path / "b2"), "--no-jfr", "--no-pyspy", "--"]
            + ["true"],
            env=_env(state),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert later.returncode == 0, later.stderr
        assert f"process {orphan.pid} " in later.stderr and "still running" in later.stderr
        assert f"kill -- -{os.getpgid(orphan.pid)}" in later.stderr
        spec = tmp_path / "quick.toml"
        spec.write_text(
            'name = "quick"\ncommand = ["true"]\n[record]\njfr = false\npyspy = false\n'
        )
        study = subprocess.run(
            [*CLI, "experiment", "run", str(spec), "--store", str(tmp_path / "runs.db")],
            env=_env(state),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert study.returncode == 0, study.stderr
        assert f"process {orphan.pid} " in study.stderr and "still running" in study.stderr
    finally:
        orphan.kill()
    assert gone(orphan)
    again = subprocess.run(
        [*CLI, "record", "--out", str(tmp_path / "b3"), "--no-jfr", "--no-pyspy", "--", "true"],
        env=_env(state),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "still running" not in again.stderr  # the note of the finished workload is gone


def test_a_command_that_cannot_start_leaves_nothing_and_a_retry_works(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    failed = invoke_cli(
        ["record", "--out", str(out), "--no-jfr", "--no-pyspy", "--", "/no-such-cmd"]
    )
    assert failed.exit_code == 2 or isinstance(failed.exception, PerfmodelError), failed.output
    assert not out.exists() and list(tmp_path.iterdir()) == []
    retry = invoke_cli(["record", "--out", str(out), "--no-jfr", "--no-pyspy", "--", "true"])
    assert retry.exit_code == 0, retry.output
    assert (out / "manifest.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]


def test_a_failed_flame_export_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def export(stacks: dict[str, dict[tuple[str, ...], int]]) -> list[Path]:
        """What `perfmodel flame` writes: collapsed stacks, then speedscope's JSON."""
        text, scope = renderer("text"), renderer("speedscope")
        return [
            render_to_file(
                tmp_path / "all.collapsed", lambda f: text.stacks(stacks, f, name="all")
            ),
            render_to_file(
                tmp_path / "all.speedscope.json", lambda f: scope.stacks(stacks, f, name="all")
            ),
        ]

    folded, scope = export({"p": {("main", "work"): 3}})
    before = scope.read_bytes()

    def broken(*_args: object) -> dict[str, object]:
        raise OSError("disk full")

    monkeypatch.setattr(flame, "speedscope", broken)
    with pytest.raises(OSError):
        export({"p": {("other",): 1}})
    assert scope.read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([folded.name, scope.name])
