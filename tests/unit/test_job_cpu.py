"""The overhead benchmark's CPU split (benchmarks/job_cpu.py), on a /proc laid out by hand."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int, comm: str, cpu_s: float, system_s: float = 0.0, ppid: int = 0) -> str:
    # After the name: state, ppid, pgrp, session, tty, tpgid, flags, 4 fault counters,
    # then utime and stime in clock ticks.
    fields = ["S", str(ppid), *(["0"] * 9), str(round(cpu_s * TICKS)), str(round(system_s * TICKS))]
    return f"{pid} ({comm}) " + " ".join([*fields, "0", "0", "20", "0"]) + "\n"


def _process(
    proc: Path,
    pid: int,
    cmdline: list[str],
    threads: dict[int, tuple[str, float]],
    ppid: int = 0,
):
    root = proc / str(pid)
    (root / "task").mkdir(parents=True, exist_ok=True)
    (root / "cmdline").write_bytes(b"\0".join(a.encode() for a in cmdline) + b"\0")
    cpu = sum(c for _, c in threads.values())
    (root / "stat").write_text(_stat(pid, cmdline[0], cpu, ppid=ppid))
    for tid, (name, cpu) in threads.items():
        (root / "task" / str(tid)).mkdir(exist_ok=True)
        (root / "task" / str(tid) / "comm").write_text(name + "\n")
        (root / "task" / str(tid) / "stat").write_text(_stat(tid, name, cpu))


JVM = ["java", "-cp", "jars/*", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"]


def test_thread_names_group_into_parts(job_cpu: ModuleType) -> None:
    g = job_cpu.thread_group
    assert g("C2 CompilerThre") == g("C1 CompilerThre") == "jit"
    assert g("GC Thread#1") == g("G1 Conc#0") == "gc"
    assert g("Executor task l") == g("Executor task i") == "tasks"
    assert g("Thread-3") == "py4j"
    assert g("JFR Thread Samp") == g("perfmodel idle-") == "recording"
    assert g("dag-scheduler-e") == g("java") == "other jvm"


def test_window_takes_the_polls_at_or_before_each_instant(job_cpu: ModuleType) -> None:
    series = job_cpu.CpuSeries(
        times_ms=[1000.0, 2000.0, 3000.0],
        totals=[{"jit": 1.0, "tasks": 0.0}, {"jit": 2.0, "tasks": 1.0}, {"jit": 4.0, "tasks": 3.0}],
    )
    window = series.window(2500.0, 3000.0)
    assert window["jit"] == pytest.approx(2.0) and window["tasks"] == pytest.approx(2.0)
    assert set(window) == set(job_cpu.GROUPS) and window["gc"] == 0.0
    # Before the first poll nothing was counted yet.
    assert series.window(500.0, 1500.0)["jit"] == pytest.approx(1.0)


def test_watcher_reads_the_jobs_processes_only(job_cpu: ModuleType, tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "meminfo").write_text("not a process\n")
    _process(proc, 100, JVM, {100: ("java", 0.5), 101: ("C2 CompilerThre", 3.0)})
    _process(proc, 102, ["python", "-m", "pyspark.daemon"], {102: ("python", 2.0)})
    _process(proc, 103, ["python", "job.py"], {103: ("python", 9.0)})  # the driver: not counted
    _process(proc, 104, ["bash", "spark-submit"], {104: ("bash", 0.1)})
    watcher = job_cpu.JobCpuWatcher(proc=proc)
    watcher.poll()
    first = watcher.series.totals[-1]
    assert first["jit"] == pytest.approx(3.0)
    assert first["other jvm"] == pytest.approx(0.5)
    assert first["python workers"] == pytest.approx(2.0)
    assert sum(first.values()) == pytest.approx(5.5)

    # The launch script becomes a JVM (same pid), a thread ends, another starts under its
    # creator's name and then takes its own.
    _process(proc, 104, JVM, {104: ("java", 0.2), 105: ("Executor task l", 1.0)})
    _process(proc, 100, JVM, {100: ("java", 0.5), 106: ("java", 0.3)})
    (proc / "100" / "task" / "101" / "comm").unlink()
    (proc / "100" / "task" / "101" / "stat").unlink()
    (proc / "100" / "task" / "101").rmdir()
    watcher.poll()
    (proc / "100" / "task" / "106" / "comm").write_text("JFR Thread Samp\n")
    watcher.poll()
    last = watcher.series.totals[-1]
    assert last["jit"] == pytest.approx(3.0)  # the ended thread's last value is kept
    assert last["tasks"] == pytest.approx(1.0)
    assert last["recording"] == pytest.approx(0.3)
    assert last["other jvm"] == pytest.approx(0.7)
    assert len(watcher.series.times_ms) == 3


def test_watcher_counts_only_the_descendants_of_its_ancestor(
    job_cpu: ModuleType, tmp_path: Path
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    _process(proc, 50, ["python", "record_overhead.py"], {50: ("python", 1.0)}, ppid=1)
    _process(proc, 60, ["bash", "spark-submit"], {60: ("bash", 0.0)}, ppid=50)
    _process(proc, 100, JVM, {100: ("java", 0.5)}, ppid=60)  # the job's JVM
    _process(proc, 102, ["python", "-m", "pyspark.daemon"], {102: ("python", 2.0)}, ppid=100)
    _process(proc, 200, JVM, {200: ("java", 7.0)}, ppid=1)  # someone else's Spark job
    _process(proc, 202, ["python", "-m", "pyspark.daemon"], {202: ("python", 9.0)}, ppid=200)
    watcher = job_cpu.JobCpuWatcher(proc=proc, ancestor=50)
    watcher.poll()
    totals = watcher.series.totals[-1]
    assert totals["other jvm"] == pytest.approx(0.5)
    assert totals["python workers"] == pytest.approx(2.0)
    everyone = job_cpu.JobCpuWatcher(proc=proc)
    everyone.poll()
    assert everyone.series.totals[-1]["other jvm"] == pytest.approx(7.5)


def test_watcher_polls_on_its_own_thread_until_the_block_ends(
    job_cpu: ModuleType, tmp_path: Path
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    _process(proc, 100, JVM, {100: ("java", 0.5)})
    with job_cpu.JobCpuWatcher(period_s=0.01, proc=proc) as watcher:
        pass
    assert len(watcher.series.times_ms) >= 2  # a first poll and a last one at the end
    assert watcher.series.totals[-1]["other jvm"] == pytest.approx(0.5)


def test_watcher_moves_recording_threads_once_they_carry_their_name(
    job_cpu: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    _process(proc, 100, JVM, {100: ("java", 0.5), 101: ("java", 0.0), 102: ("JFR Thread Samp", 0)})
    _process(proc, 103, ["python", "-m", "pyspark.daemon"], {103: ("python", 2.0)})
    moves: list[tuple[int, set[int]]] = []
    gone = {104}

    def setaffinity(tid: int, cpus: set[int]) -> None:
        if tid in gone:
            raise ProcessLookupError(tid)
        moves.append((tid, set(cpus)))

    monkeypatch.setattr(job_cpu.os, "sched_setaffinity", setaffinity)
    watcher = job_cpu.JobCpuWatcher(proc=proc, recording_cpus={1})
    watcher.poll()
    assert moves == [(102, {1})]
    # A thread that takes a recording name later is moved then; one moved stays moved; one
    # that cannot be moved (ended) is not counted as moved.
    (proc / "100" / "task" / "101" / "comm").write_text("perfmodel idle-\n")
    _process(proc, 100, JVM, {104: ("JFR Recorder Th", 0.0)})
    watcher.poll()
    assert moves == [(102, {1}), (101, {1})]
    assert watcher.moved == {(100, 102), (100, 101)}


def test_watcher_moves_nothing_unless_asked(
    job_cpu: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    _process(proc, 100, JVM, {100: ("java", 0.5), 102: ("JFR Thread Samp", 0.1)})
    monkeypatch.setattr(job_cpu.os, "sched_setaffinity", lambda *a: pytest.fail("moved"))
    watcher = job_cpu.JobCpuWatcher(proc=proc)
    watcher.poll()
    assert watcher.series.totals[-1]["recording"] == pytest.approx(0.1)
