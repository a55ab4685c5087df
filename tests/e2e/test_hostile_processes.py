"""Issue 42, class 8: no process outlives a perfmodel killed with ``kill -9``.

Each test runs the real CLI as a separate process, waits until the processes it starts are
up, kills it with SIGKILL and checks that every one of them is gone: the fleet's process
pool (its server, resource tracker and workers), the workload of ``experiment run`` with a
descendant that is not its direct child (a shell's background job; a real PySpark driver,
started by ``spark-submit``'s JVM), and the spec's prepare step.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import REPO

CLI = [sys.executable, "-c", "from perfmodel.cli import main; main()"]
WAIT_S = 120.0
LOG = REPO / "examples" / "eventlogs" / "etl-local2.zstd"


def _env(state: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PERFMODEL_STATE_DIR": str(state)}


def _start(args: list[str], state: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, *args],
        env=_env(state),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _descendants(root: subprocess.Popen[bytes]) -> list[psutil.Process]:
    try:
        return psutil.Process(root.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _wait_for(root: subprocess.Popen[bytes], marker: str, count: int = 1) -> list[psutil.Process]:
    """At least ``count`` descendants of ``root`` whose command line holds ``marker``."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = [proc for proc in _descendants(root) if marker in _cmdline(proc)]
        if len(found) >= count:
            return found
        assert root.poll() is None, "perfmodel ended before starting what the test waits for"
        time.sleep(0.2)
    raise AssertionError(f"no {count} processes {marker!r} within {WAIT_S:.0f} s")


def _alive(procs: list[psutil.Process], within_s: float = 30.0) -> list[psutil.Process]:
    """Those of ``procs`` still running ``within_s`` after now (zombies count as gone)."""
    deadline = time.monotonic() + within_s
    while True:
        alive = []
        for proc in procs:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
            except psutil.NoSuchProcess:
                continue
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def _kill_9_and_check(root: subprocess.Popen[bytes], procs: list[psutil.Process]) -> None:
    """Kill ``root`` with SIGKILL; every one of ``procs`` (the workload reaper included)
    must be gone soon after."""
    root.send_signal(signal.SIGKILL)
    root.wait(timeout=30)
    alive = _alive(procs)
    for proc in alive:  # clean up before failing
        proc.kill()
    assert not alive, f"outlived a killed perfmodel: {[(p.pid, p.name()) for p in alive]}"


def test_a_killed_fleet_leaves_no_pool_behind(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(120):  # enough work that the pool is busy when perfmodel is killed
        shutil.copy(LOG, logs / f"app-{i:03d}.zstd")
    root = _start(["fleet", str(logs), "--out", str(tmp_path / "out"), "--jobs", "2"], tmp_path)
    # The pool's server, its resource tracker and two workers.
    pool = _wait_for(root, "multiprocessing", count=4)
    time.sleep(1.0)  # the workers are inside a log now
    _kill_9_and_check(root, pool + _descendants(root))


def test_a_killed_experiment_leaves_no_descendant_of_its_workload(tmp_path: Path) -> None:
    # The shell (the workload's own process) dies by its parent-death signal; its background
    # job is a descendant that signal never reaches, as a PySpark driver under spark-submit's
    # JVM is.
    marker = "import time; time.sleep(305)"
    spec = tmp_path / "bg.toml"
    spec.write_text(
        'name = "bg"\n'
        f'command = ["sh", "-c", "{sys.executable} -c \'{marker}\' & wait"]\n'
        "[record]\njfr = false\npyspy = false\n"
    )
    root = _start(["experiment", "run", str(spec), "--store", str(tmp_path / "r.db")], tmp_path)
    job = _wait_for(root, marker)
    _kill_9_and_check(root, job + _descendants(root))


def test_a_killed_experiment_leaves_no_prepare_step(tmp_path: Path) -> None:
    marker = "import time; time.sleep(306)"
    spec = tmp_path / "prep.toml"
    spec.write_text(
        'name = "prep"\n'
        'command = ["true"]\n'
        f'prepare = ["{sys.executable}", "-c", "{marker}"]\n'
        f'data_dir = "{tmp_path / "data"}"\n'
        "[record]\njfr = false\npyspy = false\n"
    )
    root = _start(["experiment", "run", str(spec), "--store", str(tmp_path / "r.db")], tmp_path)
    step = _wait_for(root, marker)
    _kill_9_and_check(root, step + _descendants(root))


def test_a_killed_experiment_leaves_no_pyspark_driver(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        pytest.skip("no JDK: PySpark cannot start")
    script = tmp_path / "sleepy_driver.py"
    script.write_text(
        "import time\n"
        "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        "spark.range(10).count()\n"
        "time.sleep(300)\n"
    )
    spec = tmp_path / "sleepy.toml"
    spec.write_text(
        'name = "sleepy"\nscript = "sleepy_driver.py"\n'
        "[record]\njfr = false\npyspy = false\n"
        '[grid]\nmaster = ["local[1]"]\n'
    )
    root = _start(
        [
            "experiment",
            "run",
            str(spec),
            "--store",
            str(tmp_path / "r.db"),
            "--bundles",
            str(tmp_path / "b"),
        ],
        tmp_path,
    )
    driver = _wait_for(root, "sleepy_driver.py", count=2)  # the JVM and the Python driver
    time.sleep(2.0)
    _kill_9_and_check(root, driver + _descendants(root))
