"""The processes below one root, listed cheaply enough to do several times a second.

``psutil.Process.children(recursive=True)`` reads ``/proc/<pid>/stat`` of *every* process on
the machine to learn its parent, each time it is called. `perfmodel record` lists the tree
four times a second for the whole run, on a machine the job keeps busy, so that cost is
recording overhead (measured: about half of perfmodel's own CPU during a run). A
process's parent does not change while both live, so the parent of a pid already seen in the
previous listing is remembered and only new pids are read. A child whose parent exits is
re-parented outside the tree and drops out of it, as with psutil's own walk. A pid reused
between two listings (its old process gone, a new one started within one poll period) would
keep the old parent; Linux hands pids out in sequence, so that takes the machine cycling
through its whole pid space within one poll period.
"""

from __future__ import annotations

from collections import defaultdict

import psutil


class ProcessTree:
    """Lists ``root_pid`` and its descendants; one handle per process across listings."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self._parents: dict[int, int] = {}
        self._handles: dict[int, psutil.Process] = {}

    def processes(self) -> list[psutil.Process]:
        """The root (while it runs) and every live descendant, parents before children.

        A handle is kept per pid so psutil's cached start time tells a reused pid apart
        (``is_running``), and callers can keep per-process state keyed by the handle.
        """
        parents = self._refresh_parents()
        children: dict[int, list[int]] = defaultdict(list)
        for pid, ppid in parents.items():
            if pid != ppid:
                children[ppid].append(pid)
        order: list[int] = []
        if self.root_pid in parents:
            order.append(self.root_pid)
        stack = [self.root_pid]
        while stack:
            pid = stack.pop()
            for child in sorted(children.get(pid, ())):
                order.append(child)
                stack.append(child)
        out = []
        for pid in order:
            handle = self._handle(pid)
            if handle is not None:
                out.append(handle)
        self._handles = {p.pid: p for p in out}
        return out

    def _refresh_parents(self) -> dict[int, int]:
        fresh: dict[int, int] = {}
        for pid in psutil.pids():
            ppid = self._parents.get(pid)
            if ppid is None:
                try:
                    ppid = psutil.Process(pid).ppid()
                except (psutil.Error, OSError):
                    continue
            fresh[pid] = ppid
        self._parents = fresh
        return fresh

    def _handle(self, pid: int) -> psutil.Process | None:
        known = self._handles.get(pid)
        if known is not None and known.is_running():
            return known
        try:
            return psutil.Process(pid)
        except (psutil.Error, OSError):
            return None
