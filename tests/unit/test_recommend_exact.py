"""The pruned search gives the exhaustive search's answers, figure for figure.

The search skips points whose lower bounds are strictly dominated by a replayed point
(`perfmodel.recommend.search`); these tests replay every point of each case as well and
compare: the recommended point, the Pareto front (order and figures), the ``top`` list, the
budget and deadline answers, and the figures of every point the pruned search priced.
Cases: hand-built profiles (skewed, multi-job, spilling, I/O-bound) against catalogs with
twins, hourly billing and fast and slow CPUs, and Hypothesis-drawn profiles and catalogs
(the same comparison on a real cluster log is in tests/e2e/test_recommend_real_log.py).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.recommend.search import Request, search
from perfmodel.simulate.config import BaselineOverrides
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from tests.recommend_helpers import (
    SyntheticAnalysis,
    assert_same_answers,
    catalog,
    request_fields,
    requests_for,
    row,
    search_or_error,
)

MB = 1_000_000


def _skewed_multi_job() -> SyntheticAnalysis:
    """Two jobs with driver gaps; many short tasks with a few long ones late in the stage
    (the case the start-and-finish bound is for), then an I/O stage and a spilling one."""
    rng = random.Random(7)
    many = [TaskSpec(rng.uniform(5, 15), cpu_ms=rng.uniform(2, 5)) for _ in range(400)]
    for i in (150, 320, 390):
        many[i] = TaskSpec(400, cpu_ms=300, gc_ms=40)
    io = [
        TaskSpec(80, cpu_ms=10, shuffle_write_ms=rng.uniform(20, 60), fetch_wait_ms=5)
        for _ in range(60)
    ]
    spill = [
        TaskSpec(300, cpu_ms=60, peak_memory=10**8, memory_spill=6 * 10**8, disk_spill=2 * 10**8)
        for _ in range(16)
    ]
    jobs = [[StageSpec(0, many), StageSpec(1, io, [0])], [StageSpec(2, spill)]]
    profile = build_synthetic(jobs, 4, driver_gap_ms=250)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=4, disk_bw=200 * MB))


def _uniform_cpu() -> SyntheticAnalysis:
    """Equal tasks: bounds are often exact, so ties between points are common."""
    profile = build_synthetic([[StageSpec(0, [TaskSpec(1000, cpu_ms=1000)] * 48)]], 2)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=2))


def _executor_background() -> SyntheticAnalysis:
    """Executor JVMs that pay CPU beside their tasks (`executor_background`): more nodes
    make each task's CPU dearer, which the bounds must know to stay below the replays."""
    analysis = _skewed_multi_job()
    for work in analysis.workload.stages:
        work.executor_background = 0.8
    return analysis


def _co_running_tasks() -> SyntheticAnalysis:
    """Tasks that take more CPU beside each other (`laws.co_running_factor`), measured on 4
    slots of a 4-core host: targets with fewer tasks per host make each task cheaper, so the
    bounds must apply the same factor or they would rise above the replay."""
    analysis = _skewed_multi_job()
    for work in analysis.workload.stages:
        work.co_running = 0.3
    return analysis


MIXED_CATALOG = (
    row("s2", 2, 8, 0.10),
    row("s2-twin", 2, 8, 0.10),  # the same machine at the same price: exact ties
    row("s2-dear", 2, 8, 0.12),
    row("m8", 8, 32, 0.38, cpu_speed=1.2, disk_mbps=500),
    row("c16", 16, 32, 0.62, cpu_speed=1.1, network_gbps=25),
    row("h4", 4, 32, 0.20, granularity=3600, minimum=3600),
    row("slow4", 4, 16, 0.12, cpu_speed=0.6, disk_mbps=60),
)


@pytest.mark.parametrize("refine", [True, False])
@pytest.mark.parametrize(
    "build", [_skewed_multi_job, _uniform_cpu, _executor_background, _co_running_tasks]
)
def test_pruned_search_equals_exhaustive_on_hand_built_profiles(
    build: object, refine: bool
) -> None:
    """With and without the refined bound before each replay (`Request.refine`)."""
    analysis = build()  # type: ignore[operator]
    machines = catalog(*MIXED_CATALOG)
    full = search(analysis, machines, Request(max_nodes=6, exhaustive=True))
    pruned_total = full_total = 0
    for request in requests_for(full, 6):
        request = Request(**{**request_fields(request), "refine": refine})
        pruned, exhaustive = assert_same_answers(analysis, machines, request)
        pruned_total, full_total = pruned_total + pruned, full_total + exhaustive
    # Not a speed check: the bounds must rule something out, or they are not working.
    assert pruned_total < full_total


_task = st.builds(
    lambda cpu, rest, gc, write, spill: TaskSpec(
        cpu + rest + gc + write,
        cpu_ms=cpu,
        gc_ms=gc,
        shuffle_write_ms=write,
        peak_memory=10**8 if spill else 0,
        memory_spill=spill * 10**8,
        disk_spill=spill * 3 * 10**7,
    ),
    st.floats(1, 500),
    st.floats(0, 200),
    st.floats(0, 50),
    st.floats(0, 200),
    st.integers(0, 4),
)
_stage_tasks = st.lists(_task, min_size=1, max_size=40)
_machine = st.tuples(
    st.sampled_from([1, 2, 4, 8]),  # vCPUs
    st.sampled_from([4, 8, 16]),  # GiB
    st.floats(0.02, 1.0),  # price
    st.sampled_from([0.7, 1.0, 1.3]),  # cpu speed
    st.sampled_from([(1, 0), (1, 60), (60, 60), (3600, 3600)]),  # billing
)


@settings(max_examples=25, deadline=None, database=None)
@given(
    stages=st.lists(_stage_tasks, min_size=1, max_size=3),
    slots=st.integers(1, 4),
    gap=st.floats(0, 500),
    machines=st.lists(_machine, min_size=1, max_size=5),
    top=st.integers(1, 4),
    deadline_rank=st.floats(0, 1),
)
def test_pruned_search_equals_exhaustive_on_drawn_cases(
    stages: list[list[TaskSpec]],
    slots: int,
    gap: float,
    machines: list[tuple[int, int, float, float, tuple[int, int]]],
    top: int,
    deadline_rank: float,
) -> None:
    jobs = [[StageSpec(i, tasks)] for i, tasks in enumerate(stages)]
    profile = build_synthetic(jobs, slots, driver_gap_ms=gap)
    analysis = SyntheticAnalysis(profile, BaselineOverrides(host_cores=slots))
    rows = [
        row(f"t{i}", v, g, price, cpu_speed=speed, granularity=gr, minimum=mn)
        for i, (v, g, price, speed, (gr, mn)) in enumerate(machines)
    ]
    types = catalog(*rows)
    full = search_or_error(analysis, types, Request(max_nodes=4, exhaustive=True))
    if isinstance(full, str):  # no type holds an executor
        assert search_or_error(analysis, types, Request(max_nodes=4)) == full
        return
    uppers = sorted(p.upper_s for p in full.points)
    deadline = uppers[min(len(uppers) - 1, int(deadline_rank * len(uppers)))]
    assert_same_answers(analysis, types, Request(max_nodes=4, top=top))
    assert_same_answers(analysis, types, Request(max_nodes=4, top=top, deadline_s=deadline))
