"""CPU time of a PySpark job's own processes inside its application's window, by part.

Why: the wall-clock overhead of recording moves by a couple of percent between runs of the
same job on this machine, while the kernel counts CPU time exactly. Reading the job's JVM
threads (grouped by their names) and its Python workers at every poll, and taking the
difference between the application's start and end (from its event log), tells whether
recording makes the job itself work more (more JIT compilation, GC, busier task threads) or
only adds the samplers' own time. Linux only (``/proc``); a thread's last poll period may
be missed when it ends, alike for every variant.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.profile.record.cost import stat_cpu_s
from perfmodel.profile.thread_cpu import RECORDING_THREAD_PREFIXES

THREAD_GROUPS: tuple[tuple[str, str], ...] = (
    ("C2 CompilerThre", "jit"),
    ("C1 CompilerThre", "jit"),
    ("GC Thread", "gc"),
    ("G1 ", "gc"),
    ("Executor task ", "tasks"),
    ("Thread-", "py4j"),
    *((prefix, "recording") for prefix in RECORDING_THREAD_PREFIXES),
)
"""JVM thread name prefix (``comm``: 15 characters) → group. Spark's task threads are
``Executor task launch worker…`` while they run a task, ``Executor task idle worker…``
between tasks (Spark renames them); py4j names its connection threads ``Thread-N``, and they
run the PySpark driver's calls (planning, optimising)."""

GROUPS = ("jit", "gc", "tasks", "py4j", "recording", "other jvm", "python workers")


def thread_group(name: str) -> str:
    """The group of a JVM thread, by its native name."""
    for prefix, group in THREAD_GROUPS:
        if name.startswith(prefix):
            return group
    return "other jvm"


@dataclass(slots=True)
class CpuSeries:
    """CPU seconds by group so far, at each poll (wall-clock milliseconds since the epoch)."""

    times_ms: list[float] = field(default_factory=list)
    totals: list[dict[str, float]] = field(default_factory=list)

    def at(self, t_ms: float) -> dict[str, float]:
        """The totals of the last poll at or before ``t_ms`` (none before the first)."""
        i = bisect.bisect_right(self.times_ms, t_ms)
        return self.totals[i - 1] if i else {}

    def window(self, start_ms: float, end_ms: float) -> dict[str, float]:
        """CPU seconds each group took between two instants, to the polls' resolution."""
        first, last = self.at(start_ms), self.at(end_ms)
        return {g: last.get(g, 0.0) - first.get(g, 0.0) for g in GROUPS}


def _job_role(cmdline: bytes) -> str | None:
    """``jvm`` for Spark's JVM, ``python`` for PySpark's daemon and the workers it forks."""
    if b"org.apache.spark.deploy.SparkSubmit" in cmdline:
        return "jvm"
    if b"pyspark.daemon" in cmdline or b"pyspark.worker" in cmdline:
        return "python"
    return None


class JobCpuWatcher:
    """Polls the job's processes on a thread of its own while a ``with`` block runs.

    ``ancestor``: count only processes descended from this pid (the benchmark's own, which
    starts the job), so another Spark job on the machine is neither counted nor has its
    threads moved; None counts every Spark JVM and PySpark worker.

    ``recording_cpus``: move every JVM recording thread (JFR's, the plugin's) onto these CPUs
    as soon as it carries its name, so that with the job confined to the other CPUs
    (``record_overhead.py --spare-core``) the samplers run beside the job rather than on its
    cores. A thread is moved once; one that could not be moved is tried again at the next
    poll while it is listed.
    """

    def __init__(
        self,
        period_s: float = 0.2,
        proc: Path = Path("/proc"),
        recording_cpus: set[int] | None = None,
        ancestor: int | None = None,
    ) -> None:
        self.period_s = period_s
        self.ancestor = ancestor
        self._descends: dict[int, bool] = {}
        self.series = CpuSeries()
        self.recording_cpus = recording_cpus
        self.moved: set[tuple[int, int]] = set()
        """The recording threads put on ``recording_cpus`` so far, as (pid, tid)."""
        self._proc = proc
        self._roles: dict[int, str] = {}
        self._cpu: dict[tuple[int, int], tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> JobCpuWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.poll()
            if self._stop.wait(self.period_s):
                self.poll()
                return

    def _role(self, pid: int) -> str | None:
        """Cached once known; a process not (yet) the job's is read again, since the launch
        script that becomes Spark's JVM is a shell until it execs ``java``."""
        role = self._roles.get(pid)
        if role is None:
            if not self._is_descendant(pid):
                return None
            try:
                role = _job_role((self._proc / str(pid) / "cmdline").read_bytes())
            except OSError:
                return None
            if role is not None:
                self._roles[pid] = role
        return role

    def _is_descendant(self, pid: int) -> bool:
        """Whether ``pid`` descends from `ancestor` (cached: a job's processes keep their
        parents while the watcher sees them)."""
        if self.ancestor is None:
            return True
        known = self._descends.get(pid)
        if known is not None:
            return known
        chain: list[int] = []
        current, found = pid, False
        while current > 1 and current not in self._descends:
            if current == self.ancestor:
                found = True
                break
            chain.append(current)
            try:
                stat = (self._proc / str(current) / "stat").read_text()
                current = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                return False  # gone before it could be placed: asked again next poll
        else:
            found = self._descends.get(current, False)
        for p in chain:
            self._descends[p] = found
        return found

    def _read(self, path: Path) -> float | None:
        try:
            return stat_cpu_s(path.read_text())
        except (OSError, IndexError, ValueError):
            return None  # gone: its last value is kept

    def _jvm_threads(self, pid: int) -> Iterator[tuple[tuple[int, int], str, Path]]:
        try:
            tids = [int(t) for t in os.listdir(self._proc / str(pid) / "task")]
        except (OSError, ValueError):
            return
        for tid in tids:
            # The name is read at every poll: a new thread carries its creator's name until
            # it sets its own, so a name read once may be the wrong one.
            task = self._proc / str(pid) / "task" / str(tid)
            try:
                group = thread_group((task / "comm").read_text())
            except OSError:
                continue
            yield (pid, tid), group, task / "stat"

    def _move(self, key: tuple[int, int]) -> None:
        if self.recording_cpus is None or key in self.moved:
            return
        try:
            os.sched_setaffinity(key[1], self.recording_cpus)
        except OSError:
            return  # ended, or not ours to move
        self.moved.add(key)

    def poll(self) -> None:
        """Reads every job process (and every thread of its JVMs) once."""
        for entry in os.listdir(self._proc):
            if not entry.isdigit():
                continue
            pid = int(entry)
            role = self._role(pid)
            if role == "python":
                cpu = self._read(self._proc / entry / "stat")
                if cpu is not None:
                    self._cpu[(pid, 0)] = ("python workers", cpu)
            elif role == "jvm":
                for key, group, stat in self._jvm_threads(pid):
                    if group == "recording":
                        self._move(key)
                    cpu = self._read(stat)
                    if cpu is not None:
                        self._cpu[key] = (group, cpu)
        totals = dict.fromkeys(GROUPS, 0.0)
        for group, cpu in self._cpu.values():
            totals[group] += cpu
        self.series.times_ms.append(time.time() * 1000.0)
        self.series.totals.append(totals)
