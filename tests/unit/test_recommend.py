"""`perfmodel recommend`'s search on hand-built profiles whose right answer is known."""

from __future__ import annotations

import math

import pytest

from perfmodel.recommend.search import RecommendError, Request, search
from perfmodel.simulate.config import BaselineOverrides
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from tests.recommend_helpers import SyntheticAnalysis, catalog, row

MB = 1_000_000


def _io_bound() -> SyntheticAnalysis:
    """Tasks that spend 90 % of their time writing shuffle data to disk."""
    task = TaskSpec(run_ms=10_000, cpu_ms=1_000, shuffle_write_ms=9_000)
    profile = build_synthetic([[StageSpec(0, [task] * 32)]], 2)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=2, disk_bw=250 * MB))


def _cpu_bound() -> SyntheticAnalysis:
    task = TaskSpec(run_ms=10_000, cpu_ms=10_000)
    # 60 tasks: whole waves on both 2 and 15 slots, so cost per core decides.
    profile = build_synthetic([[StageSpec(0, [task] * 60)]], 2)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=2, disk_bw=250 * MB))


SMALL_AND_BIG = (
    row("small", 2, 8, 0.10),
    # Cheaper per vCPU than small: a CPU-bound job should buy it.
    row("big", 16, 64, 0.60),
)


def test_io_bound_job_does_not_buy_more_cores() -> None:
    analysis = _io_bound()
    machines = catalog(*SMALL_AND_BIG)
    free = search(analysis, machines, Request(max_nodes=8, exhaustive=True))
    by_key = {(p.machine.vm_type, p.nodes, p.layout.executor_cores): p for p in free.points}
    # Eight times the cores on one host buy (almost) nothing: the host's disk is the limit.
    assert by_key[("big", 1, 15)].predicted_s > 0.8 * by_key[("small", 1, 2)].predicted_s
    deadline = by_key[("small", 4, 2)].upper_s * 1.01
    answer = search(analysis, machines, Request(max_nodes=8, deadline_s=deadline))
    assert answer.recommended.machine.vm_type == "small"
    assert answer.recommended.bottleneck == "disk"
    assert answer.recommended.upper_s <= deadline


def test_cpu_bound_job_buys_the_cheaper_cores() -> None:
    """The control for the I/O test: the same catalog, a CPU-bound job, the big type."""
    analysis = _cpu_bound()
    machines = catalog(*SMALL_AND_BIG)
    answer = search(analysis, machines, Request(max_nodes=8))
    assert answer.recommended.machine.vm_type == "big"
    assert answer.recommended.bottleneck == "cpu"


def test_memory_bound_job_picks_the_memory_rich_type() -> None:
    """Tasks that spill most of their time away on a 1g heap stop spilling on 32 GiB nodes."""
    task = TaskSpec(
        run_ms=1_000,
        cpu_ms=150,
        peak_memory=200 * MB,
        memory_spill=4_000 * MB,
        disk_spill=1_500 * MB,
    )
    profile = build_synthetic([[StageSpec(0, [task] * 24)]], 2, memory_bytes=1 << 30)
    analysis = SyntheticAnalysis(profile, BaselineOverrides(host_cores=2, disk_bw=250 * MB))
    machines = catalog(
        row("lowmem", 4, 8, 0.17), row("std", 4, 16, 0.20), row("himem", 4, 32, 0.26)
    )
    answer = search(analysis, machines, Request(max_nodes=4))
    assert answer.recommended.machine.vm_type == "himem"
    std = min(
        (p for p in answer.points if p.evaluated and p.machine.vm_type == "std"),
        key=lambda p: p.predicted_s,
    )
    assert std.predicted_s > answer.recommended.predicted_s
    lowmem = [p for p in answer.points if p.evaluated and p.machine.vm_type == "lowmem"]
    assert any(p.bottleneck == "memory" for p in lowmem)


def _short_job() -> SyntheticAnalysis:
    task = TaskSpec(run_ms=60_000, cpu_ms=60_000)
    profile = build_synthetic([[StageSpec(0, [task] * 8)]], 2)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=2))


def test_billing_granularity_changes_the_choice() -> None:
    """A cheaper hourly-billed type loses a minutes-long job to a per-second one, and wins
    it back when it is billed per second too."""
    analysis = _short_job()
    per_hour = catalog(
        row("hourly", 4, 16, 0.18, granularity=3600, minimum=3600),
        row("persecond", 4, 16, 0.20, granularity=1, minimum=60),
    )
    answer = search(analysis, per_hour, Request(max_nodes=2))
    assert answer.recommended.machine.vm_type == "persecond"
    hourly = [p for p in answer.points if p.evaluated and p.machine.vm_type == "hourly"]
    assert all(p.cost == pytest.approx(p.nodes * 0.18) for p in hourly)
    per_second = catalog(
        row("hourly", 4, 16, 0.18, granularity=1, minimum=60),
        row("persecond", 4, 16, 0.20, granularity=1, minimum=60),
    )
    assert search(analysis, per_second, Request(max_nodes=2)).recommended.machine.vm_type == (
        "hourly"
    )


def test_hourly_billing_buys_more_nodes_when_the_hour_is_paid_anyway() -> None:
    """Under a deadline, hourly billing makes the extra nodes that finish sooner free of
    charge up to the hour; per-second billing of the same price does not change cost."""
    analysis = _short_job()
    machines = catalog(row("hourly", 4, 16, 0.18, granularity=3600, minimum=3600))
    answer = search(analysis, machines, Request(max_nodes=4, top=4))
    one = [p for p in answer.points if p.nodes == 1 and p.evaluated]
    assert one and all(p.cost == pytest.approx(0.18) for p in one)


def test_deadline_nobody_meets_names_the_fastest() -> None:
    """And suggests more nodes only where the fastest point uses every node allowed."""
    analysis = _cpu_bound()
    with pytest.raises(RecommendError, match="fastest is .* predicted.*--max-nodes"):
        search(analysis, catalog(*SMALL_AND_BIG), Request(max_nodes=2, deadline_s=1.0))
    # The host's disk is the limit: beyond one node per task (32, each task alone on its
    # host and its disk), more nodes are idle.
    io = _io_bound()
    fastest = search(io, catalog(*SMALL_AND_BIG), Request(max_nodes=40, exhaustive=True))
    nodes = min(fastest.points, key=lambda p: p.predicted_s).nodes
    assert nodes < 40
    with pytest.raises(RecommendError, match=f"uses {nodes} of the 40 allowed") as caught:
        search(io, catalog(*SMALL_AND_BIG), Request(max_nodes=40, deadline_s=1.0))
    assert "--max-nodes" not in str(caught.value)


def test_budget_nobody_meets_names_the_cheapest() -> None:
    analysis = _cpu_bound()
    with pytest.raises(RecommendError, match="cheapest is"):
        search(analysis, catalog(*SMALL_AND_BIG), Request(max_nodes=2, budget_usd=1e-9))


def test_fastest_within_budget_is_on_the_front_and_within_it() -> None:
    analysis = _cpu_bound()
    machines = catalog(*SMALL_AND_BIG)
    everything = search(analysis, machines, Request(max_nodes=6, exhaustive=True))
    costs = sorted(p.cost for p in everything.points)
    budget = costs[len(costs) // 2]
    answer = search(analysis, machines, Request(max_nodes=6, budget_usd=budget))
    best = answer.fastest_within_budget
    assert best is not None and best.cost <= budget
    assert best is answer.recommended
    assert best.predicted_s == pytest.approx(
        min(p.predicted_s for p in everything.points if p.cost <= budget)
    )


def test_deadline_uses_the_upper_bound() -> None:
    analysis = _cpu_bound()
    machines = catalog(*SMALL_AND_BIG)
    answer = search(analysis, machines, Request(max_nodes=6, exhaustive=True))
    p = answer.points[0]
    assert p.upper_s == pytest.approx(p.predicted_s * (1 + answer.band.relative))
    assert answer.band.relative >= 0.15
    # A deadline between a point's estimate and its upper bound: it does not meet it.
    between = search(
        analysis,
        machines,
        Request(max_nodes=6, deadline_s=(p.predicted_s + p.upper_s) / 2, exhaustive=True),
    )
    same = next(
        q
        for q in between.points
        if (q.machine.vm_type, q.nodes, q.layout) == (p.machine.vm_type, p.nodes, p.layout)
    )
    assert not same.meets_deadline


def test_pruned_search_gives_the_exhaustive_answers() -> None:
    for analysis in (_cpu_bound(), _io_bound()):
        machines = catalog(*SMALL_AND_BIG, row("mid", 8, 32, 0.33, cpu_speed=1.2))
        for deadline in (None, 200.0):
            full = search(analysis, machines, Request(max_nodes=10, exhaustive=True))
            if deadline is not None and not any(p.upper_s <= deadline for p in full.points):
                continue
            req = Request(max_nodes=10, deadline_s=deadline, top=3, tolerance=0.0)
            pruned = search(analysis, machines, req)
            fullr = search(analysis, machines, Request(**{**_fields(req), "exhaustive": True}))
            assert pruned.replays <= fullr.replays
            assert _key(pruned.recommended) == _key(fullr.recommended)
            assert [_key(p) for p in pruned.pareto] == [_key(p) for p in fullr.pareto]
            assert [_key(p) for p in pruned.top] == [_key(p) for p in fullr.top]


def test_tolerance_keeps_the_deadline_and_bounds_the_extra_cost() -> None:
    analysis = _cpu_bound()
    machines = catalog(*SMALL_AND_BIG, row("mid", 8, 32, 0.33, cpu_speed=1.2))
    full = search(analysis, machines, Request(max_nodes=10, exhaustive=True))
    deadline = sorted(p.upper_s for p in full.points)[len(full.points) // 3]
    exact = search(analysis, machines, Request(max_nodes=10, deadline_s=deadline, exhaustive=True))
    for tol in (0.02, 0.1, 0.5):
        near = search(analysis, machines, Request(max_nodes=10, deadline_s=deadline, tolerance=tol))
        assert near.recommended.upper_s <= deadline
        assert near.recommended.cost <= exact.recommended.cost * (1 + tol) + 1e-12
        assert near.replays <= exact.replays


def test_driver_node_is_billed() -> None:
    analysis = _cpu_bound()
    machines = catalog(*SMALL_AND_BIG)
    plain = search(analysis, machines, Request(max_nodes=1, exhaustive=True))
    driver = search(analysis, machines, Request(max_nodes=1, exhaustive=True, driver_node=True))
    for a, b in zip(plain.points, driver.points, strict=True):
        assert b.cost == pytest.approx(a.cost * 2)


def test_identical_configurations_are_replayed_once() -> None:
    analysis = _cpu_bound()
    twins = catalog(row("a", 4, 16, 0.2), row("b", 4, 16, 0.3), row("c", 4, 16, 0.25))
    answer = search(analysis, twins, Request(max_nodes=3, exhaustive=True))
    assert answer.unique_configs * 3 == len(answer.points)
    assert answer.replays == answer.unique_configs
    assert answer.recommended.machine.vm_type == "a"


def test_local_mode_points_are_one_host() -> None:
    analysis = _cpu_bound()
    machines = catalog(row("loc1", 1, 2, 0.05), row("loc2", 2, 2, 0.09))
    answer = search(analysis, machines, Request(max_nodes=5, local=True, exhaustive=True))
    assert {(p.machine.vm_type, p.nodes) for p in answer.points} == {("loc1", 1), ("loc2", 1)}
    assert all(p.config.local_mode for p in answer.points)
    conf = answer.recommended.spark_conf()
    assert conf["spark.master"].startswith("local[")
    # CPU-bound on 2 vs 1 cores at less than twice the price: local[2] is cheaper.
    assert answer.recommended.machine.vm_type == "loc2"
    assert not math.isnan(answer.recommended.cost)


def _key(p: object) -> tuple:
    return (p.machine.vm_type, p.nodes, p.layout)  # type: ignore[attr-defined]


def _fields(req: Request) -> dict:
    return {name: getattr(req, name) for name in req.__slots__}  # type: ignore[attr-defined]


def test_each_point_s_upper_end_is_its_own_interval_where_wider() -> None:
    """A deadline is checked on what `predict` would say of that configuration: a change far
    from the profiled run has a wider interval than the baseline's, and the point's upper end
    is that interval's (never narrower than the baseline's band)."""
    # Seven tenths of each task's time unattributed: unknown, so a bigger change is less sure.
    task = TaskSpec(run_ms=10_000, cpu_ms=3_000)
    profile = build_synthetic([[StageSpec(0, [task] * 60)]], 2)
    analysis = SyntheticAnalysis(profile, BaselineOverrides(host_cores=2, disk_bw=250 * MB))
    machines = catalog(*SMALL_AND_BIG)
    answer = search(analysis, machines, Request(max_nodes=8, exhaustive=True))
    wider = 0
    for p in answer.points:
        own = analysis.predict(p.config)
        assert p.upper_s >= answer.band.upper(p.predicted_s) * (1 - 1e-12)
        assert p.upper_s == pytest.approx(
            max(own.predicted_high_s, answer.band.upper(p.predicted_s))
        )
        wider += own.predicted_high_s > answer.band.upper(p.predicted_s)
    assert wider > 0  # some changes are far enough to widen their interval
