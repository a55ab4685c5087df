"""Where per-thread CPU was measured, the unattributed time it leaves off CPU is not CPU
(`perfmodel.simulate.off_cpu`): hand-built stages with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.simulate.app_tasks import AppTasks
from perfmodel.simulate.config import baseline_config
from perfmodel.simulate.off_cpu import off_cpu_share
from perfmodel.simulate.stage_work import (
    CPU,
    CPU_OTHER,
    DISK,
    NETWORK,
    OTHER,
    SPILL,
    StageWork,
    stage_works,
)
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.thread_demand import StageThreadCpu

KEY: StageKey = (0, 0)


def _measured(python_cpu: float, wait: float, python_wait: float = 0.0) -> StageThreadCpu:
    """Four tasks' sums: thread CPU 4 × 200 ms over 4 × 1000 ms of run time."""
    return StageThreadCpu(
        thread_cpu_ms=800.0,
        python_cpu_ms=python_cpu,
        run_ms=4000.0,
        thread_wait_ms=wait,
        python_wait_ms=python_wait,
        background_ms=0.0,
    )


def _work(
    task: TaskSpec, vector: dict[str, float] | None, threaded: StageThreadCpu | None
) -> tuple[StageWork, float]:
    """The stage of four such tasks as compiled, and the baseline's disk ms per byte."""
    profile = build_synthetic([[StageSpec(0, [task] * 4)]], 1)
    base = baseline_config(profile)
    tasks = AppTasks.of(profile)
    stage = profile.stages[KEY]
    (work,) = stage_works(
        [stage],
        [0],
        tasks,
        base,
        task_concurrency(tasks.table),
        {KEY: ResourceVector(vector)} if vector else None,
        {},
        {KEY: threaded} if threaded else None,
    )
    return work, 1000.0 * max(1.0, work.concurrency) / base.disk_bw


def test_the_share_is_what_python_cpu_and_waits_leave() -> None:
    # 3200 ms unattributed: Python workers 1200 ms of CPU, the thread waited 400 ms for a
    # core (the worker 100 ms: the lanes run side by side, so the longer wait counts).
    assert off_cpu_share(_measured(1200.0, 400.0, 100.0), 3200.0) == pytest.approx(0.5)
    # More measured than unattributed (a worker pipelined with its thread): none off CPU.
    assert off_cpu_share(_measured(3000.0, 400.0), 3200.0) == 0.0
    assert off_cpu_share(_measured(0.0, 0.0), 0.0) == 0.0


def test_off_cpu_time_without_bytes_is_other_not_cpu() -> None:
    work, _ = _work(TaskSpec(run_ms=1000, cpu_ms=200), None, _measured(1200.0, 400.0))
    comp = work.components
    assert comp[CPU] == pytest.approx([200.0] * 4)
    assert comp[OTHER] == pytest.approx([400.0] * 4)
    assert comp[CPU_OTHER] == pytest.approx([400.0] * 4)
    assert comp[DISK].sum() == 0.0


def test_unmeasured_stage_keeps_all_it_cannot_explain_as_cpu() -> None:
    work, _ = _work(TaskSpec(run_ms=1000, cpu_ms=200), None, None)
    assert work.components[OTHER].sum() == 0.0
    assert work.components[CPU_OTHER] == pytest.approx([800.0] * 4)


def test_input_bytes_are_disk_only_up_to_the_off_cpu_time() -> None:
    small = 10 << 20  # explains less than the 400 ms off CPU
    work, ms_per_byte = _work(
        TaskSpec(run_ms=1000, cpu_ms=200, input_bytes=small), None, _measured(1200.0, 400.0)
    )
    io = small * ms_per_byte
    assert io < 400.0  # the test means something
    comp = work.components
    assert comp[DISK] == pytest.approx([io] * 4)
    assert comp[OTHER] == pytest.approx([400.0 - io] * 4)
    assert comp[CPU_OTHER] == pytest.approx([400.0] * 4)
    # Bytes that would explain more than was off CPU are bounded by the measurement.
    big = 1 << 30
    work, _ = _work(
        TaskSpec(run_ms=1000, cpu_ms=200, input_bytes=big), None, _measured(1200.0, 400.0)
    )
    assert work.components[DISK] == pytest.approx([400.0] * 4)
    assert work.components[CPU_OTHER] == pytest.approx([400.0] * 4)


def test_a_vector_splits_only_the_off_cpu_time() -> None:
    # Code says 90% CPU and 10% disk; measurement says half the unattributed time was off
    # CPU. The CPU share does not take it back: code says which resource, not how much.
    work, _ = _work(
        TaskSpec(run_ms=1000, cpu_ms=200, input_bytes=1 << 30),
        {"cpu": 0.9, "disk": 0.1},
        _measured(1200.0, 400.0),
    )
    comp = work.components
    assert comp[DISK] == pytest.approx([400.0] * 4)
    assert comp[CPU_OTHER] == pytest.approx([400.0] * 4)
    # A vector with memory and disk splits it by their shares (memory is spill).
    work, _ = _work(
        TaskSpec(run_ms=1000, cpu_ms=200, input_bytes=1 << 30),
        {"cpu": 0.5, "disk": 0.25, "memory": 0.25},
        _measured(1200.0, 400.0),
    )
    comp = work.components
    assert comp[DISK] == pytest.approx([200.0] * 4)
    assert comp[SPILL] == pytest.approx([200.0] * 4)
    assert comp[CPU_OTHER] == pytest.approx([400.0] * 4)


def test_a_vector_without_bytes_to_back_it_leaves_off_cpu_time_other() -> None:
    work, _ = _work(
        TaskSpec(run_ms=1000, cpu_ms=200), {"cpu": 0.5, "disk": 0.5}, _measured(1200.0, 400.0)
    )
    comp = work.components
    assert comp[DISK].sum() == 0.0
    assert comp[OTHER] == pytest.approx([400.0] * 4)
    assert comp[CPU_OTHER] == pytest.approx([400.0] * 4)


def test_network_comes_first_and_may_be_measured_waits() -> None:
    # On a cluster, receiving shuffle blocks costs the executor the CPU its tasks wait
    # behind: the vector's network part is taken as without the measurement (bounded by
    # the remote bytes), even where the measurement leaves nothing off CPU.
    task = TaskSpec(run_ms=1000, cpu_ms=200, remote_read=200 << 20)
    vector = {"cpu": 0.5, "network": 0.5}
    unmeasured, _ = _work(task, vector, None)
    measured, _ = _work(task, vector, _measured(0.0, 3200.0))
    net = unmeasured.components[NETWORK]
    assert net.sum() > 0  # the test means something
    assert measured.components[NETWORK] == pytest.approx(net)
    assert measured.components[OTHER].sum() == 0.0
    total = measured.components[NETWORK] + measured.components[CPU_OTHER]
    assert total == pytest.approx(np.full(4, 800.0))


def test_remote_bytes_take_their_wire_time_whatever_the_fetch_wait_shows() -> None:
    """At the baseline's 10 Gbit/s, 375 MB take 300 ms on the wire: with 50 ms of fetch
    wait, 250 ms of the unattributed time is network too; with 400 ms of fetch wait, 300 ms
    is network and the other 100 ms is latency (`other`), which no bandwidth changes."""
    short = TaskSpec(run_ms=1000, cpu_ms=200, fetch_wait_ms=50, remote_read=375_000_000)
    work, _ = _work(short, None, None)
    assert work.components[NETWORK] == pytest.approx([300.0] * 4)
    assert work.components[OTHER].sum() == 0.0
    assert (work.components[CPU_OTHER] + work.components[DISK]) == pytest.approx([500.0] * 4)
    long = TaskSpec(run_ms=1000, cpu_ms=200, fetch_wait_ms=400, remote_read=375_000_000)
    work, _ = _work(long, None, None)
    assert work.components[NETWORK] == pytest.approx([300.0] * 4)
    assert work.components[OTHER] == pytest.approx([100.0] * 4)
    assert (work.components[CPU_OTHER] + work.components[DISK]) == pytest.approx([400.0] * 4)
    # Without remote bytes nothing is taken: local mode's figures are unchanged.
    local, _ = _work(TaskSpec(run_ms=1000, cpu_ms=200), None, None)
    assert local.components[NETWORK].sum() == 0.0 and local.components[OTHER].sum() == 0.0
