"""Executors sharing one machine (`perfmodel.simulate.shared_machine`): the pressure law,
what a bundle's per-thread CPU says about a window, and the profile's ``executor_hosts``,
on hand-built series whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.profile.thread_cpu import HOST, HOST_USER, TASK, CpuSeries, ThreadCpu
from perfmodel.simulate import laws
from perfmodel.simulate.shared_machine import (
    NO_WINDOW,
    Window,
    estimate,
    machine_factor,
    machine_of,
)


def _ramp(cores: float, waits: float, t_end: float = 10_000.0, start: float = 0.0) -> CpuSeries:
    """A series using ``cores`` and waiting ``waits`` cores, steadily from ``start``."""
    t = np.linspace(start, t_end, 11)
    return CpuSeries(t, (t - start) * cores, (t - start) * waits)


def test_pressure_is_what_is_asked_over_the_cores() -> None:
    # 2 executors at a quarter core each and 0.4 cores of other load fit 2 cores: P = 1.
    assert laws.machine_pressure(2, 0.25, 0.4, 2.0) == pytest.approx(1.0)
    # 8 of them ask for 2.4 cores of 2: each runnable thread waits 1.2 times what it wants.
    assert laws.machine_pressure(8, 0.25, 0.4, 2.0) == pytest.approx(1.2)
    assert laws.shared_machine_factor(2, 8, 0.25, 0.4, 2.0) == pytest.approx(1.2)
    assert laws.shared_machine_factor(8, 2, 0.25, 0.4, 2.0) == pytest.approx(1 / 1.2)
    assert laws.shared_machine_factor(8, 8, 0.25, 0.4, 2.0) == pytest.approx(1.0)
    # Vectorised over stages.
    got = laws.shared_machine_factor(2, np.array([2.0, 4.0, 8.0]), 0.25, 1.0, 2.0)
    np.testing.assert_allclose(got, [1.0, 1.0, 1.5])


def test_a_crowded_window_gives_the_rest_of_the_machines_load_from_the_pressure() -> None:
    # Two executors, each quota 0.25, used 0.15 cores and waited 0.10: each wanted 0.25 and
    # got 0.15, so P = 0.5 / 0.3 = 5/3 and the rest wanted P·M − Σw = 10/3 − 0.5.
    measured = ThreadCpu(
        series={
            ("1", TASK): _ramp(0.15, 0.10),
            ("2", TASK): _ramp(0.15, 0.10),
            ("driver", TASK): _ramp(0.5, 0.5),  # the driver is the rest, not an executor
            ("9", TASK): _ramp(0.9, 0.0),  # an executor on another machine
        },
        has_wait=True,
    )
    m = estimate(
        measured,
        cores=2.0,
        limits={"1": 0.25, "2": 0.25},
        executor_cores={"1": 1, "2": 1},
        start_ms=0.0,
        first_task_ms=2_000.0,
        last_task_ms=10_000.0,
        stage_windows=[(2_000.0, 6_000.0), None],
    )
    assert m is not None
    assert (m.cores, m.executors, m.first_task_ms) == (2.0, 2, 2_000.0)
    w = m.tasks
    assert w.executors == 2
    assert w.wanted == pytest.approx(0.25)
    assert w.pressure == pytest.approx(5 / 3)
    assert w.other == pytest.approx(10 / 3 - 0.5)
    assert w.pressure_at(2, 2.0) == pytest.approx(w.pressure)  # the law gives it back
    assert m.stages[1] is NO_WINDOW
    assert m.stages[0].pressure == pytest.approx(5 / 3)
    # Four such executors would ask (1.0 + 2.83) / 2: 1.92 against 1.67.
    assert machine_factor(w, 2.0, 2, 4) == pytest.approx((1.0 + 10 / 3 - 0.5) / 2 / (5 / 3))
    assert machine_factor(w, 2.0, 2, 2) == 1.0
    assert machine_factor(NO_WINDOW, 2.0, 2, 8) == 1.0


def test_a_quiet_window_takes_the_rest_from_the_hosts_cpu() -> None:
    # No waits: the executors got what they wanted (0.2 cores each); the host's CPU was
    # 0.9 cores, so the rest used 0.5. Eight of them would want 1.6 + 0.5 of 2 cores.
    measured = ThreadCpu(
        series={
            ("1", TASK): _ramp(0.2, 0.0),
            ("2", TASK): _ramp(0.2, 0.0),
            (HOST, HOST_USER): _ramp(0.9, 0.0),
        },
        has_wait=True,
    )
    m = estimate(measured, 2.0, {"1": None, "2": None}, {"1": 1, "2": 1}, 0, 0, 10_000, [])
    assert m is not None
    assert m.tasks.pressure == 1.0
    assert m.tasks.other == pytest.approx(0.5)
    assert m.tasks.wanted == pytest.approx(0.2)
    assert machine_factor(m.tasks, 2.0, 2, 8) == pytest.approx((8 * 0.2 + 0.5) / 2)


def test_a_late_executor_counts_from_when_it_lived_and_its_quota_caps_what_it_wants() -> None:
    # Executor 2 started at 5 s: over [5 s, 10 s] it used 0.25 and waited 0.5, but its
    # quota is 0.25 cores, so it wanted 0.25 and got all of it.
    measured = ThreadCpu(
        series={("1", TASK): _ramp(0.1, 0.1), ("2", TASK): _ramp(0.25, 0.5, start=5_000.0)},
        has_wait=True,
    )
    m = estimate(measured, 2.0, {"1": 0.5, "2": 0.25}, {}, 0, 0, 10_000, [])
    assert m is not None
    assert m.tasks.executors == 2
    assert m.tasks.wanted == pytest.approx((0.2 + 0.25) / 2)
    assert m.tasks.pressure == pytest.approx(0.45 / 0.35)


def test_no_executor_of_the_machine_measured_is_none() -> None:
    measured = ThreadCpu(series={("driver", TASK): _ramp(1.0, 0.0)}, has_wait=True)
    assert estimate(measured, 2.0, {"1": 0.25}, {}, 0, 0, 10_000, []) is None


def test_executor_hosts_of_a_profile() -> None:
    extra = {
        "executor_hosts": {
            "machine_cores": 2,
            "executors": {"1": {"cpu_limit_cores": 0.25}, "2": {"cpu_limit_cores": None}},
        }
    }
    assert machine_of(extra) == (2.0, {"1": 0.25, "2": None})
    assert machine_of({}) is None
    assert machine_of({"executor_hosts": {"machine_cores": 0, "executors": {"1": {}}}}) is None
    assert machine_of({"executor_hosts": {"machine_cores": 2, "executors": {}}}) is None
    bad = {"executor_hosts": {"machine_cores": 2, "executors": {"1": {"cpu_limit_cores": -1}}}}
    assert machine_of(bad) == (2.0, {"1": None})


def test_window_pressure_at_uses_the_law() -> None:
    w = Window(executors=2, wanted=0.25, other=0.4, pressure=1.0)
    assert w.pressure_at(8, 2.0) == pytest.approx(1.2)
