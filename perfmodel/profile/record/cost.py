"""What a recording cost: the CPU time its samplers took while the command ran.

Why every bundle carries it: on a machine the job keeps busy, each CPU-second a sampler
takes is about a CPU-second the job waits, and the kernel counts those seconds exactly,
whereas the job's own runtime moves by several percent from run to run (JIT compilation
alone differs by seconds), so a with/without comparison needs many runs to resolve a cost of
a few percent (``benchmarks/record_overhead.py``). This figure is the recording's cost for the
run at hand, and the benchmark reports it next to the wall-clock one.

Counted: every py-spy (its ``rusage`` when reaped), the recording threads inside each of the
command's JVMs (JFR's sampler, recorder and periodic-task threads and the plugin's idle-thread
excluder; each read at every poll, so the last poll period of a thread may be missed), and
perfmodel's own process from the command's start to its end (the polls, starting py-spy).
Not counted: JFR's start-up in each JVM (before the application starts), the plugin's
callbacks on task threads, and what the samplers' wake-ups do to the job's caches and
scheduling.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfmodel.profile.thread_cpu import RECORDING_THREAD_PREFIXES

"""Native thread names (``comm``, cut at 15 characters) of the threads recording in a JVM:
HotSpot names its JFR threads ``JFR Thread Sampler``, ``JFR Recorder Thread``, ``JFR Periodic
Tasks``...; the plugin's excluder is ``perfmodel idle-thread excluder``."""

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(slots=True)
class RecordingCost:
    """The samplers' CPU time over a recorded command; ``share`` of the machine."""

    command_s: float
    """Wall-clock seconds the command ran."""
    cores: int
    """Cores perfmodel's process may run on (the job's, for a local run)."""
    pyspy_cpu_s: float = 0.0
    jvm_recording_cpu_s: float = 0.0
    perfmodel_cpu_s: float = 0.0

    @property
    def cpu_s(self) -> float:
        return self.pyspy_cpu_s + self.jvm_recording_cpu_s + self.perfmodel_cpu_s

    @property
    def share(self) -> float:
        """The samplers' CPU as a fraction of the machine's CPU over the command."""
        capacity = self.command_s * self.cores
        return self.cpu_s / capacity if capacity > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "command_s": round(self.command_s, 3),
            "cores": self.cores,
            "cpu_s": round(self.cpu_s, 3),
            "pyspy_cpu_s": round(self.pyspy_cpu_s, 3),
            "jvm_recording_cpu_s": round(self.jvm_recording_cpu_s, 3),
            "perfmodel_cpu_s": round(self.perfmodel_cpu_s, 3),
            "share_of_machine": round(self.share, 5),
        }

    def describe(self) -> str:
        """One line for the terminal; no share for a command shorter than a second, where a
        few milliseconds of perfmodel's own work over so short a run make a meaningless one."""
        share = f", {self.share:.1%} of {self.cores} cores" if self.command_s >= 1.0 else ""
        return (
            f"recording cost {self.cpu_s:.2f} s of CPU{share} over {self.command_s:.1f} s "
            f"(py-spy {self.pyspy_cpu_s:.2f} s, JFR and plugin threads "
            f"{self.jvm_recording_cpu_s:.2f} s, perfmodel {self.perfmodel_cpu_s:.2f} s)"
        )


def usable_cores() -> int:
    """Cores this process may run on (its affinity; cgroup quotas are not looked at)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def own_cpu_s() -> float:
    """CPU time of perfmodel's own process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stat_cpu_s(text: str) -> float:
    """CPU time (user + system) from a ``/proc/<pid>/stat`` or ``.../task/<tid>/stat`` line."""
    # The name (field 2) may hold spaces and parentheses: the fields after it are split.
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def thread_cpu_s(pid: int, tid: int, proc: Path = Path("/proc")) -> float | None:
    """CPU time (user + system) of one thread, None once it is gone."""
    try:
        text = (proc / str(pid) / "task" / str(tid) / "stat").read_text()
    except OSError:
        return None
    return stat_cpu_s(text)


class JvmRecordingThreads:
    """Follows the recording threads of the command's JVMs, one read of each per poll.

    Threads are found by name: a JVM's thread list is read at every poll (JFR's threads start
    with the recording, the plugin's when the application starts) and the name of each thread
    not seen before is read at that poll and, where it is not a recording thread's, once more
    at the next: a new thread carries its creator's name until the JVM names it as it starts,
    and a poll can fall between the two. The CPU time of the recording threads is read at
    every poll and the last value kept, since a thread's counters vanish with the JVM.
    """

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._seen: dict[int, set[int]] = {}
        self._recording: dict[int, set[int]] = {}
        self._unsettled: dict[int, set[int]] = {}
        """Threads first seen at the last poll under another name than a recording thread's."""
        self._cpu: dict[tuple[int, int], float] = {}

    def poll(self, pids: Iterable[int]) -> None:
        for pid in pids:
            try:
                tids = {int(t) for t in os.listdir(self._proc / str(pid) / "task")}
            except (OSError, ValueError):
                continue  # exited: its last values are kept
            seen = self._seen.setdefault(pid, set())
            recording = self._recording.setdefault(pid, set())
            new = tids - seen
            seen |= new
            for tid in (new | self._unsettled.get(pid, set())) & tids:
                try:
                    name = (self._proc / str(pid) / "task" / str(tid) / "comm").read_text()
                except OSError:
                    continue
                if name.startswith(RECORDING_THREAD_PREFIXES):
                    recording.add(tid)
            self._unsettled[pid] = new - recording
            for tid in recording & tids:
                cpu = thread_cpu_s(pid, tid, self._proc)
                if cpu is not None:
                    self._cpu[(pid, tid)] = cpu

    @property
    def cpu_s(self) -> float:
        return sum(self._cpu.values())
