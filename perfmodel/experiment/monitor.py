"""Resource monitoring of a run's process tree with psutil: CPU, memory, disk and network.

Spark's own metrics cover task threads only; the monitor sees the whole run from outside —
the launcher, the JVM (driver and executors in local mode), PySpark's Python driver and
workers — so a run's CPU seconds and peak memory include everything the machine spent on it.
Processes come and go (Python workers are forked per task set), so counters are tracked per
pid and the last value seen of a process that has exited is kept in the totals.

Network bytes are not available per process from the OS; they are the host's counters over
the run's time (including loopback traffic), which is what a single-machine run shares.
CPU counts each process's own time only (a parent's ``children_*`` times would count reaped
children twice), so a process's last half-interval before it exits can be missed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from perfmodel.experiment.store import Sample

IGNORED_NAMES = frozenset({"py-spy"})
"""Recording helpers that are children of the runner but not part of the workload."""


@dataclass(slots=True)
class _ProcState:
    cpu_s: float = 0.0
    read_bytes: int = 0
    write_bytes: int = 0


@dataclass(slots=True)
class MonitorSummary:
    """Totals over a run: CPU seconds of the tree, peak summed RSS, bytes moved."""

    cpu_s: float = 0.0
    peak_rss_bytes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    net_sent_bytes: int = 0
    net_recv_bytes: int = 0
    samples: list[Sample] = field(default_factory=list)


class TreeMonitor:
    """Samples every descendant of ``root_pid`` on a background thread until stopped.

    ``root_pid`` itself is excluded when ``include_root`` is false: the runner samples its
    own children (the recorded command), not itself.
    """

    def __init__(
        self,
        root_pid: int | None = None,
        interval_s: float = 0.5,
        include_root: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root_pid = root_pid if root_pid is not None else os.getpid()
        self.interval_s = interval_s
        self.include_root = include_root
        self._clock = clock
        self._procs: dict[tuple[int, float], _ProcState] = {}
        self._handles: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._net0 = (0, 0)
        self._last_cpu = 0.0
        self._last_t = 0.0
        self.summary = MonitorSummary()

    def start(self) -> None:
        self._t0 = self._clock()
        self._last_t = self._t0
        net = psutil.net_io_counters()
        self._net0 = (net.bytes_sent, net.bytes_recv) if net else (0, 0)
        self._thread = threading.Thread(target=self._loop, name="perfmodel-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> MonitorSummary:
        """Stop sampling (one last sample is taken) and return the totals."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        return self.summary

    def __enter__(self) -> TreeMonitor:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def _tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.root_pid)
            procs = root.children(recursive=True)
        except (psutil.Error, OSError):
            return []
        if self.include_root:
            procs.insert(0, root)
        out = []
        for proc in procs:
            # Keep one handle per pid so psutil's cached create_time identifies reuse.
            known = self._handles.get(proc.pid)
            if known is None or not known.is_running():
                self._handles[proc.pid] = proc
                known = proc
            try:
                if known.name() in IGNORED_NAMES:
                    continue
            except (psutil.Error, OSError):
                continue
            out.append(known)
        return out

    def sample(self) -> Sample:
        """Take one sample now (called by the thread; public for tests and the last one)."""
        rss = 0
        live = 0
        for proc in self._tree():
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    mem = proc.memory_info()
                    try:
                        io = proc.io_counters()
                        rb, wb = io.read_bytes, io.write_bytes
                    except (psutil.AccessDenied, AttributeError, NotImplementedError):
                        rb = wb = 0
                    key = (proc.pid, proc.create_time())
            except (psutil.Error, OSError):
                continue
            state = self._procs.setdefault(key, _ProcState())
            cpu = times.user + times.system
            state.cpu_s = max(state.cpu_s, cpu)
            state.read_bytes = max(state.read_bytes, rb)
            state.write_bytes = max(state.write_bytes, wb)
            rss += mem.rss
            live += 1
        now = self._clock()
        cpu_total = sum(s.cpu_s for s in self._procs.values())
        dt = now - self._last_t
        percent = 100.0 * (cpu_total - self._last_cpu) / dt if dt > 0 else 0.0
        self._last_cpu, self._last_t = cpu_total, now
        net = psutil.net_io_counters()
        sent = (net.bytes_sent - self._net0[0]) if net else 0
        recv = (net.bytes_recv - self._net0[1]) if net else 0
        s = Sample(
            t_s=now - self._t0,
            cpu_percent=max(0.0, percent),
            rss_bytes=rss,
            read_bytes=sum(p.read_bytes for p in self._procs.values()),
            write_bytes=sum(p.write_bytes for p in self._procs.values()),
            net_sent_bytes=max(0, sent),
            net_recv_bytes=max(0, recv),
            processes=live,
        )
        m = self.summary
        m.samples.append(s)
        m.cpu_s = cpu_total
        m.peak_rss_bytes = max(m.peak_rss_bytes, rss)
        m.read_bytes, m.write_bytes = s.read_bytes, s.write_bytes
        m.net_sent_bytes, m.net_recv_bytes = s.net_sent_bytes, s.net_recv_bytes
        return s
