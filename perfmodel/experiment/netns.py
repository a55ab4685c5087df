"""The Linux pieces a shaped cluster on one machine is made of: network namespaces joined by
veth pairs to a bridge, `tc` token buckets on the links, cgroup v1 groups for CPU and disk.

Every function here does one `ip`/`tc` call or one cgroup file operation and raises
`ClusterError` with the tool's own message when it fails; the ``remove_*`` functions are
idempotent (what is already gone is not an error), so a teardown can run any number of times,
after any failure. Nothing here listens on or routes to an address: the bridge gets no address
in the root namespace, so the namespaces reach each other and nothing else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from perfmodel.errors import PerfmodelError

CGROUP_ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000
"""CFS period; a quota of ``cores * CPU_PERIOD_US`` lets the group use that many cores."""


class ClusterError(PerfmodelError):
    """The cluster could not be set up, inspected or torn down (needs root and `ip netns`)."""


def run(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run one system tool; a failure becomes a `ClusterError` with its stderr."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ClusterError(f"cannot run {args[0]}: {exc}") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise ClusterError(f"`{' '.join(args)}` failed (exit {proc.returncode}): {detail}")
    return proc


def unavailable_reason() -> str | None:
    """Why a cluster cannot be made here (not root, no `ip netns`, no `tc`), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (this process is not root)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2)"
    probe = run(["ip", "netns", "list"], check=False)
    if probe.returncode != 0:
        return f"`ip netns` does not work here: {probe.stderr.strip()}"
    return None


def namespaces() -> list[str]:
    """Names of the network namespaces `ip netns` knows."""
    out = run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def links() -> list[str]:
    """Names of the links in the root namespace (veth ends shown without their ``@peer``)."""
    out = run(["ip", "-o", "link", "show"]).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@", 1)[0])
    return names


def add_bridge(name: str) -> None:
    run(["ip", "link", "add", name, "type", "bridge"])
    run(["ip", "link", "set", name, "up"])


def add_namespace(ns: str) -> None:
    run(["ip", "netns", "add", ns])
    run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"])


def add_veth(ns: str, host_end: str, bridge: str, address: str, prefix: int = 24) -> None:
    """A veth pair: ``host_end`` on the bridge, the other end ``eth0`` inside ``ns``."""
    peer = f"{host_end[:-2]}-n"
    run(["ip", "link", "add", host_end, "type", "veth", "peer", "name", peer])
    run(["ip", "link", "set", peer, "netns", ns])
    run(["ip", "netns", "exec", ns, "ip", "link", "set", peer, "name", "eth0"])
    run(["ip", "netns", "exec", ns, "ip", "addr", "add", f"{address}/{prefix}", "dev", "eth0"])
    run(["ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up"])
    run(["ip", "link", "set", host_end, "master", bridge])
    run(["ip", "link", "set", host_end, "up"])


def tbf_args(rate_mbit: float) -> list[str]:
    """A token bucket at ``rate_mbit``: the bucket holds 4 ms of traffic (at least 32 KiB, so
    a full-size frame always fits) and a packet waits at most 100 ms before it is dropped."""
    rate_bytes = rate_mbit * 1e6 / 8
    burst = max(int(rate_bytes * 0.004), 32 * 1024)
    return ["tbf", "rate", f"{rate_mbit:g}mbit", "burst", str(burst), "latency", "100ms"]


def shape_link(ns: str, host_end: str, rate_mbit: float) -> None:
    """Limit both directions of a namespace's link: its ``eth0`` sends at most ``rate_mbit``,
    and the bridge's end sends at most ``rate_mbit`` towards it."""
    tbf = tbf_args(rate_mbit)
    run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "eth0", "root", *tbf])
    run(["tc", "qdisc", "replace", "dev", host_end, "root", *tbf])


def qdiscs(ns: str | None, dev: str) -> str:
    """`tc qdisc show` of one link (inside ``ns``, or in the root namespace when None)."""
    cmd = ["tc", "qdisc", "show", "dev", dev]
    proc = run(["ip", "netns", "exec", ns, *cmd] if ns else cmd, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def namespace_pids(ns: str) -> list[int]:
    """Processes running in a network namespace."""
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def remove_namespace(ns: str) -> None:
    """Delete a namespace (its ``eth0`` goes with it, and so does the veth's other end)."""
    if ns in namespaces():
        run(["ip", "netns", "del", ns])


def remove_link(name: str) -> None:
    """Delete a host-side link, if it is still there. The kernel removes a veth's host end on
    its own once the namespace holding the other end is gone, and does so after ``ip netns
    del`` returns: a link listed a moment ago may vanish before it is deleted, which is done."""
    if name not in links():
        return
    try:
        run(["ip", "link", "del", name])
    except ClusterError:
        if name in links():
            raise


def backing_device(path: Path) -> str:
    """``major:minor`` of the block device holding ``path`` (what blkio throttles)."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    # A partition's throttle must name the whole disk; sysfs knows which disk a partition is of.
    sysfs = Path(f"/sys/dev/block/{major}:{minor}")
    if (sysfs / "partition").is_file():
        disk = (sysfs.resolve().parent / "dev").read_text().strip()
        return disk
    return f"{major}:{minor}"


def cgroup_dir(controller: str, group: str) -> Path:
    return CGROUP_ROOT / controller / group


def make_cgroup(
    group: str,
    *,
    cpu_cores: float | None = None,
    disk_bps: int | None = None,
    disk_device: str | None = None,
) -> list[str]:
    """Create ``group`` under each controller a limit needs; the controllers used.

    CPU: a CFS quota of ``cpu_cores`` cores. Disk: blkio throttling of reads and writes on
    ``disk_device`` to ``disk_bps`` bytes/s (cgroup v1 throttles direct I/O and the writes a
    process flushes itself; page-cache writeback done later by the kernel is not charged).
    """
    used: list[str] = []
    if cpu_cores is not None:
        path = cgroup_dir("cpu", group)
        _require_controller("cpu")
        path.mkdir(exist_ok=True)
        used.append("cpu")
        (path / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(int(cpu_cores * CPU_PERIOD_US)))
    if disk_bps is not None and disk_device is not None:
        path = cgroup_dir("blkio", group)
        _require_controller("blkio")
        path.mkdir(exist_ok=True)
        used.append("blkio")
        for kind in ("read", "write"):
            (path / f"blkio.throttle.{kind}_bps_device").write_text(f"{disk_device} {disk_bps}")
    return used


def _require_controller(controller: str) -> None:
    if not (CGROUP_ROOT / controller / "tasks").is_file():
        raise ClusterError(
            f"the cgroup v1 controller {controller!r} is not mounted at "
            f"{CGROUP_ROOT / controller}; run without that limit"
        )


def join_cgroups(group: str, controllers: list[str]) -> None:
    """Move the calling process into ``group`` (children it starts later inherit it)."""
    for controller in controllers:
        (cgroup_dir(controller, group) / "tasks").write_text(str(os.getpid()))


def cgroups_named(prefix: str) -> list[tuple[str, str]]:
    """(controller, group) for every cgroup whose name starts with ``prefix``."""
    found = []
    for controller in ("cpu", "blkio"):
        base = CGROUP_ROOT / controller
        if base.is_dir():
            found += [(controller, p.name) for p in base.glob(f"{prefix}*") if p.is_dir()]
    return found


def remove_cgroup(controller: str, group: str) -> None:
    """Remove an empty cgroup (the caller has ended its processes first)."""
    path = cgroup_dir(controller, group)
    if path.is_dir():
        try:
            path.rmdir()
        except OSError as exc:
            raise ClusterError(f"cannot remove cgroup {path}: {exc.strerror}") from None
