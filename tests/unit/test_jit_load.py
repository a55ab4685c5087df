"""The co-running ``γ`` from how much the JVM compiles (`perfmodel.simulate.jit_load`) and
its slope's fit from pairs of runs (`experiment.co_running.jit_slope`), on hand-built
numbers with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.experiment.co_running import RunCpu, jit_slope
from perfmodel.profile import thread_cpu
from perfmodel.profile.thread_cpu import GC, HOST, HOST_USER, JIT, PY_WORKER, TASK
from perfmodel.simulate import jit_load, laws
from perfmodel.simulate.jit_load import JIT_CO_RUNNING, R_MAX, co_running_gamma, jit_ratio
from tests.thread_cpu_rows import thread_rows


def _measured(rows: list[tuple[float, int, str, str, float]]) -> thread_cpu.ThreadCpu:
    return thread_cpu.from_table(thread_rows(rows))


def test_the_ratio_is_jit_cpu_over_the_tasks_cpu_within_the_run() -> None:
    measured = _measured(
        [
            # Start-up compiling before the run (t < 1000) is not the run's.
            (0.0, 2, "driver", JIT, 0.0),
            (1000.0, 2, "driver", JIT, 4000.0),
            (3000.0, 2, "driver", JIT, 5500.0),
            (1000.0, 1, "driver", TASK, 0.0),
            (3000.0, 1, "driver", TASK, 2000.0),
            (1000.0, 3, "driver", PY_WORKER, 0.0),
            (3000.0, 3, "driver", PY_WORKER, 1000.0),
            # GC and the host's counters are neither compiling nor the tasks' work.
            (1000.0, 4, "driver", GC, 0.0),
            (3000.0, 4, "driver", GC, 800.0),
            (1000.0, 0, HOST, HOST_USER, 1e9),
            (3000.0, 0, HOST, HOST_USER, 1e9 + 9000.0),
        ]
    )
    # 1500 ms of JIT over 2000 + 1000 ms of the tasks' work.
    assert jit_ratio(measured, 1000.0, 3000.0) == pytest.approx(0.5)
    # Tasks that used no CPU give no ratio.
    idle = _measured([(1000.0, 2, "driver", JIT, 0.0), (3000.0, 2, "driver", JIT, 10.0)])
    assert jit_ratio(idle, 1000.0, 3000.0) is None


def test_gamma_grows_with_compiling_and_is_taken_back_to_tasks_alone() -> None:
    # One task at a time: γ = slope · r.
    assert co_running_gamma(0.5, 1.0) == pytest.approx(JIT_CO_RUNNING * 0.5)
    assert co_running_gamma(0.0, 1.0) == 0.0
    # Measured with two tasks side by side, the tasks' CPU had grown by 1 + γ, so the ratio
    # alone was r(1 + γ): γ solves γ = slope · r · (1 + γ).
    gamma = co_running_gamma(1.2, 2.0)
    assert gamma == pytest.approx(JIT_CO_RUNNING * 1.2 * (1.0 + gamma))
    assert gamma > co_running_gamma(1.2, 1.0)
    # Beyond what the fit workloads showed the law is held; unmeasured: the constant.
    assert co_running_gamma(50.0, 1.0) == pytest.approx(JIT_CO_RUNNING * R_MAX)
    assert co_running_gamma(50.0, 2.0) == pytest.approx(JIT_CO_RUNNING * R_MAX)
    assert co_running_gamma(None, 2.0) == laws.CO_RUNNING_CPU


def test_mean_co_running_weights_by_cpu_and_stops_at_the_cores() -> None:
    cpu = np.array([100.0, 300.0, 0.0])
    # The second task ran beside 3 others on a 2-core host: 2 of them at once on cores.
    assert jit_load.mean_co_running(cpu, np.array([1.0, 4.0, 9.0]), 2) == pytest.approx(1.75)
    assert jit_load.mean_co_running(np.zeros(2), np.array([2.0, 2.0]), 2) == 1.0


def _run(workload: str, cores: int, cpu_s: float, co: float, ratio: float | None) -> RunCpu:
    return RunCpu(workload, cores, 1 << 30, cpu_s, co, jit_ratio=ratio)


def test_the_slope_is_least_squares_through_the_origin_over_pairs() -> None:
    # Workload a: r = 0.5 alone and γ = 0.1 (110/100 at 2 tasks); workload b: r = 1, γ = 0.3.
    runs = [
        _run("a", 1, 100.0, 1.0, 0.5),
        _run("a", 2, 110.0, 2.0, 0.45),
        _run("b", 1, 100.0, 1.0, 1.0),
        _run("b", 2, 130.0, 2.0, 0.8),
        # A run without per-thread CPU pairs with nothing.
        _run("c", 1, 100.0, 1.0, None),
        _run("c", 2, 150.0, 2.0, None),
    ]
    slope, pairs = jit_slope(runs)
    assert pairs == 2
    assert slope == pytest.approx((0.5 * 0.1 + 1.0 * 0.3) / (0.5**2 + 1.0**2))
    assert jit_slope(runs[4:]) == (0.0, 0)
