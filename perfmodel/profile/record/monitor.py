"""Resource monitoring of a recorded command's process tree with psutil.

Spark's task metrics cover task threads only. Seen from outside, the whole run — the
launcher, the JVM (driver and executors in local mode), PySpark's Python driver and its
workers — shows how many cores the application really kept busy and when, which is what
the what-if replay needs to know about CPU used outside the task threads (a PySpark task's
Python worker, GC and JIT threads). The monitor is non-intrusive: it reads ``/proc`` every
``interval_s`` from perfmodel's own process (on its own thread, or driven by a caller that
lists the tree anyway, as `perfmodel record` does).

Processes come and go (Python workers are forked per task set), so counters are tracked
per (pid, start time) and the last value seen of a process that has exited is kept. CPU
counts each process's own time only (a parent's ``children_*`` times would count reaped
children twice), so a process's last partial interval before it exits can be missed.
Network bytes are the host's counters over the run (the OS has no per-process figure;
loopback included), which is what a single-machine run shares.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import psutil

from perfmodel.profile.bundle import ResourceSample
from perfmodel.profile.record.proctree import ProcessTree

IGNORED_NAMES = frozenset({"py-spy"})
"""Recording helpers that may appear in the tree but are not part of the workload."""


@dataclass(slots=True)
class ResourceSummary:
    """Totals over a run: CPU seconds of the tree, peak summed RSS, bytes moved."""

    interval_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_bytes: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    net_sent_bytes: int = 0
    net_recv_bytes: int = 0
    samples: list[ResourceSample] = field(default_factory=list)


@dataclass(slots=True)
class _ProcState:
    cpu_s: float = 0.0
    read_bytes: int = 0
    write_bytes: int = 0


class ProcessTreeMonitor:
    """Samples ``root_pid`` and all its descendants on a background thread until stopped.

    With ``include_root`` false the root itself is left out (a runner monitoring its own
    children). ``clock`` returns wall-clock seconds; tests pass a fake one.
    """

    def __init__(
        self,
        root_pid: int,
        interval_s: float = 0.25,
        include_root: bool = True,
        ignored_names: Iterable[str] = IGNORED_NAMES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root_pid = root_pid
        self.interval_s = interval_s
        self.include_root = include_root
        self.ignored_names = frozenset(ignored_names)
        self._clock = clock
        self._procs: dict[tuple[int, float], _ProcState] = {}
        self._tree = ProcessTree(root_pid)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._net0 = (0, 0)
        self._last_cpu = 0.0
        self._last_t = 0.0
        self.summary = ResourceSummary(interval_s=interval_s)

    def start(self, background: bool = True) -> None:
        """Take the baselines; with ``background`` sample on a thread of the monitor's own,
        else the caller calls :meth:`sample` every ``interval_s`` (sharing its tree walk)."""
        self._last_t = self._clock()
        net = psutil.net_io_counters()
        self._net0 = (net.bytes_sent, net.bytes_recv) if net else (0, 0)
        if not background:
            return
        self._thread = threading.Thread(target=self._loop, name="perfmodel-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> ResourceSummary:
        """Stop sampling (one last sample is taken) and return the totals."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        return self.summary

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def _filter(self, tree: list[psutil.Process]) -> list[psutil.Process]:
        out = []
        for proc in tree:
            if not self.include_root and proc.pid == self.root_pid:
                continue
            try:
                if proc.name() in self.ignored_names:
                    continue
            except (psutil.Error, OSError):
                continue
            out.append(proc)
        return out

    def sample(self, tree: list[psutil.Process] | None = None) -> ResourceSample:
        """Take one sample now (called by the thread, by a caller driving the monitor, and
        for the last one). ``tree`` is the root and its descendants as the caller just
        listed them (`ProcessTree.processes`); without it the monitor lists them itself."""
        with self._lock:
            return self._sample(self._tree.processes() if tree is None else tree)

    def _sample(self, tree: list[psutil.Process]) -> ResourceSample:
        rss = 0
        live = 0
        for proc in self._filter(tree):
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
            state.cpu_s = max(state.cpu_s, times.user + times.system)
            state.read_bytes = max(state.read_bytes, rb)
            state.write_bytes = max(state.write_bytes, wb)
            rss += mem.rss
            live += 1
        now = self._clock()
        cpu_total = sum(s.cpu_s for s in self._procs.values())
        dt = now - self._last_t
        cores = (cpu_total - self._last_cpu) / dt if dt > 0 else 0.0
        self._last_cpu, self._last_t = cpu_total, now
        net = psutil.net_io_counters()
        sent = (net.bytes_sent - self._net0[0]) if net else 0
        recv = (net.bytes_recv - self._net0[1]) if net else 0
        s = ResourceSample(
            t_ms=now * 1000.0,
            cpu_cores=max(0.0, cores),
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
