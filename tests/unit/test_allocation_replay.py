"""The replay's slots follow the allocation policy: hand-worked timelines, the plan each
configuration gets, the what-if grammar, properties over random workloads, and scale."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfmodel.simulate.allocation import (
    AllocationCosts,
    BacklogJob,
    BacklogStage,
    BacklogTask,
    executor_timeline,
)
from perfmodel.simulate.allocation_replay import DynamicPlan, run_dynamic, uses_policy
from perfmodel.simulate.allocation_settings import AllocationSettings
from perfmodel.simulate.config import ConfigError, WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import replay_workload, slot_plan
from perfmodel.simulate.scheduler import run_schedule
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import JOB_COMPLETE, JOB_SUBMIT
from tests.unit.allocation_helpers import (
    cluster_profile,
    compiled,
    equal_tasks,
    plan,
    slot_durations,
)

DYNAMIC = {"spark.dynamicAllocation.enabled": "true"}


def test_slots_follow_the_policys_executors() -> None:
    # 8 tasks of 1 s, 1 task per executor, start-up 0.5 s, at most 4 executors:
    #   1000 ask 1 (target 1)              → e0 at 1500 runs task 0 (1500-2500)
    #   2000 need 8: ask 2 (target 3)      → e1, e2 at 2500; tasks 1-3 run 2500-3500
    #   3000 need 7: 3 + 4 capped at 4     → e3 at 3500; tasks 4-7 run 3500-4500
    # The application ends with its last task: 4500 (a fixed 4 slots from 0: 2000).
    _, workload = compiled(cluster_profile([[equal_tasks(0, 8, 1000.0)]], slots=4))
    durations = slot_durations(workload)
    trace: list[tuple[int, int, float, float]] = []
    p = plan(max_executors=4, costs=AllocationCosts(request_ms=500.0))
    line, executors = run_dynamic(workload, durations, p, trace)
    assert [(e.requested_ms, e.added_ms) for e in executors.executors] == [
        (1000.0, 1500.0),
        (2000.0, 2500.0),
        (2000.0, 2500.0),
        (3000.0, 3500.0),
    ]
    assert sorted((e, start) for _, e, start, _ in trace) == [
        (0, 1500.0),
        (0, 2500.0),
        (0, 3500.0),
        (1, 2500.0),
        (1, 3500.0),
        (2, 2500.0),
        (2, 3500.0),
        (3, 3500.0),
    ]
    assert line.end_ms == 4500.0
    assert run_schedule(workload, durations, 4).end_ms == 2000.0


def test_an_executor_takes_its_first_task_after_the_measured_delay() -> None:
    _, workload = compiled(cluster_profile([[equal_tasks(0, 1, 1000.0)]], slots=1))
    costs = AllocationCosts(request_ms=500.0, first_task_ms=300.0)
    trace: list[tuple[int, int, float, float]] = []
    line, _ = run_dynamic(workload, slot_durations(workload), plan(costs=costs), trace)
    assert trace == [(0, 0, 1800.0, 2800.0)]  # asked 1000, registered 1500, first task 1800
    assert line.end_ms == 2800.0


def test_idle_executors_leave_and_new_ones_come_for_a_later_job() -> None:
    # Job 0 (2 tasks), a 10 s driver gap, job 1 (2 tasks); idle timeout 3 s, start-up
    # 0.5 s, kill 0.2 s. Job 0's executors idle out before job 1, which waits for new ones.
    jobs = [[equal_tasks(0, 2, 1000.0)], [equal_tasks(1, 2, 1000.0)]]
    _, workload = compiled(cluster_profile(jobs, slots=2, driver_gap_ms=10_000.0))
    p = plan(idle_timeout_ms=3000.0, costs=AllocationCosts(request_ms=500.0, kill_ms=200.0))
    trace: list[tuple[int, int, float, float]] = []
    line, executors = run_dynamic(workload, slot_durations(workload), p, trace)
    spans = executors.executors
    assert len(spans) == 4
    for i, e in enumerate(spans[:2]):
        # Killed at the first poll 3 s after its last task (or its registration).
        idle_from = max([e.added_ms] + [f for _, x, _, f in trace if x == i])
        assert e.kill_ms == math.ceil((idle_from + 3000.0) / 100) * 100
        assert e.removed_ms == e.kill_ms + 200.0
    second_start = min(start for s, _, start, _ in trace if s == 1)
    assert {e for s, e, _, _ in trace if s == 1} <= {2, 3}  # new executors, not job 0's
    assert second_start >= spans[2].added_ms
    assert line.end_ms > second_start + 1000.0 - 1e-9


def test_a_dynamic_baseline_replays_the_executors_the_log_shows() -> None:
    profile = cluster_profile([[equal_tasks(0, 8, 1000.0)]], slots=4, properties=DYNAMIC)
    from perfmodel.dag.model import ExecutorInfo

    profile.executors["2"] = ExecutorInfo("2", "worker-2", 4, added_ms=1000.0, removed_ms=1500.0)
    base, workload = compiled(profile)
    assert base.allocation.enabled
    observed = [(0.0, math.inf)] * 4 + [(1000.0, 1500.0)] * 4
    assert slot_plan(workload, base, base) == observed
    # A change the policy does not see keeps the recorded executors.
    more_memory = apply_what_if(base, WhatIf(memory_bytes=base.memory_bytes * 2))
    assert not uses_policy(base, more_memory)
    assert slot_plan(workload, base, more_memory) == observed
    # The policy's limits or the executor size bring the policy in.
    for change, per_executor in (
        (WhatIf(max_executors=8), 4),
        (WhatIf(min_executors=1), 4),
        (WhatIf(executor_cores=2), 2),
    ):
        target = apply_what_if(base, change)
        got = slot_plan(workload, base, target)
        assert isinstance(got, DynamicPlan)
        assert got.tasks_per_executor == per_executor
        assert got.settings == target.allocation


def test_static_executors_of_a_dynamic_baseline_are_asked_for_at_the_start() -> None:
    props = DYNAMIC | {"spark.executor.instances": "1"}
    base, workload = compiled(cluster_profile([[equal_tasks(0, 8, 1000.0)]], 4, props))
    assert workload.allocation is not None
    costs = workload.allocation.costs
    target = apply_what_if(base, WhatIf(executors=3))
    assert not target.allocation.enabled
    assert target.sources["dynamic_allocation"].startswith("what-if")
    got = slot_plan(workload, base, target)
    asked = sorted((costs.initial_arrival(i), math.inf) for i in range(3) for _ in range(4))
    # No more slots than tasks: the earliest ones, the only ones a task can take.
    assert got == asked[: workload.n_tasks]


def test_a_static_baseline_turned_dynamic() -> None:
    base, workload = compiled(cluster_profile([[equal_tasks(0, 8, 1000.0)]], 4))
    assert not base.allocation.enabled
    target = apply_what_if(base, WhatIf(dynamic_allocation=True, max_executors=2))
    assert target.allocation.enabled and target.allocation.max_executors == 2
    assert target.executors == 2  # the laws see the most executors the policy may run
    assert isinstance(slot_plan(workload, base, target), DynamicPlan)
    prediction = replay_workload(workload, base, target)
    assert any(n.startswith("dynamic allocation replayed") for n in prediction.notes)
    # No executor was there before the first request: slower than the static baseline.
    assert prediction.predicted_s > prediction.baseline_replay_s


def test_what_if_grammar_refuses_contradictions() -> None:
    base, _ = compiled(cluster_profile([[equal_tasks(0, 2, 10.0)]], 2, DYNAMIC))
    with pytest.raises(ConfigError, match="fix the executor count"):
        apply_what_if(base, WhatIf(executors=2, max_executors=4))
    with pytest.raises(ConfigError, match="fix the executor count"):
        apply_what_if(base, WhatIf(cores=4, dynamic_allocation=True))
    with pytest.raises(ConfigError, match="above the maximum"):
        apply_what_if(base, WhatIf(min_executors=5, max_executors=2))
    with pytest.raises(ConfigError, match=r"^--max-executors must be"):
        WhatIf(max_executors=0)
    with pytest.raises(ConfigError, match=r"^--min-executors must be"):
        WhatIf(min_executors=-1)
    static, _ = compiled(cluster_profile([[equal_tasks(0, 2, 10.0)]], 2))
    with pytest.raises(ConfigError, match="add --dynamic-allocation on"):
        apply_what_if(static, WhatIf(max_executors=4))
    local_base = baseline_config(build_synthetic([[equal_tasks(0, 2, 10.0)]], 2))
    with pytest.raises(ConfigError, match="needs a cluster manager"):
        apply_what_if(local_base, WhatIf(dynamic_allocation=True))


def _random_jobs(draw: st.DrawFn) -> list[list[StageSpec]]:
    jobs: list[list[StageSpec]] = []
    sid = 0
    for _ in range(draw(st.integers(1, 3))):
        stages = []
        for k in range(draw(st.integers(1, 3))):
            n = draw(st.integers(1, 12))
            ms = draw(st.lists(st.integers(50, 4000), min_size=n, max_size=n))
            parents = (sid - 1,) if k else ()
            stages.append(StageSpec(sid, [TaskSpec(run_ms=float(t)) for t in ms], parents))
            sid += 1
        jobs.append(stages)
    return jobs


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[list[StageSpec]], DynamicPlan, float]:
    jobs = _random_jobs(draw)
    lo = draw(st.integers(0, 3))
    hi = draw(st.integers(max(lo, 1), 8))
    initial = draw(st.integers(lo, hi))
    s = AllocationSettings(
        enabled=True,
        min_executors=lo,
        max_executors=hi,
        initial_setting=initial,
        backlog_timeout_ms=float(draw(st.integers(1, 30)) * 100),
        sustained_backlog_timeout_ms=float(draw(st.integers(1, 30)) * 100),
        idle_timeout_ms=float(draw(st.integers(1, 100)) * 100),
        shuffle_tracking=draw(st.booleans()),
        shuffle_timeout_ms=draw(st.sampled_from([math.inf, 500.0, 4000.0])),
    )
    costs = AllocationCosts(
        request_ms=float(draw(st.integers(0, 5000))),
        initial_ms=tuple(float(x) for x in draw(st.lists(st.integers(0, 3000), max_size=3))),
        first_task_ms=float(draw(st.integers(0, 500))),
        kill_ms=float(draw(st.integers(0, 2000))),
    )
    tpe = draw(st.integers(1, 4))
    gap = float(draw(st.integers(0, 20)) * 500)
    return jobs, DynamicPlan(s, tpe, costs, draw(st.sampled_from([None, 2, 6]))), gap


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_policy_invariants_hold_on_random_workloads(
    scenario: tuple[list[list[StageSpec]], DynamicPlan, float],
) -> None:
    jobs, p, gap = scenario
    _, workload = compiled(cluster_profile(jobs, slots=2, driver_gap_ms=gap))
    durations = slot_durations(workload)
    trace: list[tuple[int, int, float, float]] = []
    line, executors = run_dynamic(workload, durations, p, trace)
    spans = executors.executors
    # Every task ran once, on an executor that was registered and not yet killed, and no
    # executor was killed while it ran a task.
    assert len(trace) == sum(len(d) for d in durations)
    for _, e, start, finish in trace:
        assert spans[e].added_ms + p.costs.first_task_ms <= start + 1e-9
        assert start < spans[e].kill_ms
        assert finish <= spans[e].kill_ms
    # Executors able to run tasks: never more than maxExecutors (or the cluster holds);
    # once minExecutors had registered, never fewer (kills stop at the minimum).
    points = sorted(
        [(x.added_ms, 1) for x in spans] + [(x.kill_ms, -1) for x in spans if x.kill_ms < 1e300]
    )
    live = 0
    reached_min = p.settings.min_executors == 0
    cap = min(p.settings.max_executors, p.capacity or p.settings.max_executors)
    for i, (t, d) in enumerate(points):
        live += d
        if i + 1 < len(points) and points[i + 1][0] == t:
            continue  # an arrival and a kill at one instant: counted once both are in
        assert live <= max(cap, p.settings.initial_executors)
        reached_min = reached_min or live >= p.settings.min_executors
        if reached_min:
            assert live >= p.settings.min_executors
    # The same inputs give the same replay.
    again = run_dynamic(workload, durations, p)
    assert again[0].end_ms == line.end_ms
    assert again[1].executors == spans
    # The executors the replay reports are what the policy, as a pure function, gives for
    # the replay's own backlog.
    facts = workload.allocation
    assert facts is not None
    job_times = {
        (m.kind, m.ref): line.milestone_ms[i]
        for i, m in enumerate(workload.milestones)
        if m.kind in (JOB_SUBMIT, JOB_COMPLETE)
    }
    jobs_backlog = [
        BacklogJob(
            job_times[(JOB_SUBMIT, j)],
            job_times.get((JOB_COMPLETE, j), math.inf),
            facts.job_shuffles.get(j, ()),
        )
        for j in sorted({ref for kind, ref in job_times if kind == JOB_SUBMIT})
    ]
    stages = [
        BacklogStage(line.stage_ready_ms[i], len(d), facts.stage_shuffle[i], facts.stage_caches[i])
        for i, d in enumerate(durations)
    ]
    tasks = [BacklogTask(s, e, a, b) for s, e, a, b in trace]
    pure = executor_timeline(
        stages,
        tasks,
        p.settings,
        p.costs,
        p.tasks_per_executor,
        jobs=jobs_backlog,
        capacity=p.capacity,
        end_ms=line.end_ms,
    )
    assert pure.executors == spans


def test_a_hundred_thousand_tasks_in_thousands_of_stages() -> None:
    # 2,000 stages of 50 tasks in 500 jobs: the replay places every task and the policy
    # stays within its limits (run time is measured in the report, not asserted here).
    jobs = [
        [
            equal_tasks(4 * j + k, 50, 200.0 + 10 * (k % 3), (4 * j + k - 1,) if k else ())
            for k in range(4)
        ]
        for j in range(500)
    ]
    _, workload = compiled(cluster_profile(jobs, slots=8, driver_gap_ms=3000.0))
    durations = slot_durations(workload)
    assert sum(len(d) for d in durations) == 100_000
    p = plan(
        tasks_per_executor=4,
        max_executors=16,
        idle_timeout_ms=2000.0,
        costs=AllocationCosts(request_ms=1500.0, kill_ms=100.0),
    )
    trace: list[tuple[int, int, float, float]] = []
    line, executors = run_dynamic(workload, durations, p, trace)
    assert len(trace) == 100_000
    assert executors.peak() <= 16
    assert len(executors.executors) > 16  # executors came and went between jobs
    assert math.isfinite(line.end_ms)
