"""Per-thread CPU of the executor JVMs and per-process CPU of PySpark's Python workers.

Why: Spark's task metrics time the task thread only, and the process-tree monitor
(`perfmodel.profile.monitor`) sees the whole run as one figure. On a saturated host neither
tells how many cores a task would use on its own: a PySpark task's Python worker and its
JVM thread share the cores with every other task's, and the host's other load. Read per
thread, the kernel tells both how much CPU each thread used (the task thread, the Python
worker, GC, JIT and the rest of the JVM) and how long it sat runnable waiting for a core
(run-queue delay): what the what-if replay needs to find a task's demand behind the
saturation (`perfmodel.simulate.thread_demand`).

How, cheaply: ``/proc/<pid>/task/<tid>/schedstat`` holds a thread's on-CPU and run-queue
nanoseconds (CONFIG_SCHED_INFO; without it ``stat``'s utime+stime in clock ticks, no wait).
One descriptor per thread is kept open and re-read with ``pread`` (about 0.5 µs a thread
against 5 µs to open, read and close), each thread's name (``comm``) is read once, and a row
is written only when a thread's counters moved since its last row. A thread's last partial
interval before it exits is missed (its last row stays).

Stored as ``thread_cpu.parquet`` (docs/bundle.md): one row per (poll, thread whose counters
moved), columnar, strings dictionary-encoded.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from perfmodel.profile.recording_cost import RECORDING_THREAD_PREFIXES

if TYPE_CHECKING:
    import psutil
    import pyarrow as pa

THREAD_CPU = "thread_cpu.parquet"

TASK, GC, JIT, RECORDING, OTHER = "jvm task", "jvm gc", "jvm jit", "jvm recording", "jvm other"
PY_WORKER, PY_DAEMON, PY_DRIVER = "python worker", "python daemon", "python driver"
HOST_USER, HOST_NICE = "host user", "host nice"
"""The host's CPU (``/proc/stat``) of processes at nice ≤ 0 and at nice > 0: executor id
``host``, pid and tid 0. With the application niced, the first is other load of a higher
priority, which takes the cores it wants rather than sharing them."""
HOST = "host"
KINDS = (TASK, GC, JIT, RECORDING, OTHER, PY_WORKER, PY_DAEMON, PY_DRIVER, HOST_USER, HOST_NICE)

TASK_PREFIXES = ("Executor task l",)
"""Spark's task threads: "Executor task launch worker for task …", cut at 15 characters."""
GC_PREFIXES = (
    "GC Thread",
    "G1 ",
    "VM Thread",
    "ZDirector",
    "ZDriver",
    "ZWorker",
    "ZUnmapper",
    "ZStat",
    "Shenandoah",
    "ParGC",
    "Parallel GC",
)
"""HotSpot's collector threads (G1, Parallel, Z, Shenandoah) and the VM thread, which runs
the safepoint operations a collection needs."""
JIT_PREFIXES = ("C1 Compiler", "C2 Compiler", "JVMCI", "Sweeper")

_TICKS = os.sysconf("SC_CLK_TCK")
_COLUMNS = (
    ("t_ms", "float64"),
    ("pid", "int32"),
    ("tid", "int32"),
    ("kind", "string"),
    ("executor_id", "string"),
    ("name", "string"),
    ("cpu_ms", "float64"),
    ("wait_ms", "float64"),
    ("nice", "int8"),
)


def classify_jvm_thread(name: str) -> str:
    """The kind of a JVM thread from its native name (``comm``, at most 15 characters)."""
    if name.startswith(TASK_PREFIXES):
        return TASK
    if name.startswith(GC_PREFIXES):
        return GC
    if name.startswith(JIT_PREFIXES):
        return JIT
    if name.startswith(RECORDING_THREAD_PREFIXES):
        return RECORDING
    return OTHER


def python_kind(cmd: list[str], parent_cmd: list[str]) -> str | None:
    """A Python process's kind: a forked PySpark worker (a ``pyspark.daemon`` below one), the
    daemon itself, the application's driver; None for what is not Python."""
    exe = os.path.basename(cmd[0]) if cmd else ""
    if not exe.startswith("python"):
        return None
    daemon = any("pyspark.daemon" in part for part in cmd)
    if daemon:
        parent_daemon = any("pyspark.daemon" in part for part in parent_cmd)
        return PY_WORKER if parent_daemon else PY_DAEMON
    if any("pyspark" in part and "worker" in part for part in cmd):
        return PY_WORKER  # spark.python.use.daemon=false: workers started one by one
    return PY_DRIVER


def parse_schedstat(data: bytes) -> tuple[float, float]:
    """(on-CPU ms, run-queue wait ms) from a ``schedstat`` line."""
    fields = data.split()
    return int(fields[0]) / 1e6, int(fields[1]) / 1e6


def parse_stat(data: bytes) -> tuple[float, float]:
    """(user + system ms, NaN) from a ``stat`` line (the name may hold spaces and ')')."""
    fields = data.rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / _TICKS, math.nan


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
                self._add_row(now, pid, tid, thread, values)

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
        if kind in (HOST_USER, HOST_NICE):
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


def _has_wait(table: pa.Table) -> bool:
    wait = table.column("wait_ms").to_numpy()
    return bool(wait.size) and not bool(np.isnan(wait).all())


def _thread_keys(table: pa.Table) -> tuple[np.ndarray, list[str], list[str]]:
    """One number per thread (kind, pid, tid: the host's two rows share pid and tid 0), and
    each row's executor id and kind."""
    executors = [str(v) for v in table.column("executor_id").to_pylist()]
    kinds = [str(v) for v in table.column("kind").to_pylist()]
    codes: dict[str, int] = {}
    kind = np.fromiter((codes.setdefault(k, len(codes)) for k in kinds), np.int64, len(kinds))
    key = kind << 44
    key |= table.column("pid").to_numpy().astype(np.int64) << 22
    key |= table.column("tid").to_numpy().astype(np.int64)
    return key, executors, kinds


def _last_per_thread(table: pa.Table) -> dict[str, list[Any]]:
    key, _, _ = _thread_keys(table)
    # The last row of each thread (rows are in time order).
    _, first_of_reversed = np.unique(key[::-1], return_index=True)
    rows = (len(key) - 1 - first_of_reversed).tolist()
    return {
        "kind": [str(v) for v in table.column("kind").take(rows).to_pylist()],
        "cpu_ms": table.column("cpu_ms").take(rows).to_pylist(),
    }


@dataclass(slots=True)
class CpuSeries:
    """What one kind of thread of one executor used, summed over its threads: cumulative
    milliseconds at each poll time (ascending)."""

    t_ms: np.ndarray
    cpu_ms: np.ndarray
    wait_ms: np.ndarray
    """Run-queue delay (zeros where the kernel gave none: see `ThreadCpu.has_wait`)."""


@dataclass(slots=True)
class ThreadCpu:
    """A bundle's per-thread CPU, summed per (executor id, kind)."""

    series: dict[tuple[str, str], CpuSeries]
    has_wait: bool
    app_nice: int = 0
    """The nice value of the application's task threads and Python workers: above 0, the
    host's CPU at nice ≤ 0 (`HOST_USER`) was load of a higher priority."""

    def higher_priority(self) -> CpuSeries | None:
        """The host's CPU of processes with a higher priority than the application's."""
        return self.series.get((HOST, HOST_USER)) if self.app_nice > 0 else None

    def executors(self) -> set[str]:
        return {executor for executor, _ in self.series}


def load(bundle: str | Path) -> ThreadCpu | None:
    """The bundle's per-thread CPU, or None for a bundle recorded without it (older ones)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from perfmodel.profile.bundle import BundleError

    path = Path(bundle) / THREAD_CPU
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path)
        if "nice" not in table.column_names:
            table = table.append_column("nice", pa.array(np.zeros(table.num_rows, np.int8)))
        missing = [n for n, _ in _COLUMNS if n not in table.column_names]
        if missing:
            raise BundleError(f"{path} is damaged: it lacks the columns {', '.join(missing)}")
        return from_table(table.cast(pa.schema([(n, pa.type_for_alias(k)) for n, k in _COLUMNS])))
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise BundleError(f"{path} is damaged or not a Parquet table: {str(exc)[:300]}") from None


def from_table(table: pa.Table) -> ThreadCpu:
    """Rows (cumulative per thread, written when they moved) → summed series per group.

    Each row's increase over the thread's previous row happened in the poll interval that
    ends at the row's time; a thread's first row holds all it used before it was first seen.
    """
    n = table.num_rows
    t = table.column("t_ms").to_numpy().astype(np.float64)
    key, executors, kinds = _thread_keys(table)
    cpu = table.column("cpu_ms").to_numpy().astype(np.float64)
    wait = table.column("wait_ms").to_numpy().astype(np.float64)
    has_wait = bool(n) and not bool(np.isnan(wait).all())
    wait = np.nan_to_num(wait, nan=0.0)
    order = np.lexsort((t, key))
    same = np.zeros(n, dtype=bool)
    same[1:] = key[order][1:] == key[order][:-1]
    d_cpu = np.empty(n)
    d_wait = np.empty(n)
    d_cpu[order] = np.where(same, np.diff(cpu[order], prepend=0.0), cpu[order])
    d_wait[order] = np.where(same, np.diff(wait[order], prepend=0.0), wait[order])
    groups: dict[tuple[str, str], int] = {}
    group = np.fromiter(
        (groups.setdefault(g, len(groups)) for g in zip(executors, kinds, strict=True)),
        np.int64,
        n,
    )
    series: dict[tuple[str, str], CpuSeries] = {}
    by_group = np.argsort(group, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=len(groups)))])
    for name, g in groups.items():
        rows = by_group[bounds[g] : bounds[g + 1]]
        times, at = np.unique(t[rows], return_inverse=True)
        c = np.bincount(at, weights=np.maximum(d_cpu[rows], 0.0), minlength=len(times))
        w = np.bincount(at, weights=np.maximum(d_wait[rows], 0.0), minlength=len(times))
        series[name] = CpuSeries(times, np.cumsum(c), np.cumsum(w))
    return ThreadCpu(series, has_wait, _app_nice(table, kinds))


def _app_nice(table: pa.Table, kinds: list[str]) -> int:
    """The highest nice value among the rows of task threads and Python workers."""
    if "nice" not in table.column_names:
        return 0
    nice = table.column("nice").to_numpy()
    app = np.fromiter((k in (TASK, PY_WORKER) for k in kinds), bool, len(kinds))
    return int(nice[app].max()) if app.any() else 0
