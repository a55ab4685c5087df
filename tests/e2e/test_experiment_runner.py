"""The runner with real processes: a killed workload, a terminated runner, a timeout.

These specs run a plain command (a Python that sleeps) instead of Spark, so they are quick;
the end-to-end Spark path is in test_experiment_e2e.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from perfmodel.experiment.runner import run_experiment
from perfmodel.experiment.spec import load_spec
from perfmodel.runs.store import RunStore

MARKER = "perfmodel-test-sleeper"


def _spec(tmp_path: Path, seconds: int = 120, timeout: int = 600) -> Path:
    path = tmp_path / "sleep.toml"
    path.write_text(
        f"""
name = "sleeper"
command = ["{{python}}", "-c", "import sys, time; time.sleep({seconds})", "{MARKER}"]
timeout_s = {timeout}
[record]
jfr = false
pyspy = false
"""
    )
    return path


def _find_sleeper(deadline: float) -> psutil.Process:
    me = psutil.Process()
    while time.monotonic() < deadline:
        for proc in me.children(recursive=True):
            try:
                if MARKER in proc.cmdline():
                    return proc
            except psutil.Error:
                continue
        time.sleep(0.1)
    raise AssertionError("the workload process never appeared")


def test_a_killed_workload_is_stored_as_failed(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path))
    killed: list[int] = []

    def kill() -> None:
        proc = _find_sleeper(time.monotonic() + 60)
        killed.append(proc.pid)
        proc.kill()

    killer = threading.Thread(target=kill)
    killer.start()
    with RunStore(tmp_path / "s.sqlite") as store:
        (report,) = run_experiment(spec, store, tmp_path / "bundles")
        killer.join()
        assert killed
        run = store.run(report.run_id)
    assert run.status == "failed" and run.exit_code == 128 + signal.SIGKILL
    assert "exited with status 137" in (run.error or "")
    assert run.wall_s is not None and run.ended_at is not None
    assert (tmp_path / "bundles" / "sleeper-e1" / "as-is-r0" / "manifest.json").is_file()


def test_a_timed_out_run_is_killed_and_failed(tmp_path: Path) -> None:
    """Only the workload is killed: what else the calling process runs (here a child in its
    own process group, as multiprocessing's resource tracker is, and one leading a session
    of its own, as a server is) lives on. The runner is a library call too, from a notebook
    or a test."""
    spec = load_spec(_spec(tmp_path, seconds=120, timeout=2))
    sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
    bystanders = [subprocess.Popen(sleep), subprocess.Popen(sleep, start_new_session=True)]
    try:
        with RunStore(tmp_path / "s.sqlite") as store:
            (report,) = run_experiment(spec, store, tmp_path / "bundles")
            run = store.run(report.run_id)
        assert run.status == "failed" and "timed out after 2 s" in (run.error or "")
        assert [b.poll() for b in bystanders] == [None, None]
        left = [p for p in psutil.Process().children(recursive=True) if _is_sleeper(p)]
        assert not [p for p in left if p.status() != psutil.STATUS_ZOMBIE]
    finally:
        for b in bystanders:
            b.kill()
            b.wait()


def _is_sleeper(proc: psutil.Process) -> bool:
    try:
        return MARKER in proc.cmdline()
    except psutil.Error:
        return False


CLI = (
    "import typer; from perfmodel.cli.experiment import register; "
    "app = typer.Typer(); register(app); app()"
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_runner_never_loses_its_run(tmp_path: Path, sig: int) -> None:
    store_path = tmp_path / "s.sqlite"
    runner = subprocess.Popen(
        [sys.executable, "-c", CLI, "experiment", "run", str(_spec(tmp_path))]
        + ["--store", str(store_path)],
        env={**os.environ},
    )
    sleeper = None
    try:
        deadline = time.monotonic() + 60
        while sleeper is None and time.monotonic() < deadline:
            for proc in psutil.Process(runner.pid).children(recursive=True):
                try:
                    if MARKER in proc.cmdline():
                        sleeper = proc
                except psutil.Error:
                    continue
            time.sleep(0.1)
        assert sleeper is not None
        with RunStore(store_path) as store:
            assert [r.status for r in store.runs()] == ["running"]
        runner.send_signal(sig)
        runner.wait(60)
    finally:
        if runner.poll() is None:
            runner.kill()
        if sleeper is not None and sleeper.is_running():
            sleeper.kill()  # SIGKILL orphans the workload; a real user's would be reaped too
    with RunStore(store_path) as store:
        (run,) = store.runs()
    assert run.status == "failed"
    if sig == signal.SIGTERM:
        assert "interrupted" in (run.error or "")
        # The runner stopped its workload on the way out (init reaps the orphaned zombie).
        gone, _ = psutil.wait_procs([sleeper], timeout=10)
        assert gone or sleeper.status() == psutil.STATUS_ZOMBIE
    else:
        assert "runner process died" in (run.error or "")
