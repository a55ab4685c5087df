"""When `perfmodel record` considers a JVM done: gone, or a zombie with no thread running."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from perfmodel.profile.record.run import _has_exited, _pidfd, _sleep_unless_exit, _wait_for_exit

# The main thread ends (pthread_exit) while another thread goes on for a while, as Java's
# launcher thread may: the process shows as a zombie, yet it is still running.
LEADER_ENDS_FIRST = """
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(1.5,)).start()
ctypes.CDLL(None).pthread_exit(None)
"""


def test_a_zombie_has_exited_and_a_running_process_has_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    proc = psutil.Process(child.pid)
    deadline = time.monotonic() + 20
    while proc.status() != psutil.STATUS_ZOMBIE:  # ended, not reaped: nobody waited for it
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert _has_exited(proc)
    assert not _has_exited(psutil.Process())
    child.wait()
    assert _has_exited(proc)  # gone
    assert _wait_for_exit([proc], 1.0) == []


def test_a_zombie_leader_with_a_running_thread_is_still_running() -> None:
    child = subprocess.Popen([sys.executable, "-c", LEADER_ENDS_FIRST])
    proc = psutil.Process(child.pid)
    deadline = time.monotonic() + 20
    while proc.status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not _has_exited(proc)
    assert _wait_for_exit([proc], 0.1) == [proc]
    assert _wait_for_exit([proc], 20.0) == []
    assert child.poll() is None or child.returncode == 0  # left for its parent to reap
    child.wait()


def test_the_wait_between_polls_ends_when_the_command_exits() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    pidfd = _pidfd(child.pid)
    if pidfd is None:
        child.wait()
        pytest.skip("no pidfd_open on this kernel: record sleeps whole poll periods")
    start = time.monotonic()
    _sleep_unless_exit(pidfd, 30.0)
    assert time.monotonic() - start < 10.0
    os.close(pidfd)
    assert child.wait(timeout=5) == 0
    _sleep_unless_exit(None, 0.01)
