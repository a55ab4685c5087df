"""The driver's start-up on a machine the executors share (`shared_machine.DriverStart`):
the law, its measurement from per-thread CPU, and the replay's use of it where dynamic
allocation changes which executors start beside the driver, on hand-worked figures."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from perfmodel.profile.thread_cpu import TASK, CpuSeries, ThreadCpu
from perfmodel.simulate.allocation_settings import AllocationSettings
from perfmodel.simulate.replay import on_machine
from perfmodel.simulate.shared_machine import DriverStart, SharedMachine, Window, driver_start
from perfmodel.simulate.workload import JOB_SUBMIT
from tests.unit.allocation_helpers import cluster_profile, compiled, equal_tasks


def _start(starting: int = 8, startup_ms: float = 45_000.0) -> DriverStart:
    # 18 core-s of the driver's own work, wanting 2 cores; executors at a quarter core.
    return DriverStart(
        lag_ms=55_000.0,
        cpu_ms=18_000.0,
        want=2.0,
        starting=starting,
        startup_ms=startup_ms,
        quota=0.25,
    )


def test_starting_executors_that_take_the_machine_hold_the_driver_until_they_are_up() -> None:
    d = _start()
    # Eight executors at a quarter core take both cores for 45 s; then 18 core-s at 2 cores.
    assert d.lag_for(8, 45_000.0, 2.0) == pytest.approx(54_000.0)
    # None starting beside it (the policy asks only once the first job waits): 9 s.
    assert d.lag_for(0, 0.0, 2.0) == pytest.approx(9_000.0)
    assert d.lag_for(0, 30_000.0, 2.0) == pytest.approx(9_000.0)
    # Two leave 1.5 cores, enough to finish within their 30 s start-up: 18 / 1.5 = 12 s.
    assert d.lag_for(2, 30_000.0, 2.0) == pytest.approx(12_000.0)
    # Four leave 1 core for 10 s (10 core-s), then 8 core-s at 2 cores: 14 s.
    assert d.lag_for(4, 10_000.0, 2.0) == pytest.approx(14_000.0)


def _ramp(cores: float, waits: float, t_end: float = 20_000.0) -> CpuSeries:
    t = np.linspace(0.0, t_end, 21)
    return CpuSeries(t, t * cores, t * waits)


def test_measured_from_the_drivers_threads_before_its_first_job() -> None:
    measured = ThreadCpu(
        series={
            ("driver", "jvm other"): _ramp(0.3, 1.2),
            ("driver", "py driver"): _ramp(0.2, 1.0),
            ("1", TASK): _ramp(0.25, 3.0),  # an executor: not the driver's
        },
        has_wait=True,
    )
    d = driver_start(measured, 2.0, 0.25, 0.0, 10_000.0, [4_000.0, 6_000.0, 8_000.0, 15_000.0])
    assert d is not None
    assert d.lag_ms == 10_000.0
    assert d.cpu_ms == pytest.approx(5_000.0)  # 0.5 cores for 10 s
    assert d.want == 2.0  # 0.5 + 2.2 cores runnable, at most the machine's 2
    assert (d.starting, d.startup_ms) == (3, 6_000.0)  # registered before the first job
    assert driver_start(measured, 2.0, 0.25, 0.0, 0.0, []) is None
    assert driver_start(ThreadCpu(series={}, has_wait=True), 2.0, 0.25, 0.0, 1e4, []) is None


def _on_machine_workload(lag_ms: float, start: DriverStart):
    base, workload = compiled(cluster_profile([[equal_tasks(0, 8, 1000.0)]], slots=1))
    window = Window(8, 0.25, 0.5, 1.25)
    machine = SharedMachine(cores=2.0, executors=8, startup=window, tasks=window)
    first = next(i for i, m in enumerate(workload.milestones) if m.kind == JOB_SUBMIT)
    milestones = list(workload.milestones)
    milestones[first] = replace(milestones[first], lag_ms=lag_ms, observed_ms=lag_ms)
    workload = replace(
        workload,
        milestones=milestones,
        machine=replace(machine, first_task_ms=lag_ms + 500.0),
        driver_start=replace(start, lag_ms=lag_ms),
    )
    return base, workload, first


def test_a_dynamic_target_of_a_static_baseline_starts_the_driver_alone() -> None:
    base, workload, first = _on_machine_workload(55_000.0, _start())
    base = replace(base, executors=8)
    target = replace(base, allocation=AllocationSettings(enabled=True, max_executors=8))
    assert workload.allocation is not None
    run_on, lags = on_machine(workload, base, target)
    # 54 s by the law at the baseline, 9 s with nobody starting beside it: 55 s × 9/54.
    assert lags[2] == pytest.approx(9 / 54)
    assert run_on.milestones[first].lag_ms == pytest.approx(55_000.0 * 9 / 54)
    # The same configuration: nothing changes.
    same, lags = on_machine(workload, base, base)
    assert same is workload and lags == (1.0, 1.0, 1.0)


def test_a_static_target_of_a_dynamic_baseline_starts_its_executors_beside_the_driver() -> None:
    dynamic = AllocationSettings(enabled=True, max_executors=8)
    base, workload, first = _on_machine_workload(10_000.0, _start(starting=0, startup_ms=0.0))
    base = replace(base, executors=8, allocation=dynamic)
    target = replace(base, allocation=AllocationSettings())
    # The policy's executors registered 30 s after they were asked for: static ones,
    # asked for at the start, are taken to register 30 s in.
    facts = workload.allocation
    assert facts is not None
    costs = replace(facts.costs, request_ms=30_000.0, ready_ms=0.0, initial_ms=())
    workload = replace(workload, allocation=replace(facts, costs=costs))
    run_on, lags = on_machine(workload, base, target)
    # 9 s alone at the baseline; 30 s held by 8 starting executors, then 9 s: × 39/9.
    assert lags[2] == pytest.approx(39 / 9)
    assert run_on.milestones[first].lag_ms == pytest.approx(10_000.0 * 39 / 9)
