"""Issue 42, class 1: dynamic allocation with 30,000 executors claiming 10,000 slots each
sizes nothing by those numbers: memory grows with executors + tasks, and the answer is the
one of executors holding just enough slots. Each case replays 30,000 executors twice under
tracemalloc, seconds of work, so it runs with the end-to-end tests; the policy on small
drawn cases is in tests/unit/test_hostile_bounds.py and tests/unit/test_allocation_replay.py."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.simulate.allocation_replay import run_dynamic
from tests.unit.allocation_helpers import (
    cluster_profile,
    compiled,
    equal_tasks,
    plan,
    slot_durations,
)


@settings(max_examples=3, deadline=None)
@given(n_tasks=st.integers(100, 300), tpe=st.sampled_from([2, 500, 10_000]))
def test_thirty_thousand_executors_of_ten_thousand_cores_size_nothing(
    n_tasks: int, tpe: int
) -> None:
    """30,000 executors claiming 10,000 slots each: memory grows with executors + tasks
    (it was executors × min(slots, tasks): 4 GB for 100,000 executors and 200 tasks), and
    the answer is the one of executors holding just enough slots."""
    _, workload = compiled(
        cluster_profile([[equal_tasks(0, n_tasks, 1000.0), equal_tasks(1, 7, 500.0, [0])]])
    )
    durations = slot_durations(workload)
    big = plan(tpe, min_executors=30_000, max_executors=30_000, initial_setting=30_000)
    tracemalloc.start()
    try:
        line, executors = run_dynamic(workload, durations, big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"{peak / 1e6:.0f} MB"
    assert len(executors.executors) == 30_000
    small_tpe = min(tpe, n_tasks)
    small = plan(small_tpe, min_executors=30_000, max_executors=30_000, initial_setting=30_000)
    reference, _ = run_dynamic(workload, durations, small)
    assert line.end_ms == reference.end_ms
    assert line.stage_complete_ms == reference.stage_complete_ms
