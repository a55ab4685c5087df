"""Spark's dynamic allocation policy on hand-built backlogs with known executor timelines.

Each expectation is worked out by hand from Spark's rules (ExecutorAllocationManager and
ExecutorMonitor, Spark 3.x/4.x) and written in the test, with the arithmetic beside it.
Decisions fall on Spark's 100 ms polls; times are ms since the application's start.
"""

from __future__ import annotations

import math

import pytest

from perfmodel.simulate.allocation import (
    AllocationCosts,
    BacklogJob,
    BacklogStage,
    BacklogTask,
    ExecutorSpan,
    executor_timeline,
    tick,
)
from perfmodel.simulate.allocation_settings import (
    EXECUTOR_CAP,
    INT_MAX,
    AllocationError,
    AllocationSettings,
    change_settings,
    read_settings,
)

INF = math.inf
NEVER = AllocationCosts(request_ms=1e12)
"""Requested executors never arrive: the policy's requests alone."""


def on(**kw: object) -> AllocationSettings:
    return AllocationSettings(enabled=True, **kw)  # type: ignore[arg-type]


def test_ramp_up_doubles_each_round_until_the_maximum() -> None:
    # 100 tasks wait from 0; a round every 1 s adds 1, 2, 4, 8 (target 1, 3, 7, 15); the
    # fifth would add 16 but maxExecutors 20 caps it at 5; after that nothing more.
    tl = executor_timeline(
        [BacklogStage(0.0, 100)], [], on(max_executors=20), NEVER, 1, end_ms=20_000
    )
    assert tl.requests == [(1000.0, 1), (2000.0, 2), (3000.0, 4), (4000.0, 8), (5000.0, 5)]
    assert tl.targets[-1] == (5000.0, 20)


def test_ramp_up_never_asks_past_what_the_tasks_need() -> None:
    # 12 tasks, 4 per executor: 3 executors at most (ceil(12 / 4)); rounds add 1 then 2.
    tl = executor_timeline([BacklogStage(0.0, 12)], [], on(), NEVER, 4, end_ms=10_000)
    assert tl.requests == [(1000.0, 1), (2000.0, 2)]
    assert tl.targets[-1] == (2000.0, 3)


def test_allocation_ratio_scales_the_need() -> None:
    # executorAllocationRatio 0.5: 12 tasks on 1-task executors need ceil(6) = 6.
    tl = executor_timeline(
        [BacklogStage(0.0, 12)], [], on(allocation_ratio=0.5), NEVER, 1, end_ms=10_000
    )
    assert tl.targets[-1][1] == 6
    assert sum(n for _, n in tl.requests) == 6


def test_sustained_backlog_timeout_spaces_later_rounds() -> None:
    # Submitted at 300: first round at 300 + 2000 (schedulerBacklogTimeout), then every
    # 5000 (sustainedSchedulerBacklogTimeout): 2300, 7300, 12300.
    s = on(backlog_timeout_ms=2000.0, sustained_backlog_timeout_ms=5000.0)
    tl = executor_timeline([BacklogStage(300.0, 50)], [], s, NEVER, 1, end_ms=13_000)
    assert tl.requests == [(2300.0, 1), (7300.0, 2), (12300.0, 4)]


def test_decisions_fall_on_the_100ms_polls() -> None:
    assert tick(0.0) == 0.0
    assert tick(1.0) == 100.0
    assert tick(1300.0) == 1300.0
    assert tick(1300.5) == 1400.0
    tl = executor_timeline([BacklogStage(250.0, 5)], [], on(), NEVER, 1, end_ms=3000)
    assert tl.requests[0] == (1300.0, 1)  # 250 + 1000 = 1250, acted on at the 1300 poll


def test_drained_queue_restarts_the_ramp_and_the_target_falls_between_stages() -> None:
    # Stage A (4 tasks, 4 per executor) at 0: one executor asked for at 1000, registers at
    # 1500 (start-up 500) and starts all four: the queue drains, the timer stops. They end
    # at 3500; by stage B's submission at 10000 Spark's polls lowered the target to 0.
    # Stage B (8 tasks): e0 takes 4 at once; at 11000 the round adds max(target 0,
    # registered 1) + 1 = 2 (Spark's rule), one more executor than registered: asked for
    # at 11000, registered at 11500, it runs the other 4. Idle 60 s after their last task
    # they are killed (12000 + 60000, 13500 + 60000) and go 250 ms later.
    stages = [BacklogStage(0.0, 4), BacklogStage(10_000.0, 8)]
    tasks = [BacklogTask(0, 0, 1500.0, 3500.0)] * 4
    tasks += [BacklogTask(1, 0, 10_000.0, 12_000.0)] * 4
    tasks += [BacklogTask(1, 1, 11_500.0, 13_500.0)] * 4
    costs = AllocationCosts(request_ms=500.0, kill_ms=250.0)
    tl = executor_timeline(stages, tasks, on(), costs, 4, end_ms=100_000)
    assert tl.requests == [(1000.0, 1), (11_000.0, 1)]
    # The fall to 0 after stage B is recorded when the policy next acts (72000): no
    # decision in between depends on it.
    assert tl.targets == [(0.0, 0), (1000.0, 1), (10_000.0, 0), (11_000.0, 2), (72_000.0, 0)]
    assert tl.executors == [
        ExecutorSpan(1000.0, 1500.0, 72_000.0, 72_250.0),
        ExecutorSpan(11_000.0, 11_500.0, 73_500.0, 73_750.0),
    ]


def test_idle_executor_is_removed_after_the_idle_timeout() -> None:
    # One task 1500-3000 on the executor asked for at 1000: idle from 3000, killed at
    # 3000 + 60000.
    tl = executor_timeline(
        [BacklogStage(0.0, 1)],
        [BacklogTask(0, 0, 1500.0, 3000.0)],
        on(),
        AllocationCosts(request_ms=500.0),
        1,
        end_ms=100_000,
    )
    assert tl.executors == [ExecutorSpan(1000.0, 1500.0, 63_000.0, 63_000.0)]


def test_min_executors_are_never_removed() -> None:
    # minExecutors 1: the initial executor (registered at 2000) idles forever but stays.
    s = on(min_executors=1)
    tl = executor_timeline(
        [BacklogStage(5000.0, 1)],
        [BacklogTask(0, 0, 5000.0, 6000.0)],
        s,
        AllocationCosts(request_ms=500.0, initial_ms=(2000.0,)),
        1,
        end_ms=200_000,
    )
    assert tl.executors == [ExecutorSpan(0.0, 2000.0, INF, INF)]


def test_initial_executors_arrive_as_measured_and_surplus_ones_idle_out() -> None:
    # initialExecutors 3 (min 1): asked for at the start, registered at 2000, 2100, 2100
    # (the measured start-up; later ones take the last). No stage comes: 60 s after
    # registering the first times out, the target falls to the minimum (1), and the
    # policy removes executors down to it: e0 at 62000, e1 at 62100; e2 stays.
    s = on(min_executors=1, initial_setting=3, max_executors=3)
    tl = executor_timeline(
        [],
        [],
        s,
        AllocationCosts(request_ms=500.0, initial_ms=(2000.0, 2100.0)),
        1,
        end_ms=200_000,
    )
    assert tl.requests == [(0.0, 3)]
    assert tl.executors == [
        ExecutorSpan(0.0, 2000.0, 62_000.0, 62_000.0),
        ExecutorSpan(0.0, 2100.0, 62_100.0, 62_100.0),
        ExecutorSpan(0.0, 2100.0, INF, INF),
    ]


def test_initial_executors_hold_the_target_until_a_stage_is_submitted() -> None:
    # While initializing the target stays at initialExecutors (4) even though the first
    # stage needs 1: it falls at the first poll after the submission at 1000.
    s = on(initial_setting=4, max_executors=10)
    tl = executor_timeline(
        [BacklogStage(1000.0, 1)],
        [BacklogTask(0, 0, 1000.0, 1500.0)],
        s,
        AllocationCosts(request_ms=500.0, initial_ms=(800.0,)),
        1,
        end_ms=5000,
    )
    assert tl.targets[0] == (0.0, 4)
    assert tl.targets[1] == (1000.0, 1)


def test_executors_holding_shuffle_files_stay_while_tracking_keeps_them() -> None:
    # Two initial executors. Shuffle tracking, default timeout (never): e0 ran the map
    # task (shuffle 7) and is never removed; e1 ran only the result task (5000-6000) and
    # idles out 60 s after it. Without shuffle tracking e0 goes 60 s after its task too.
    stages = [BacklogStage(0.0, 1, shuffle=7), BacklogStage(5000.0, 1)]
    tasks = [BacklogTask(0, 0, 1500.0, 4000.0), BacklogTask(1, 1, 5000.0, 6000.0)]
    jobs = [BacklogJob(0.0, 7000.0, (7,))]
    costs = AllocationCosts(request_ms=500.0, initial_ms=(1500.0,))
    tracked = on(initial_setting=2, shuffle_tracking=True)
    tl = executor_timeline(stages, tasks, tracked, costs, 1, jobs=jobs, end_ms=300_000)
    assert tl.executors == [
        ExecutorSpan(0.0, 1500.0, INF, INF),
        ExecutorSpan(0.0, 1500.0, 66_000.0, 66_000.0),
    ]
    tl = executor_timeline(
        stages, tasks, on(initial_setting=2), costs, 1, jobs=jobs, end_ms=300_000
    )
    assert tl.executors == [
        ExecutorSpan(0.0, 1500.0, 64_000.0, 64_000.0),
        ExecutorSpan(0.0, 1500.0, 66_000.0, 66_000.0),
    ]


def test_shuffle_tracking_timeout_applies_once_no_job_uses_the_shuffle() -> None:
    # shuffleTracking.timeout 5 s: e0 idles from 4000 holding shuffle 7, which job 0 uses
    # until 20000: it may go only then (its 5 s ran out at 9000), at the 20000 poll.
    stages = [BacklogStage(0.0, 1, shuffle=7)]
    tasks = [BacklogTask(0, 0, 1500.0, 4000.0)]
    costs = AllocationCosts(request_ms=500.0, initial_ms=(1500.0,))
    s = on(initial_setting=1, shuffle_tracking=True, shuffle_timeout_ms=5000.0)
    tl = executor_timeline(
        stages, tasks, s, costs, 1, jobs=[BacklogJob(0.0, 20_000.0, (7,))], end_ms=100_000
    )
    assert tl.executors == [ExecutorSpan(0.0, 1500.0, 20_000.0, 20_000.0)]
    # A job that never ends keeps it.
    tl = executor_timeline(
        stages, tasks, s, costs, 1, jobs=[BacklogJob(0.0, INF, (7,))], end_ms=100_000
    )
    assert tl.executors[0].kill_ms == INF


def test_cached_blocks_take_the_cached_idle_timeout() -> None:
    stages = [BacklogStage(0.0, 1, caches=True)]
    tasks = [BacklogTask(0, 0, 1500.0, 4000.0)]
    costs = AllocationCosts(request_ms=500.0, initial_ms=(1500.0,))
    kept = executor_timeline(stages, tasks, on(initial_setting=1), costs, 1, end_ms=500_000)
    assert kept.executors[0].kill_ms == INF  # cachedExecutorIdleTimeout: never by default
    s = on(initial_setting=1, cached_idle_timeout_ms=30_000.0)
    tl = executor_timeline(stages, tasks, s, costs, 1, end_ms=500_000)
    assert tl.executors[0].kill_ms == 34_000.0


def test_an_idle_executor_goes_when_the_target_falls_below_the_executors() -> None:
    # Two 1-task executors; e1's task ends at 3000 while e0's runs to 70000. e1 times out
    # at 63000, when one task runs: the target falls to 1 and e1 goes; e0 at 130000.
    stages = [BacklogStage(0.0, 2)]
    tasks = [BacklogTask(0, 0, 1000.0, 70_000.0), BacklogTask(0, 1, 1000.0, 3000.0)]
    costs = AllocationCosts(initial_ms=(1000.0,))
    tl = executor_timeline(stages, tasks, on(initial_setting=2), costs, 1, end_ms=200_000)
    assert tl.executors[1].kill_ms == 63_000.0
    assert tl.executors[0].kill_ms == 130_000.0


def test_capacity_limits_the_executors_started() -> None:
    tl = executor_timeline(
        [BacklogStage(0.0, 100)],
        [],
        on(),
        AllocationCosts(request_ms=1e9),
        1,
        capacity=3,
        end_ms=10_000,
    )
    assert sum(n for _, n in tl.requests) == 3
    assert tl.targets[-1][1] > 3  # the policy wants more; the cluster holds 3


def test_a_backlog_naming_an_executor_not_started_is_refused() -> None:
    with pytest.raises(AllocationError, match="has not started"):
        executor_timeline(
            [BacklogStage(0.0, 1)],
            [BacklogTask(0, 0, 100.0, 200.0)],
            on(),
            AllocationCosts(request_ms=500.0),
            1,
            end_ms=1000,
        )
    with pytest.raises(AllocationError, match="no stage"):
        executor_timeline([], [BacklogTask(3, 0, 0.0, 1.0)], on(), NEVER, 1, end_ms=10)


def test_observed_mode_matches_logged_executors_to_requests() -> None:
    # The log's executors registered at 3000 and 4200; for the 2 tasks the policy asked
    # for 1 at 1000 and 1 more at 2000: start-ups 2000 and 2200.
    from perfmodel.simulate.allocation import LoggedExecutor

    tasks = [BacklogTask(0, "a", 3000.0, 9000.0), BacklogTask(0, "b", 4200.0, 9000.0)]
    tl = executor_timeline(
        [BacklogStage(0.0, 2)],
        tasks,
        on(),
        AllocationCosts(),
        1,
        logged=[LoggedExecutor("a", 3000.0, 80_000.0), LoggedExecutor("b", 4200.0)],
        end_ms=100_000,
    )
    assert [(e.requested_ms, e.added_ms) for e in tl.executors] == [
        (1000.0, 3000.0),
        (2000.0, 4200.0),
    ]
    # "a" idled from 9000: the policy killed it at 69000 (the first poll at or after), the
    # log removed it at 80000: 11 s from decision to removal.
    assert tl.executors[0].kill_ms == 69_000.0
    assert tl.kill_latency_ms == [11_000.0]


# ------------------------------------------------------------------------------------------
# Settings


def test_settings_default_to_sparks() -> None:
    s = read_settings({"spark.dynamicAllocation.enabled": "true"}, "3.2.1", "yarn")
    assert s.enabled
    assert (s.min_executors, s.max_executors, s.initial_executors) == (0, INT_MAX, 0)
    assert not s.bounded
    assert (s.backlog_timeout_ms, s.sustained_backlog_timeout_ms) == (1000.0, 1000.0)
    assert s.idle_timeout_ms == 60_000.0
    assert s.cached_idle_timeout_ms == INF and s.shuffle_timeout_ms == INF
    assert not s.shuffle_tracking  # false before Spark 3.4
    assert s.allocation_ratio == 1.0
    assert s.sources["max_executors"] == "Spark default: unbounded"
    assert "3.4" in read_settings({}, "3.5.0", "yarn").sources["shuffle_tracking"]
    assert read_settings({}, "3.5.0", "yarn").shuffle_tracking  # true from 3.4 (SPARK-39846)


def test_settings_are_read_with_sparks_units_and_sources() -> None:
    props = {
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.minExecutors": "2",
        "spark.dynamicAllocation.maxExecutors": "8",
        "spark.dynamicAllocation.initialExecutors": "3",
        "spark.executor.instances": "5",
        "spark.dynamicAllocation.schedulerBacklogTimeout": "2",  # seconds without a unit
        "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout": "500ms",
        "spark.dynamicAllocation.executorIdleTimeout": "2min",
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.timeout": "1500",  # milliseconds
        "spark.dynamicAllocation.executorAllocationRatio": "0.5",
    }
    s = read_settings(props, "3.3.0", "spark://m:7077")
    assert (s.min_executors, s.max_executors) == (2, 8)
    assert s.initial_executors == 5  # the largest of min 2, initial 3, instances 5
    assert s.backlog_timeout_ms == 2000.0
    assert s.sustained_backlog_timeout_ms == 500.0
    assert s.idle_timeout_ms == 120_000.0
    assert s.shuffle_tracking and s.shuffle_timeout_ms == 1500.0
    assert s.allocation_ratio == 0.5
    assert s.sources["idle_timeout_ms"] == ("log: spark.dynamicAllocation.executorIdleTimeout=2min")
    assert "largest" in s.sources["initial_executors"]


def test_unreadable_settings_take_the_default_and_say_so() -> None:
    props = {
        "spark.dynamicAllocation.maxExecutors": "lots",
        "spark.dynamicAllocation.executorIdleTimeout": "soon",
        "spark.dynamicAllocation.executorAllocationRatio": "2",
    }
    s = read_settings(props, "3.5.0", "yarn")
    assert s.max_executors == INT_MAX and s.idle_timeout_ms == 60_000.0
    assert s.allocation_ratio == 1.0
    assert "unreadable" in s.sources["max_executors"]
    assert "unreadable" in s.sources["idle_timeout_ms"]


def test_local_mode_and_the_shuffle_service() -> None:
    local = read_settings({"spark.dynamicAllocation.enabled": "true"}, "3.5.0", "local[4]")
    assert not local.enabled and "local mode" in local.sources["enabled"]
    cluster = read_settings(
        {"spark.dynamicAllocation.enabled": "true"}, "3.5.0", "local-cluster[2,1,1024]"
    )
    assert cluster.enabled
    service = read_settings(
        {"spark.shuffle.service.enabled": "true", "spark.dynamicAllocation.enabled": "true"},
        "3.5.0",
        "yarn",
    )
    assert not service.shuffle_tracking  # the external service keeps the files


def test_a_minimum_above_the_maximum_is_capped_when_read() -> None:
    props = {
        "spark.dynamicAllocation.minExecutors": "9",
        "spark.dynamicAllocation.maxExecutors": "4",
    }
    s = read_settings(props, "3.5.0", "yarn")
    assert s.min_executors == 4 and "capped" in s.sources["min_executors"]


def test_executor_counts_read_from_a_log_are_bounded() -> None:
    # A log cannot make the replay hold a billion executors.
    s = read_settings({"spark.dynamicAllocation.initialExecutors": "1000000000"}, "3.5.0", "yarn")
    assert s.initial_executors == EXECUTOR_CAP and "taken as" in s.sources["initial_setting"]
    s = read_settings({"spark.executor.instances": "999999999"}, "3.5.0", "yarn")
    assert s.initial_executors == EXECUTOR_CAP


def test_initial_executors_stay_within_the_maximum() -> None:
    s = read_settings(
        {"spark.executor.instances": "10", "spark.dynamicAllocation.maxExecutors": "4"},
        "3.5.0",
        "yarn",
    )
    assert s.initial_executors == 4 and "capped" in s.sources["initial_executors"]


def test_what_if_on_the_settings() -> None:
    base = read_settings({"spark.executor.instances": "2"}, "3.5.0", "yarn")
    s = change_settings(base, enabled=True, max_executors=8)
    assert s.enabled and s.max_executors == 8 and s.initial_executors == 2
    assert s.sources["max_executors"] == "what-if"
    s = change_settings(base, enabled=True, initial_executors=1)
    assert s.initial_executors == 1  # spark.executor.instances no longer applies
    with pytest.raises(AllocationError, match="above the maximum"):
        change_settings(base, min_executors=5, max_executors=3)
    with pytest.raises(AllocationError, match="between"):
        change_settings(base, max_executors=3, initial_executors=4)
