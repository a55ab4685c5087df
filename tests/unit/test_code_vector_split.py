"""How a code vector splits a task's unattributed time (hand-built stages, known answers)."""

from __future__ import annotations

import pytest

from perfmodel.dag.resources import ResourceVector
from perfmodel.simulate.config import baseline_config
from perfmodel.simulate.stage_work import CPU, CPU_OTHER, DISK, NETWORK, SPILL
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload


def _stage(task: TaskSpec, vector: dict[str, float]):  # type: ignore[no-untyped-def]
    p = build_synthetic([[StageSpec(0, [task] * 4)]], 1)
    work = compile_workload(p, baseline_config(p), {(0, 0): ResourceVector(vector)})
    return work.stages[0], baseline_config(p)


def test_disk_share_without_bytes_is_cpu() -> None:
    # 800 ms of each task unattributed; code says half the time is disk, but the task
    # read, wrote and spilled nothing: no byte reached a device, so it is CPU.
    work, _ = _stage(TaskSpec(run_ms=1000, cpu_ms=200), {"cpu": 0.5, "disk": 0.5})
    comp = work.components
    assert comp[DISK].sum() == 0.0
    assert comp[CPU_OTHER] == pytest.approx([800.0] * 4)
    assert comp[CPU] == pytest.approx([200.0] * 4)


def test_disk_share_is_spill_bounded_by_the_bytes_spilled() -> None:
    spilled = 50 << 20  # 50 MiB spilled per task: written and read back
    work, base = _stage(
        TaskSpec(run_ms=1000, cpu_ms=200, disk_spill=spilled), {"cpu": 0.2, "disk": 0.8}
    )
    cap_ms = 2 * spilled * 1000.0 / base.disk_bw
    assert cap_ms < 800.0  # the test means something
    comp = work.components
    # Spilled bytes are spill (which more memory removes), not input/output disk time.
    assert comp[SPILL] == pytest.approx([cap_ms] * 4)
    assert comp[DISK].sum() == 0.0
    assert (comp[SPILL] + comp[CPU_OTHER]) == pytest.approx([800.0] * 4)


def test_network_share_is_bounded_by_the_remote_bytes() -> None:
    # Code says 70% of the time is network (join and exchange frames), but the task fetched
    # 10 MiB from other hosts: at the baseline's link that explains a few ms, not 700.
    remote = 10 << 20
    work, base = _stage(
        TaskSpec(run_ms=1000, cpu_ms=200, remote_read=remote), {"cpu": 0.3, "network": 0.7}
    )
    cap_ms = remote * 1000.0 / base.net_bw * max(1.0, work.concurrency)
    assert cap_ms < 700.0  # the test means something
    comp = work.components
    assert comp[NETWORK] == pytest.approx([cap_ms] * 4)
    assert (comp[NETWORK] + comp[CPU_OTHER]) == pytest.approx([800.0] * 4)


def test_network_share_without_remote_bytes_is_cpu() -> None:
    # Local mode: nothing crosses a link, so network code is CPU work.
    work, _ = _stage(TaskSpec(run_ms=1000, cpu_ms=200), {"cpu": 0.5, "network": 0.5})
    assert work.components[NETWORK].sum() == 0.0
    assert work.components[CPU_OTHER] == pytest.approx([800.0] * 4)
