"""The C placement loop gives the pure-Python loop's numbers exactly (bit for bit).

The replay uses the C build of the placement loop where it is present; these tests replay
the same inputs through both and compare every float, on random stages (with many equal
durations and free times, where a heap could take either of two equal values) and on whole
workloads of the real logs.
"""

from __future__ import annotations

import heapq
import math
from array import array

import numpy as np
import pytest

from perfmodel.simulate import scheduler
from perfmodel.simulate.config import WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import slot_plan
from perfmodel.simulate.rescale import all_stage_times
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload
from tests.conftest import SHARED_EVENTLOGS

needs_c = pytest.mark.skipif(
    scheduler._place_c is None,
    reason="the C placement loop is not built (pip install -e . builds it)",
)


@needs_c
@pytest.mark.parametrize("seed", range(40))
def test_c_loop_equals_python_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 70))
    n = int(rng.integers(0, 600))
    # Coarse values make ties common: equal free times and equal durations.
    coarse = seed % 2 == 0
    free = rng.integers(0, 20, k).astype(float) if coarse else rng.exponential(50.0, k)
    durations = rng.integers(0, 10, n).astype(float) if coarse else rng.lognormal(3.0, 1.0, n)
    r = float(rng.choice([0.0, 5.0, 30.0]))
    limit = float(rng.choice([math.inf, 40.0, 200.0]))
    start = int(rng.integers(0, n + 1))
    py_heap = free.tolist()
    heapq.heapify(py_heap)
    c_heap = array("d", sorted(free.tolist()))
    py = scheduler._place(py_heap, durations.tolist(), start, r, limit, 0.0)
    c = scheduler._place_c(c_heap, durations, start, r, limit, 0.0)
    assert c == py
    assert sorted(c_heap) == sorted(py_heap)


@needs_c
def test_c_loop_rejects_buffers_of_other_types() -> None:
    with pytest.raises(TypeError):
        scheduler._place_c(array("d", [0.0]), np.arange(3, dtype=np.float32), 0, 0.0, math.inf, 0.0)


def _both_timelines(workload, durations, slots, monkeypatch):  # type: ignore[no-untyped-def]
    c_line = scheduler.run_schedule(workload, durations, slots)
    monkeypatch.setattr(scheduler, "_place_c", None)
    py_line = scheduler.run_schedule(workload, durations, slots)
    monkeypatch.undo()
    return c_line, py_line


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _assert_identical(c_line, py_line) -> None:  # type: ignore[no-untyped-def]
    assert c_line.end_ms == py_line.end_ms
    for field in ("stage_ready_ms", "stage_complete_ms", "milestone_ms"):
        got, want = getattr(c_line, field), getattr(py_line, field)
        assert all(_same(x, y) for x, y in zip(got, want, strict=True)), field


@needs_c
def test_synthetic_workload_replays_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [TaskSpec(run_ms=100 + 37 * (i % 7), cpu_ms=90) for i in range(300)]
    jobs = [
        [StageSpec(0, tasks), StageSpec(1, tasks[:50]), StageSpec(2, tasks[:7], [0, 1])],
        [StageSpec(3, tasks[:120])],
    ]
    profile = build_synthetic(jobs, 4, driver_gap_ms=120)
    base = baseline_config(profile)
    workload = compile_workload(profile, base)
    for cores in (1, 3, 16, 64):
        target = apply_what_if(base, WhatIf(cores=cores))
        times = all_stage_times(workload.stages, base, target)
        durations = [t.durations for t in times]
        _assert_identical(*_both_timelines(workload, durations, target.slots, monkeypatch))


REAL_LOGS = [
    "spark2-eventlog.zstd",
    "eventlog_4nodes_8cores_dynamic_alloc.zstd",
    "application_1506645932520_24630151",
]


@needs_c
@pytest.mark.parametrize("log", REAL_LOGS)
def test_real_log_replays_identically(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import perfmodel

    path = SHARED_EVENTLOGS / log
    if not path.exists():
        pytest.skip(f"shared event log {path} not found (../shared is absent)")
    analysis = perfmodel.load(path)
    workload, base = analysis.workload, analysis.baseline
    resize = WhatIf(cores=7) if base.local_mode else WhatIf(executors=3, executor_cores=5)
    for change in (WhatIf(cores=1), resize, WhatIf(cpu_speed=1.7)):
        target = apply_what_if(base, change)
        times = all_stage_times(workload.stages, base, target)
        durations = [t.durations for t in times]
        plan = slot_plan(workload, base, target)
        _assert_identical(*_both_timelines(workload, durations, plan, monkeypatch))


def test_nan_durations_take_the_python_loop() -> None:
    finite = np.array([1.0, 2.0, 3.0])
    assert scheduler._ordered_arrays([finite, [4.0, math.inf, -math.inf]]) is not None
    assert scheduler._ordered_arrays([finite, np.array([1.0, math.nan])]) is None
