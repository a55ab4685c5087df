"""The co-running CPU constant's measurement from pairs of runs (`experiment.co_running`)."""

from __future__ import annotations

import pytest

from perfmodel.experiment.co_running import RunCpu, pair_gamma


def _run(cpu_s: float, co_running: float, cores: int) -> RunCpu:
    return RunCpu("w", cores, 1 << 30, cpu_s, co_running)


def test_gamma_solves_the_cpu_ratio_of_two_runs() -> None:
    # One task at a time used 100 core-s; 1.8 tasks side by side on average used 108:
    # 108/100 = 1 + 0.8·γ, so γ = 0.1.
    assert pair_gamma(_run(100.0, 1.0, 1), _run(108.0, 1.8, 2)) == pytest.approx(0.1)
    # Both runs co-running: (1 + 3γ)/(1 + γ) = 130/110.
    lo, hi = _run(110.0, 2.0, 2), _run(130.0, 4.0, 4)
    gamma = pair_gamma(lo, hi)
    assert gamma is not None
    assert (1 + gamma * 3.0) / (1 + gamma * 1.0) == pytest.approx(130.0 / 110.0)


def test_runs_that_hardly_differ_say_nothing() -> None:
    assert pair_gamma(_run(100.0, 1.0, 1), _run(104.0, 1.1, 2)) is None
