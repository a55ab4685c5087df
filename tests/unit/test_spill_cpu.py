"""The spilling-CPU constant's measurement from runs that differ in memory
(`experiment.spill_cpu`)."""

from __future__ import annotations

import pytest

from perfmodel.experiment.co_running import RunCpu
from perfmodel.experiment.spill_cpu import measure_spill_cpu, pair_ns_per_byte


def _run(
    memory: int, stages: dict[int, tuple[float, float]], workload: str = "w", cores: int = 1
) -> RunCpu:
    return RunCpu(workload, cores, memory, 0.0, 1.0, stages=stages, same_but_memory=("p",))


def test_cpu_per_spilled_byte_by_stage() -> None:
    # Stage 3 spilled 1 GB with 512m and nothing with 2g, and used 2 s more CPU: 2 ns/B.
    # Stage 1 spilled in neither: its CPU noise (±0.5 s) must not count.
    small = _run(512 << 20, {1: (10.5, 0.0), 3: (7.0, 1e9)})
    large = _run(2 << 30, {1: (10.0, 0.0), 3: (5.0, 0.0)})
    assert pair_ns_per_byte(small, large) == [pytest.approx(2.0)]
    assert pair_ns_per_byte(large, small) == [pytest.approx(2.0)]


def test_small_spill_differences_say_nothing() -> None:
    a = _run(512 << 20, {3: (7.0, 10e6)})
    b = _run(2 << 30, {3: (5.0, 0.0)})
    assert pair_ns_per_byte(a, b) == []


def test_median_over_pairs_of_one_workload_and_cores_only() -> None:
    runs = [
        _run(512 << 20, {3: (7.0, 1e9)}),
        _run(2 << 30, {3: (5.0, 0.0)}),
        _run(1 << 30, {3: (6.0, 0.5e9)}),
        # Another core count: not paired with the one-core runs.
        _run(2 << 30, {3: (50.0, 0.0)}, cores=2),
        # Another workload: not paired either.
        _run(512 << 20, {3: (0.0, 1e9)}, workload="v"),
    ]
    spill = measure_spill_cpu(runs)
    assert spill.stages == 3
    assert spill.ns_per_byte == pytest.approx(2.0)
    assert set(spill.by_workload) == {"w"}


def test_no_pairs_no_constant() -> None:
    assert measure_spill_cpu([_run(1 << 30, {3: (5.0, 1e9)})]).stages == 0
