"""The samplers' CPU accounting: thread names and counters read from /proc, and the totals."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from perfmodel.profile.record.cost import (
    JvmRecordingThreads,
    RecordingCost,
    thread_cpu_s,
    usable_cores,
)

TICKS = os.sysconf("SC_CLK_TCK")


def _thread(proc: Path, pid: int, tid: int, name: str, utime: int, stime: int) -> None:
    task = proc / str(pid) / "task" / str(tid)
    task.mkdir(parents=True, exist_ok=True)
    (task / "comm").write_text(name[:15] + "\n")
    # /proc/<pid>/task/<tid>/stat: fields 14 and 15 are utime and stime in clock ticks.
    rest = ["S", *["0"] * 10, str(utime), str(stime), *["0"] * 30]
    (task / "stat").write_text(f"{tid} ({name[:15]}) {' '.join(rest)}\n")


def test_cost_totals_share_and_line() -> None:
    cost = RecordingCost(
        command_s=20.0, cores=2, pyspy_cpu_s=0.5, jvm_recording_cpu_s=0.2, perfmodel_cpu_s=0.1
    )
    assert cost.cpu_s == pytest.approx(0.8)
    assert cost.share == pytest.approx(0.8 / 40)
    data = cost.to_dict()
    assert data["share_of_machine"] == pytest.approx(0.02) and data["cpu_s"] == 0.8
    assert "2.0% of 2 cores over 20.0 s" in cost.describe()
    assert RecordingCost(command_s=0.0, cores=2).share == 0.0
    assert "% of" not in RecordingCost(command_s=0.2, cores=2, perfmodel_cpu_s=0.1).describe()


def test_recording_threads_are_found_by_name_and_outlive_their_jvm(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    _thread(proc, 100, 100, "java", 500, 50)
    _thread(proc, 100, 101, "JFR Thread Sampler", 10, 5)
    _thread(proc, 100, 102, "Executor task launch worker-0", 900, 10)
    meter = JvmRecordingThreads(proc)
    meter.poll([100])
    assert meter.cpu_s == pytest.approx(15 / TICKS)
    # A thread that starts later (the plugin's excluder) is found; counters move on.
    _thread(proc, 100, 103, "perfmodel idle-thread excluder", 2, 0)
    _thread(proc, 100, 101, "JFR Thread Sampler", 30, 10)
    meter.poll([100, 999])  # 999: a pid that is gone
    assert meter.cpu_s == pytest.approx(42 / TICKS)
    # The JVM exits: its last values are kept.
    for path in sorted((proc / "100").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    meter.poll([100])
    assert meter.cpu_s == pytest.approx(42 / TICKS)


def test_a_recording_thread_first_seen_under_its_creators_name_is_found_at_the_next_poll(
    tmp_path: Path,
) -> None:
    # A new thread carries its creator's name until the JVM names it; a poll in between once
    # left the plugin's sampler uncounted for a whole run (2026-12-01).
    proc = tmp_path / "proc"
    _thread(proc, 100, 110, "Thread-3", 0, 0)
    _thread(proc, 100, 111, "Thread-3", 300, 10)  # the thread that started it, never renamed
    meter = JvmRecordingThreads(proc)
    meter.poll([100])
    assert meter.cpu_s == 0
    _thread(proc, 100, 110, "perfmodel sampler", 6, 1)
    meter.poll([100])
    assert meter.cpu_s == pytest.approx(7 / TICKS)
    # Named once more only at the poll after it was first seen: a later rename is not looked for.
    _thread(proc, 100, 111, "perfmodel sampler", 400, 10)
    meter.poll([100])
    assert meter.cpu_s == pytest.approx(7 / TICKS)


def test_thread_cpu_of_a_real_thread_with_a_name_holding_parentheses() -> None:
    done = threading.Event()
    burnt = threading.Event()
    tids: list[int] = []

    def burn() -> None:
        tids.append(threading.get_native_id())
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        burnt.set()
        done.wait(10)

    worker = threading.Thread(target=burn, name="burn (x) y")
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not tids and time.monotonic() < deadline:
            time.sleep(0.01)
        path = Path(f"/proc/{os.getpid()}/task/{tids[0]}/comm")
        path.write_text("a) b (c")  # a thread may rename itself to anything
        # Read once the thread has used its 0.2 s of CPU, however long a busy machine took.
        assert burnt.wait(120)
        cpu = thread_cpu_s(os.getpid(), tids[0])
        assert cpu is not None and cpu >= 0.1
    finally:
        done.set()
        worker.join()
    assert thread_cpu_s(os.getpid(), 2**22 + 7) is None
    assert usable_cores() >= 1
