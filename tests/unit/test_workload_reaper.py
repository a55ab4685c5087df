"""The workload's reaper (`children.group_dies_with_us`): armed before the workload starts,
it kills the workload's group when perfmodel dies, leaves it alone when perfmodel lives, and
ends by itself when no workload was started."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from perfmodel.profile.record import children
from tests.process_helpers import gone

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups and prctl: Linux")

# A workload that gives up its parent-death signal, so that only the reaper can stop it once
# its parent is gone, then says it is ready and waits.
_STUBBORN = """
import ctypes, pathlib, sys, time
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
pathlib.Path(sys.argv[1]).write_text("ready")
time.sleep(311)
"""

# A stand-in for perfmodel: starts the workload under a reaper and, asked to, dies by SIGKILL
# the moment the workload is ready (no `finally` runs, as with kill -9).
_PARENT = """
import os, signal, subprocess, sys, time, pathlib
from perfmodel.profile.record import children
workload, ready, die = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3] == "die"
with children.group_dies_with_us() as preexec:
    child = subprocess.Popen(
        [sys.executable, "-c", workload, str(ready)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=preexec,
    )
    print(child.pid, flush=True)
    while not ready.exists():
        time.sleep(0.01)
    if die:
        os.kill(os.getpid(), signal.SIGKILL)
"""


def _parent(tmp_path: Path, how: str) -> tuple[subprocess.CompletedProcess[str], int]:
    parent = subprocess.run(
        [sys.executable, "-c", _PARENT, _STUBBORN, str(tmp_path / "ready"), how],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    return parent, int(parent.stdout.split()[0])


def test_a_workload_outliving_its_parent_death_signal_is_killed_by_the_reaper(
    tmp_path: Path,
) -> None:
    parent, pid = _parent(tmp_path, "die")
    assert parent.returncode == -9, parent.stderr
    try:
        workload = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return  # killed, and already reaped by init
    ended = gone(workload)
    if not ended:
        workload.kill()  # not left sleeping for minutes
    assert ended, "the workload outlived its killed parent"


def test_a_parent_that_lives_leaves_the_workload_alone(tmp_path: Path) -> None:
    parent, pid = _parent(tmp_path, "live")
    assert parent.returncode == 0, parent.stderr
    workload = psutil.Process(pid)
    time.sleep(0.5)  # a reaper that wrongly fired would have killed it by now
    try:
        assert workload.status() != psutil.STATUS_ZOMBIE
    finally:
        workload.kill()
    assert gone(workload)


def test_no_workload_started_ends_the_reaper() -> None:
    before = {p.pid for p in psutil.Process().children()}
    with pytest.raises(FileNotFoundError), children.group_dies_with_us() as preexec:
        subprocess.Popen(["/nonexistent/perfmodel-test-command"], preexec_fn=preexec)
    # The block's exit waited for the reaper: no child of ours is left.
    assert {p.pid for p in psutil.Process().children()} <= before
