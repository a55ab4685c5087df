"""Listing a process tree incrementally: children and grandchildren that come and go."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from perfmodel.profile.record.proctree import ProcessTree

# A parent that starts a child, which starts a grandchild; each lives while a file exists.
NESTED = """
import os, subprocess, sys, time
depth = int(sys.argv[1])
if depth:
    child = subprocess.Popen([sys.executable, __file__, str(depth - 1), sys.argv[2]])
while os.path.exists(sys.argv[2]):
    time.sleep(0.02)
if depth:
    child.wait()
"""


def _wait_for(predicate: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_tree_lists_descendants_in_order_and_drops_the_exited(tmp_path: Path) -> None:
    script = tmp_path / "nested.py"
    script.write_text(NESTED)
    flag = tmp_path / "alive"
    flag.write_text("")
    root = subprocess.Popen([sys.executable, str(script), "2", str(flag)])
    tree = ProcessTree(root.pid)
    try:
        _wait_for(lambda: len(tree.processes()) == 3)
        procs = tree.processes()
        assert procs[0].pid == root.pid
        assert procs[1].ppid() == root.pid and procs[2].ppid() == procs[1].pid
        # The same handles come back, so callers can keep state per process.
        assert [id(p) for p in tree.processes()] == [id(p) for p in procs]
        # Unrelated processes (this test's own) are not in the tree.
        assert os.getpid() not in {p.pid for p in procs}
        # psutil's full walk agrees.
        full = {p.pid for p in psutil.Process(root.pid).children(recursive=True)}
        assert {p.pid for p in procs[1:]} == full
    finally:
        flag.unlink()
        root.wait(timeout=30)
    assert tree.processes() == []


def test_a_tree_of_a_pid_that_is_gone_is_empty() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert ProcessTree(proc.pid).processes() == []
