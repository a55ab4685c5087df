"""Per-thread CPU of the executor JVMs and per-process CPU of PySpark's Python workers.

Why: Spark's task metrics time the task thread only, and the process-tree monitor
(`perfmodel.profile.record.monitor`) sees the whole run as one figure. On a saturated host neither
tells how many cores a task would use on its own: a PySpark task's Python worker and its
JVM thread share the cores with every other task's, and the host's other load. Read per
thread, the kernel tells both how much CPU each thread used (the task thread, the Python
worker, GC, JIT and the rest of the JVM) and how long it sat runnable waiting for a core
(run-queue delay): what the what-if replay needs to find a task's demand behind the
saturation (`perfmodel.simulate.thread_demand`).

`record` samples them (`perfmodel.profile.record.thread_sampler`); this module says what is stored
and reads it back. Stored as ``thread_cpu.parquet`` (docs/bundle.md): one row per (poll,
thread whose counters moved), columnar, strings dictionary-encoded.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

RECORDING_THREAD_PREFIXES = ("JFR ", "perfmodel ")
"""Threads of the recorders themselves (JFR's, perfmodel's samplers): their CPU is the
recording's cost, never the application's."""


if TYPE_CHECKING:
    import pyarrow as pa

THREAD_CPU = "thread_cpu.parquet"

TASK, GC, JIT, RECORDING, OTHER = "jvm task", "jvm gc", "jvm jit", "jvm recording", "jvm other"
PY_WORKER, PY_DAEMON, PY_DRIVER = "python worker", "python daemon", "python driver"
HOST_USER, HOST_NICE = "host user", "host nice"
"""The host's CPU (``/proc/stat``) of processes at nice ≤ 0 and at nice > 0: executor id
``host``, pid and tid 0. With the application niced, the first is other load of a higher
priority, which takes the cores it wants rather than sharing them."""
HOST = "host"
HOST_KINDS = (HOST_USER, HOST_NICE)
KINDS = (TASK, GC, JIT, RECORDING, OTHER, PY_WORKER, PY_DAEMON, PY_DRIVER, HOST_USER, HOST_NICE)

TASK_PREFIXES = ("Executor task l", "Executor task i")
"""Spark's task threads, cut at 15 characters: "Executor task launch worker for task …" while
one runs a task and, in Spark 4, "Executor task idle worker-N" between tasks. The sampler
reads a thread's name once, when it first sees it, so a pool thread first seen idle runs
tasks under its idle name (in local mode, often every task of the application)."""
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


def _has_wait(table: pa.Table) -> bool:
    wait = table.column("wait_ms").to_numpy()
    return bool(wait.size) and not bool(np.isnan(wait).all())


def row_kinds(table: pa.Table) -> list[str]:
    """Each row's kind, with the task threads that bundles recorded before Spark 4's idle
    name was known filed as other JVM threads put back among the task threads."""
    kinds = [str(v) for v in table.column("kind").to_pylist()]
    names = table.column("name").to_pylist()
    return [
        TASK if k == OTHER and str(n).startswith(TASK_PREFIXES) else k
        for k, n in zip(kinds, names, strict=True)
    ]


def _thread_keys(table: pa.Table) -> tuple[np.ndarray, list[str], list[str]]:
    """One number per thread (kind, pid, tid: the host's two rows share pid and tid 0), and
    each row's executor id and kind (`row_kinds`)."""
    executors = [str(v) for v in table.column("executor_id").to_pylist()]
    kinds = row_kinds(table)
    codes: dict[str, int] = {}
    kind = np.fromiter((codes.setdefault(k, len(codes)) for k in kinds), np.int64, len(kinds))
    key = kind << 44
    key |= table.column("pid").to_numpy().astype(np.int64) << 22
    key |= table.column("tid").to_numpy().astype(np.int64)
    return key, executors, kinds


def _last_per_thread(table: pa.Table) -> dict[str, list[Any]]:
    key, _, kinds = _thread_keys(table)
    # The last row of each thread (rows are in time order).
    _, first_of_reversed = np.unique(key[::-1], return_index=True)
    rows = (len(key) - 1 - first_of_reversed).tolist()
    return {
        "kind": [kinds[r] for r in rows],
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
        """The executors whose threads were read (not the host's own rows)."""
        return {executor for executor, _ in self.series if executor != HOST}

    @property
    def jvm_runtime(self) -> bool:
        """Whether a JVM's own threads (its GC or JIT compilers) were read: what the
        prediction's notes call the background (a Dask worker's is its other threads)."""
        return any(kind in (GC, JIT) for _, kind in self.series)


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
    # The host's counters run since boot: its first row is the baseline, not an increase.
    first = np.where(np.isin(np.array(kinds, dtype=object), list(HOST_KINDS)), 0.0, 1.0)
    d_cpu[order] = np.where(same, np.diff(cpu[order], prepend=0.0), cpu[order] * first[order])
    d_wait[order] = np.where(same, np.diff(wait[order], prepend=0.0), wait[order] * first[order])
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
