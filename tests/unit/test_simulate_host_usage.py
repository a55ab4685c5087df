"""Measured CPU demand from the host's CPU use: known answers on hand-built timelines."""

from __future__ import annotations

import pytest

from perfmodel.dag.model import HostUsage
from perfmodel.dag.tasks import TaskMetrics, TaskRun
from perfmodel.simulate.config import BaselineOverrides, WhatIf, baseline_config
from perfmodel.simulate.host_usage import StageCpu, stage_cpu
from perfmodel.simulate.replay import replay
from perfmodel.simulate.stage_work import measured_demand
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload


def _task(tid: int, stage: int, launch: float, finish: float) -> TaskRun:
    return TaskRun(
        task_id=tid,
        index=tid,
        attempt=0,
        stage_id=stage,
        stage_attempt=0,
        executor_id="driver",
        host="localhost",
        launch_ms=launch,
        finish_ms=finish,
        status="SUCCESS",
        metrics=TaskMetrics(run_ms=finish - launch),
    )


def _usage(points: list[tuple[float, float]], step: float = 250.0) -> HostUsage:
    """A monitor's samples: ``cores`` busy from each point's time to the next one's."""
    t_ms, cores = [0.0], [0.0]
    for (start, c), (end, _) in zip(points, points[1:], strict=False):
        t = start
        while t < end:
            t += step
            t_ms.append(t)
            cores.append(c)
    return HostUsage(t_ms=t_ms, cores=cores)


def test_one_task_alone_gets_all_the_cpu() -> None:
    usage = _usage([(0, 1.5), (10_000, 0)])
    out = stage_cpu(usage, 2, {(0, 0): [_task(0, 0, 0, 10_000)]})
    assert out[(0, 0)].cpu_ms == pytest.approx(15_000)
    assert out[(0, 0)].cores_per_task == pytest.approx(1.5)
    assert out[(0, 0)].utilisation == pytest.approx(0.75)


def test_overlapping_stages_share_the_busy_cores() -> None:
    usage = _usage([(0, 1.0), (5000, 2.0), (10_000, 0)])
    out = stage_cpu(
        usage, 2, {(0, 0): [_task(0, 0, 0, 10_000)], (1, 0): [_task(1, 1, 5000, 10_000)]}
    )
    assert out[(0, 0)].cpu_ms == pytest.approx(10_000)
    assert out[(1, 0)].cpu_ms == pytest.approx(5000)
    assert out[(0, 0)].utilisation == pytest.approx(0.75)
    assert out[(1, 0)].utilisation == pytest.approx(1.0)


def test_demand_below_saturation_is_what_was_measured() -> None:
    assert measured_demand(StageCpu(cpu_ms=1500, task_ms=1000, utilisation=0.75), 900) == 1.5


def test_saturated_demand_comes_from_the_longest_lane() -> None:
    # Saturated: 1 core per task observed, but the thread did half the work and the Python
    # worker the other half, side by side: alone the task would keep two cores busy.
    assert measured_demand(StageCpu(cpu_ms=2000, task_ms=2000, utilisation=0.98), 1000) == 2.0
    # A JVM-only task (thread did nearly all of it) gains little.
    got = measured_demand(StageCpu(cpu_ms=2000, task_ms=2000, utilisation=0.98), 1800)
    assert got == pytest.approx(2000 / 1800)


def test_measured_demand_limits_the_gain_of_a_second_slot() -> None:
    """local[1] on 2 cores, each task busy 1.5 cores (a Python worker beside the thread):
    two slots put 3 cores of demand on 2 cores, so the stage speeds up 2/1.5, not 2×."""
    task = TaskSpec(run_ms=1000, cpu_ms=300)
    profile = build_synthetic([[StageSpec(0, [task] * 8)]], 1)
    profile.extra["host_cores"] = 2
    profile.host_usage = _usage([(0, 1.5), (8000, 0)], step=100)
    base = baseline_config(profile)
    assert base.host_cores == 2 and not base.host_cores_assumed
    work = compile_workload(profile, base)
    assert work.stages[0].cpu_demand == pytest.approx(1.5, rel=0.02)
    assert any("measured from the host's CPU use" in n for n in work.notes)
    two = replay(profile, WhatIf(cores=2), baseline=base).predicted_s
    assert two == pytest.approx(8.0 / (2 / 1.5), rel=0.03)
    # Without the measurement the task thread's view says 1 core: a clean 2× gain.
    profile.host_usage = None
    known = baseline_config(profile, BaselineOverrides(host_cores=2))
    assert replay(profile, WhatIf(cores=2), baseline=known).predicted_s == pytest.approx(4.0)


def test_working_set_is_bounded_by_what_the_task_read() -> None:
    import numpy as np

    from perfmodel.simulate.rescale import READ_EXPANSION, working_set

    mib = 1 << 20
    task = TaskSpec(run_ms=1000, cpu_ms=900, peak_memory=500 * mib)
    work = compile_workload(
        build_synthetic([[StageSpec(0, [task] * 3)]], 1),
        baseline_config(build_synthetic([[StageSpec(0, [task] * 3)]], 1)),
    ).stages[0]
    work.read_bytes = np.array([30.0 * mib, 0.0, 300.0 * mib])
    work.memory_spill = np.array([0.0, 0.0, 0.0])
    got = working_set(work)
    # A hash map grown into ample memory: bounded by the data read; no data read: the peak.
    assert got.tolist() == [30 * mib * READ_EXPANSION, 500 * mib, 500 * mib]
    work.memory_spill = np.array([100.0 * mib, 0.0, 0.0])
    assert working_set(work)[0] == 600 * mib  # it spilled: it needed held + spilled
