"""`perfmodel record`'s sampler of per-thread CPU (`perfmodel.profile.thread_cpu` says why and
what is stored).

How, cheaply: ``/proc/<pid>/task/<tid>/schedstat`` holds a thread's on-CPU and run-queue
nanoseconds (CONFIG_SCHED_INFO; without it ``stat``'s utime+stime in clock ticks, no wait).
One descriptor per thread is kept open and re-read with ``pread`` (about 0.5 µs a thread
against 5 µs to open, read and close), each thread's name (``comm``) and each process's nice
value are read once, and a row is written only when a thread's counters moved since its last
row. The one exception: a JVM thread filed as "other" has its name read again whenever it
used CPU, because a thread can be first seen under a name that is not its own (a new thread
carries its creator's name until the JVM names it as it starts: Spark's task threads are made
by its RPC dispatcher, the plugin's sampler by the thread starting the application), and a
thread found so to be a task, collector, compiler or recording thread is filed under that
kind and name for all its rows. A thread's last partial interval before it exits is missed
(its last row stays). The host's
``/proc/stat`` is read at every poll too (its CPU at nice ≤ 0 and > 0).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfmodel.profile.thread_cpu import (
    _COLUMNS,
    _TICKS,
    HOST,
    HOST_KINDS,
    HOST_NICE,
    HOST_USER,
    OTHER,
    PY_DAEMON,
    PY_WORKER,
    THREAD_CPU,
    _has_wait,
    _last_per_thread,
    classify_jvm_thread,
    parse_schedstat,
    parse_stat,
    python_kind,
)

if TYPE_CHECKING:
    import psutil
    import pyarrow as pa


@dataclass(slots=True)
class _Thread:
    fd: int
    kind: str
    executor_id: str
    name: str
    schedstat: bool
    nice: int = 0
    last: tuple[float, float] = (-1.0, -1.0)


@dataclass(slots=True)
class _Process:
    kind: str | None
    """None: a JVM (its threads are classified one by one)."""
    executor_id: str
    tids: set[int] = field(default_factory=set)
    """Its threads at the last poll."""
    nice: int | None = None
    """Its nice value, read once (0 where unreadable)."""


@dataclass(slots=True)
class ThreadCpuSampler:
    """Reads every thread of the followed processes at each poll; rows where counters moved.

    ``poll`` takes the JVMs (pid → executor id) and the command's process tree; Python
    workers, their daemon and the driver are found in the tree. ``proc`` is ``/proc``
    (tests pass a hand-built one).
    """

    proc: Path = Path("/proc")
    max_threads: int = 4000
    """Open descriptors kept at most (a JVM has tens of threads; this bounds a runaway one)."""
    cpu_s: float = 0.0
    """The sampler's own CPU time (thread time of the polls): what it cost the machine."""
    polls: int = 0
    _threads: dict[tuple[int, int], _Thread] = field(default_factory=dict)
    _processes: dict[int, _Process] = field(default_factory=dict)
    _rows: dict[str, list[Any]] = field(default_factory=lambda: {n: [] for n, _ in _COLUMNS})
    _schedstat_on: bool | None = None
    _host: list[_Thread] | None = None
    _refiled: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)
    """JVM threads first filed as other and later seen under a name of another kind: their
    kind and name."""

    def _schedstat(self) -> bool:
        """Whether ``schedstat`` counts: a kernel without scheduler statistics (neither
        CONFIG_SCHEDSTATS nor delay accounting on) writes "0 0 0" there for every thread, so
        perfmodel's own process, which has surely run, is looked at once."""
        if self._schedstat_on is None:
            try:
                own = (self.proc / str(os.getpid()) / "schedstat").read_bytes()
                self._schedstat_on = parse_schedstat(own)[0] > 0
            except (OSError, ValueError, IndexError):
                self._schedstat_on = True  # not this machine's /proc (tests): try per thread
        return self._schedstat_on

    def poll(
        self,
        jvms: Mapping[int, str],
        tree: Iterable[psutil.Process] = (),
        t_ms: float | None = None,
    ) -> None:
        began = time.thread_time()
        now = time.time() * 1000.0 if t_ms is None else t_ms
        for pid, executor_id in jvms.items():
            known = self._processes.get(pid)
            if known is None or known.kind is not None or known.executor_id != executor_id:
                # Also a pid first seen as spark-submit's shell script, which became java.
                self._processes[pid] = _Process(None, executor_id)
        for proc in tree:
            if proc.pid not in self._processes:
                self._processes[proc.pid] = _python_process(proc, jvms)
        for pid, process in list(self._processes.items()):
            if process.kind is not None or pid in jvms:
                self._read_process(pid, process, now)
        self._read_host(now)
        self.polls += 1
        self.cpu_s += time.thread_time() - began

    def _read_process(self, pid: int, process: _Process, now: float) -> None:
        try:
            tids = {int(t) for t in os.listdir(self.proc / str(pid) / "task")}
        except (OSError, ValueError):
            self._forget(pid)
            return
        known = process.tids
        for tid in known - tids:  # ended: its descriptor is closed, its rows kept
            thread = self._threads.pop((pid, tid), None)
            if thread is not None:
                os.close(thread.fd)
        process.tids = tids
        for tid in tids:
            thread = self._threads.get((pid, tid))
            if thread is None:
                thread = self._open(pid, tid, process)
                if thread is None:
                    continue
            try:
                data = os.pread(thread.fd, 256, 0)
                values = parse_schedstat(data) if thread.schedstat else parse_stat(data)
            except (OSError, ValueError, IndexError):
                os.close(thread.fd)
                del self._threads[(pid, tid)]
                continue
            if values != thread.last:
                thread.last = values
                if thread.kind == OTHER and process.kind is None:
                    self._recheck_name(pid, tid, thread)
                self._add_row(now, pid, tid, thread, values)

    def _recheck_name(self, pid: int, tid: int, thread: _Thread) -> None:
        """A JVM thread filed as other whose name now says otherwise (it was read before the
        JVM named it) is filed under its kind and name, its earlier rows too (in `table`)."""
        try:
            name = (
                (self.proc / str(pid) / "task" / str(tid) / "comm")
                .read_text(errors="replace")
                .strip()
            )
        except OSError:
            return
        kind = classify_jvm_thread(name)
        if kind != OTHER:
            thread.kind, thread.name = kind, name
            self._refiled[(pid, tid)] = (kind, name)

    def _read_host(self, now: float) -> None:
        """The host's user and nice CPU (``/proc/stat``'s first line, clock ticks)."""
        if self._host is None:
            try:
                fd = os.open(self.proc / "stat", os.O_RDONLY)
            except OSError:
                fd = -1
            self._host = [_Thread(fd, kind, HOST, "cpu", False) for kind in (HOST_USER, HOST_NICE)]
        if self._host[0].fd < 0:
            return
        try:
            fields = os.pread(self._host[0].fd, 256, 0).split(b"\n", 1)[0].split()
            values = (int(fields[1]), int(fields[2]))
        except (OSError, ValueError, IndexError):
            return
        for thread, ticks in zip(self._host, values, strict=True):
            counters = (ticks * 1000.0 / _TICKS, math.nan)
            if counters != thread.last:
                thread.last = counters
                self._add_row(now, 0, 0, thread, counters)

    def _nice(self, pid: int, process: _Process) -> int:
        if process.nice is None:
            try:
                text = (self.proc / str(pid) / "stat").read_bytes()
                process.nice = int(text.rsplit(b")", 1)[1].split()[16])
            except (OSError, ValueError, IndexError):
                process.nice = 0
        return process.nice

    def _open(self, pid: int, tid: int, process: _Process) -> _Thread | None:
        if len(self._threads) >= self.max_threads:
            return None
        base = self.proc / str(pid) / "task" / str(tid)
        try:
            name = (base / "comm").read_text(errors="replace").strip()
        except OSError:
            return None
        kind = process.kind or classify_jvm_thread(name)
        leaves = (("schedstat", True), ("stat", False)) if self._schedstat() else (("stat", False),)
        for leaf, schedstat in leaves:
            try:
                fd = os.open(base / leaf, os.O_RDONLY)
            except OSError:
                continue
            thread = _Thread(
                fd, kind, process.executor_id, name, schedstat, self._nice(pid, process)
            )
            self._threads[(pid, tid)] = thread
            return thread
        return None

    def _forget(self, pid: int) -> None:
        """A process that exited: its descriptors are closed, its rows kept."""
        self._processes.pop(pid, None)
        for key in [k for k in self._threads if k[0] == pid]:
            os.close(self._threads.pop(key).fd)

    def _add_row(
        self, now: float, pid: int, tid: int, thread: _Thread, values: tuple[float, float]
    ) -> None:
        rows = self._rows
        rows["t_ms"].append(now)
        rows["pid"].append(pid)
        rows["tid"].append(tid)
        rows["kind"].append(thread.kind)
        rows["executor_id"].append(thread.executor_id)
        rows["name"].append(thread.name)
        rows["cpu_ms"].append(values[0])
        rows["wait_ms"].append(values[1])
        rows["nice"].append(thread.nice)

    def close(self) -> None:
        for thread in self._threads.values():
            os.close(thread.fd)
        self._threads.clear()
        if self._host is not None and self._host[0].fd >= 0:
            os.close(self._host[0].fd)
            self._host[0].fd = -1
        self._processes.clear()

    def table(self) -> pa.Table:
        import pyarrow as pa

        if self._refiled:
            rows = self._rows
            keys = list(zip(rows["pid"], rows["tid"], strict=True))
            for column, at in (("kind", 0), ("name", 1)):
                rows[column] = [
                    self._refiled[key][at] if key in self._refiled else value
                    for key, value in zip(keys, rows[column], strict=True)
                ]
        arrays = {
            name: pa.array(self._rows[name], type=pa.type_for_alias(kind))
            for name, kind in _COLUMNS
        }
        for name in ("kind", "executor_id", "name"):
            arrays[name] = arrays[name].dictionary_encode()
        return pa.table(arrays)


def _python_process(proc: psutil.Process, jvms: Mapping[int, str]) -> _Process:
    """What a new process of the tree is: a Python process to follow, or nothing (kind
    None and not a JVM: skipped by `ThreadCpuSampler.poll`). Its cmdline and parents are read
    once."""
    import psutil

    try:
        cmd = proc.cmdline()
        parent = proc.parent()
        parent_cmd = parent.cmdline() if parent is not None else []
        kind = python_kind(cmd, parent_cmd)
        executor = "driver"
        if kind in (PY_WORKER, PY_DAEMON):
            executor = _serving_executor(proc, jvms)
    except (psutil.Error, OSError):
        return _Process(None, "")
    return _Process(kind, executor)


def _serving_executor(proc: psutil.Process, jvms: Mapping[int, str]) -> str:
    """The executor a Python worker serves: its nearest JVM ancestor's."""
    for parent in proc.parents():
        if parent.pid in jvms:
            return jvms[parent.pid]
        cmd = parent.cmdline()
        if cmd and os.path.basename(cmd[0]).startswith("java"):
            return executor_of_jvm(cmd)
    return "driver"


def executor_of_jvm(cmd: list[str]) -> str:
    """The executor a JVM runs: ``--executor-id`` of CoarseGrainedExecutorBackend, else the
    driver (which runs the tasks in local mode)."""
    if "--executor-id" in cmd:
        i = cmd.index("--executor-id")
        if i + 1 < len(cmd):
            return cmd[i + 1]
    return "driver"


def write(out: Path, sampler: ThreadCpuSampler, interval_s: float) -> dict[str, Any]:
    """Write ``thread_cpu.parquet``; returns the manifest entry (what each kind used)."""
    import pyarrow.parquet as pq

    table = sampler.table()
    pq.write_table(table, out / THREAD_CPU, compression="zstd")
    last = _last_per_thread(table)
    by_kind: dict[str, float] = {}
    threads = 0
    for kind, cpu in zip(last["kind"], last["cpu_ms"], strict=True):
        if kind in HOST_KINDS:
            continue
        threads += 1
        by_kind[kind] = by_kind.get(kind, 0.0) + cpu / 1000.0
    return {
        "file": THREAD_CPU,
        "interval_s": interval_s,
        "rows": table.num_rows,
        "threads": threads,
        "counters": "schedstat" if _has_wait(table) else "stat",
        "cpu_s_by_kind": {k: round(v, 3) for k, v in sorted(by_kind.items())},
        "sampler_cpu_s": round(sampler.cpu_s, 4),
        "polls": sampler.polls,
    }
