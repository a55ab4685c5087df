"""The CPU limit a process runs under: its cgroup's CFS quota, in cores.

Why: an executor given one core by its cluster manager may run in a container (a YARN or
Kubernetes cgroup, the namespace cluster's worker groups) whose quota lets it use a quarter
of one. Spark's event log says one core; the executor's threads see a quarter. A bundle
that records the quota lets the replay tell a throttled executor from a busy host, and know
how fast the executor would run were the machine under it less crowded
(`perfmodel.simulate.shared_machine`).

cgroup v1 keeps the quota in the ``cpu`` controller (``cpu.cfs_quota_us`` over
``cpu.cfs_period_us``, −1 for none), cgroup v2 in ``cpu.max`` (``max 100000`` for none).
A group's limit is the smallest of its own and its ancestors'. Reading is best effort: a
process that is gone, or a machine without the files, has no known limit (None), never an
error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

PROC = Path("/proc")


def cpu_limit_cores(pid: int, proc: Path = PROC) -> float | None:
    """Cores the CFS quota of ``pid``'s cgroup allows (the smallest over its ancestors);
    None where no quota applies or it cannot be read."""
    try:
        membership = (proc / str(pid) / "cgroup").read_text()
        # Our own mounts: /proc/PID/cgroup names groups as seen from this process's
        # namespaces, and a process in another mount namespace (``ip netns exec``) may not
        # have the cgroup filesystems mounted at all.
        mounts = (proc / "self" / "mountinfo").read_text()
    except OSError:
        return None
    v1_path, v2_path = _cpu_group(membership)
    if v1_path is not None:
        root = _mount_of(mounts, v1=True)
        if root is not None:
            return _smallest(root, v1_path, _v1_limit)
    if v2_path is not None:
        root = _mount_of(mounts, v1=False)
        if root is not None:
            return _smallest(root, v2_path, _v2_limit)
    return None


def _cpu_group(membership: str) -> tuple[str | None, str | None]:
    """(the v1 ``cpu`` controller's group path, the v2 group path) from ``/proc/PID/cgroup``
    (lines ``id:controllers:path``)."""
    v1 = v2 = None
    for line in membership.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v1, v2


def _mount_of(mountinfo: str, v1: bool) -> Path | None:
    """Where the v1 ``cpu`` controller (or the v2 hierarchy) is mounted, from
    ``/proc/PID/mountinfo``: ``... mount-point ... - fstype source super-options``."""
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        fstype, options = tail[0], tail[2].split(",")
        if v1 and fstype == "cgroup" and "cpu" in options:
            return Path(_unescape(fields[4]))
        if not v1 and fstype == "cgroup2":
            return Path(_unescape(fields[4]))
    return None


def _unescape(text: str) -> str:
    """mountinfo escapes spaces and the like as octal (``\\040``)."""
    return text.encode().decode("unicode_escape") if "\\" in text else text


def _smallest(root: Path, group: str, read: Callable[[Path], float | None]) -> float | None:
    """The smallest limit over ``group`` and its ancestors below ``root``."""
    parts = [p for p in group.split("/") if p]
    best = math.inf
    for depth in range(len(parts), -1, -1):
        limit = read(root.joinpath(*parts[:depth]))
        if limit is not None:
            best = min(best, limit)
    return None if math.isinf(best) else best


def _v1_limit(directory: Path) -> float | None:
    try:
        quota = int((directory / "cpu.cfs_quota_us").read_text().split()[0])
        period = int((directory / "cpu.cfs_period_us").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _v2_limit(directory: Path) -> float | None:
    try:
        words = (directory / "cpu.max").read_text().split()
        if not words or words[0] == "max":
            return None
        period = int(words[1]) if len(words) > 1 else 100_000
        quota = int(words[0])
    except (OSError, ValueError, IndexError):
        return None
    return quota / period if quota > 0 and period > 0 else None
