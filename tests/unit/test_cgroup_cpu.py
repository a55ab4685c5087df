"""`cgroup_cpu.cpu_limit_cores`: a process's CPU quota read from hand-built ``/proc`` and
cgroup trees (v1 and v2), the smallest over the group's ancestors, and None where none
applies or nothing can be read."""

from __future__ import annotations

from pathlib import Path

from perfmodel.profile.record.cgroup_cpu import cpu_limit_cores

V1_MOUNTS = (
    "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
)


def _proc(tmp: Path, pid: int, membership: str, mountinfo: str) -> Path:
    proc = tmp / "proc"
    (proc / str(pid)).mkdir(parents=True)
    (proc / str(pid) / "cgroup").write_text(membership)
    (proc / "self").mkdir(exist_ok=True)
    (proc / "self" / "mountinfo").write_text(mountinfo)
    return proc


def _v1_group(root: Path, path: str, quota: int, period: int = 100_000) -> None:
    d = root.joinpath(*[p for p in path.split("/") if p])
    d.mkdir(parents=True, exist_ok=True)
    (d / "cpu.cfs_quota_us").write_text(f"{quota}\n")
    (d / "cpu.cfs_period_us").write_text(f"{period}\n")


def test_v1_quota_of_the_process_group(tmp_path: Path) -> None:
    root = tmp_path / "cg" / "cpu,cpuacct"
    mounts = V1_MOUNTS.replace("/sys/fs/cgroup/cpu,cpuacct", str(root))
    proc = _proc(tmp_path, 42, "4:memory:/x\n3:cpu,cpuacct:/pmc/w1\n0::/\n", mounts)
    _v1_group(root, "/", -1)
    _v1_group(root, "/pmc", -1)
    _v1_group(root, "/pmc/w1", 25_000)
    assert cpu_limit_cores(42, proc) == 0.25


def test_the_smallest_limit_over_the_ancestors_wins(tmp_path: Path) -> None:
    root = tmp_path / "cg" / "cpu,cpuacct"
    mounts = V1_MOUNTS.replace("/sys/fs/cgroup/cpu,cpuacct", str(root))
    proc = _proc(tmp_path, 7, "3:cpu,cpuacct:/a/b\n", mounts)
    _v1_group(root, "/", -1)
    _v1_group(root, "/a", 50_000, 200_000)  # 0.25 of a core, above
    _v1_group(root, "/a/b", 150_000)  # 1.5 cores of its own
    assert cpu_limit_cores(7, proc) == 0.25


def test_no_quota_is_none(tmp_path: Path) -> None:
    root = tmp_path / "cg" / "cpu,cpuacct"
    mounts = V1_MOUNTS.replace("/sys/fs/cgroup/cpu,cpuacct", str(root))
    proc = _proc(tmp_path, 7, "3:cpu,cpuacct:/a\n", mounts)
    _v1_group(root, "/", -1)
    _v1_group(root, "/a", -1)
    assert cpu_limit_cores(7, proc) is None


def test_v2_cpu_max(tmp_path: Path) -> None:
    root = tmp_path / "unified"
    mounts = f"29 23 0:25 / {root} rw,nosuid - cgroup2 cgroup2 rw\n"
    proc = _proc(tmp_path, 9, "0::/k8s/pod1\n", mounts)
    (root / "k8s" / "pod1").mkdir(parents=True)
    (root / "cpu.max").write_text("max 100000\n")
    (root / "k8s" / "cpu.max").write_text("max 100000\n")
    (root / "k8s" / "pod1" / "cpu.max").write_text("50000 100000\n")
    assert cpu_limit_cores(9, proc) == 0.5
    (root / "k8s" / "pod1" / "cpu.max").write_text("max 100000\n")
    assert cpu_limit_cores(9, proc) is None


def test_a_mount_point_with_a_space_is_unescaped(tmp_path: Path) -> None:
    root = tmp_path / "my cg"
    mounts = f"29 23 0:25 / {str(root).replace(' ', chr(92) + '040')} rw - cgroup2 cgroup2 rw\n"
    proc = _proc(tmp_path, 9, "0::/g\n", mounts)
    (root / "g").mkdir(parents=True)
    (root / "g" / "cpu.max").write_text("200000 100000\n")
    assert cpu_limit_cores(9, proc) == 2.0


def test_a_gone_process_or_missing_files_is_none(tmp_path: Path) -> None:
    proc = _proc(tmp_path, 1, "3:cpu,cpuacct:/a\n", "")  # no cgroup filesystem mounted
    assert cpu_limit_cores(1, proc) is None
    assert cpu_limit_cores(2, proc) is None  # no such process
    root = tmp_path / "cg"
    mounts = f"30 25 0:26 / {root} rw - cgroup cgroup rw,cpu\n"
    (proc / "self" / "mountinfo").write_text(mounts)
    (root / "a").mkdir(parents=True)
    (root / "a" / "cpu.cfs_quota_us").write_text("garbage\n")
    assert cpu_limit_cores(1, proc) is None
