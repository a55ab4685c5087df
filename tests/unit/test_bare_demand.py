"""Bare-log estimators on hand-built profiles with known answers: Python work recognised in
RDD names and plans, core demand read off the slowdown with concurrency, and the two
combined into the per-stage demand the replay uses."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.model import (
    ApplicationProfile,
    OperationNode,
    PlanNode,
    QueryNode,
    ResourceConfig,
    StageNode,
)
from perfmodel.dag.tasks import TaskMetrics, TaskRun, TaskTable
from perfmodel.simulate.config import BaselineOverrides, WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.laws import CO_RUNNING_CPU
from perfmodel.simulate.rescale import all_stage_times
from perfmodel.simulate.stage_work import CPU
from perfmodel.simulate.workload import compile_workload
from perfmodel.spark.bare_demand import (
    JVM_OTHER_THREADS,
    PYTHON_MIN_DEMAND,
    PYTHON_WORKER_CPU,
    UNKNOWN,
    assumption_notes,
    estimate_bare_log,
    lanes_demand,
)
from perfmodel.spark.contention import fit_contention
from perfmodel.spark.pyspark_work import python_work, workload_class


def _task(tid: int, stage: int, launch: float, run: float, cpu: float, records: int) -> TaskRun:
    return TaskRun(
        task_id=tid,
        index=tid,
        attempt=0,
        stage_id=stage,
        stage_attempt=0,
        executor_id="driver",
        host="localhost",
        launch_ms=launch,
        finish_ms=launch + run,
        status="SUCCESS",
        metrics=TaskMetrics(
            run_ms=run, cpu_ms=cpu, has_cpu_time=True, input_records=records, input_bytes=records
        ),
    )


def _profile(stages: list[StageNode], slots: int = 2) -> ApplicationProfile:
    p = ApplicationProfile(app_id="hand-built", start_ms=0.0, end_ms=1e6, complete=True)
    p.resources = ResourceConfig(
        master=f"local[{slots}]", local_mode=True, total_slots=slots, executor_cores=slots
    )
    p.stages = {s.key: s for s in stages}
    return p


def _stage(stage_id: int, ops: list[OperationNode], tasks: list[TaskRun]) -> StageNode:
    s = StageNode(stage_id=stage_id, attempt=0, name=f"stage {stage_id}", num_tasks=len(tasks))
    s.op_nodes = ops
    s.tasks = tasks
    return s


def _contended_stage(
    stage_id: int, demand: float, cores: float, ops: list[OperationNode], tid0: int
) -> StageNode:
    """Six tasks: two pairs side by side, then two alone (the stage's tail); each task's
    time per record is 10 ms stretched by max(1, k·demand/cores)."""
    tasks: list[TaskRun] = []
    t = 0.0
    tid = tid0
    for k, records in ((2, 100), (2, 120), (1, 80), (1, 90)):
        run = [10.0 * r * max(1.0, k * demand / cores) for r in (records, records)][:k]
        for i in range(k):
            tasks.append(_task(tid, stage_id, t, run[i], cpu=0.05 * run[i], records=records))
            tid += 1
        t += max(run) + 1.0
    return _stage(stage_id, ops, tasks)


def test_python_work_is_recognised_by_rdd_names_and_plan_operators() -> None:
    rdd = _stage(0, [OperationNode(1, "PythonRDD"), OperationNode(2, "PairwiseRDD")], [])
    udf = _stage(1, [OperationNode(3, "MapPartitionsRDD", scope_name="BatchEvalPython")], [])
    pandas = _stage(2, [OperationNode(4, "MapPartitionsRDD")], [])
    jvm = _stage(3, [OperationNode(5, "MapPartitionsRDD", scope_name="WholeStageCodegen (1)")], [])
    p = _profile([rdd, udf, pandas, jvm])
    plan = PlanNode("Project", children=[PlanNode("FlatMapGroupsInPandas", stage_keys=[(2, 0)])])
    p.queries = {0: QueryNode(0, plan=plan)}
    work = python_work(p)
    assert work[(0, 0)].kind == "python-rdd"
    assert work[(0, 0)].markers == ("PairwiseRDD", "PythonRDD")
    assert work[(1, 0)].kind == "python-udf"
    assert work[(2, 0)].kind == "pandas" and work[(2, 0)].markers == ("FlatMapGroupsInPandas",)
    assert work[(3, 0)].kind == "jvm" and not work[(3, 0)].is_python


def test_workload_class_follows_the_python_kind_holding_most_time() -> None:
    py_tasks = [_task(i, 0, 0.0, 1000.0, 100.0, 10) for i in range(4)]
    jvm_tasks = [_task(10 + i, 1, 0.0, 100.0, 90.0, 10) for i in range(4)]
    rdd = _stage(0, [OperationNode(1, "PythonRDD")], py_tasks)
    jvm = _stage(1, [OperationNode(2, "MapPartitionsRDD")], jvm_tasks)
    assert workload_class(_profile([rdd, jvm])) == "python-rdd"
    assert workload_class(_profile([jvm])) == "jvm-sql"


def test_task_concurrency_counts_overlap_on_the_host() -> None:
    runs = [_task(0, 0, 0.0, 100.0, 0.0, 1), _task(1, 0, 50.0, 100.0, 0.0, 1)]
    k = task_concurrency(TaskTable.from_runs(runs))
    assert k == pytest.approx([1.5, 1.5])


@pytest.mark.parametrize("demand", [1.3, 1.6, 2.0])
def test_contention_fit_recovers_a_known_demand(demand: float) -> None:
    rng = np.random.default_rng(7)
    n = 40
    stage = np.repeat([0, 1], n // 2)
    k = rng.uniform(1.0, 2.0, n)
    work = rng.uniform(50, 150, n)
    per_record = np.where(stage == 0, 10.0, 25.0)
    run = per_record * work * np.maximum(1.0, k * demand / 2.0)
    fit = fit_contention(stage, run, work, k, host_cores=2)
    assert fit.demand == pytest.approx(demand, abs=0.051)
    assert fit.stages == 2 and fit.tasks == n


def test_contention_fit_without_slowdown_bounds_demand() -> None:
    k = np.array([1.0, 1.2, 1.5, 2.0, 2.0, 1.0, 1.8, 1.1])
    work = np.array([100, 80, 120, 90, 110, 70, 95, 85], dtype=float)
    fit = fit_contention(np.zeros(8, dtype=int), 10.0 * work, work, k, host_cores=2)
    assert fit.demand is None
    assert fit.demand_at_most == pytest.approx(1.0)


def test_contention_fit_needs_tasks_at_different_concurrency() -> None:
    work = np.full(10, 100.0)
    fit = fit_contention(np.zeros(10, dtype=int), 10.0 * work, work, np.full(10, 2.0), 2)
    assert fit.demand is None and fit.demand_at_most is None and fit.tasks == 0
    assert "different concurrencies" in fit.evidence or "no stage" in fit.evidence


def test_lanes_demand() -> None:
    assert lanes_demand(0.0, 100.0) == 1.0
    assert lanes_demand(50.0, 100.0) == pytest.approx(1.5)
    assert lanes_demand(100.0, 100.0) == pytest.approx(2.0)


def test_bare_log_estimate_reads_python_demand_from_the_stage_tail() -> None:
    python = [OperationNode(1, "PythonRDD")]
    stages = [
        _contended_stage(0, 1.6, 2.0, python, 0),
        _contended_stage(1, 1.6, 2.0, python, 100),
    ]
    # The second stage starts after the first.
    shift = max(t.finish_ms for t in stages[0].tasks) + 10.0
    moved = [
        _task(t.task_id, 1, t.launch_ms + shift, t.metrics.run_ms, t.metrics.cpu_ms, 0)
        for t in stages[1].tasks
    ]
    for t, orig in zip(moved, stages[1].tasks, strict=True):
        t.metrics.input_records = orig.metrics.input_records
    stages[1].tasks = moved
    est = estimate_bare_log(_profile(stages), host_cores=2)
    e = est.stages[(0, 0)]
    assert e.resource == PYTHON_WORKER_CPU
    assert e.demand == pytest.approx(1.6, abs=0.051)
    assert "PythonRDD" in e.assumption and "taken to be Python-worker CPU" in e.assumption
    assert est.unknown_share == 0.0 and est.python_share > 0.9
    # Read off the slowdown: the tasks' run times already carry their CPU's growth beside
    # each other, so the replay adds none.
    assert e.from_slowdown and est.growth_unseen() == frozenset()


def test_bare_log_estimate_without_evidence_says_unknown() -> None:
    tasks = [_task(i, 0, 100.0 * i, 90.0, 10.0, 10) for i in range(4)]
    est = estimate_bare_log(_profile([_stage(0, [OperationNode(1, "MapPartitionsRDD")], tasks)]), 2)
    e = est.stages[(0, 0)]
    # No slowdown evidence: the JVM prior (the task thread's cores × JVM_OTHER_THREADS).
    assert e.resource == UNKNOWN and e.demand == pytest.approx(JVM_OTHER_THREADS)
    assert "unknown" in e.assumption and "fitted on the fit workloads" in e.assumption
    # An unknown host must hold that demand.
    assert est.host_cores_at_least() == 2
    assert est.unknown_share == pytest.approx(80.0 / 90.0)


def test_a_jvm_stage_run_side_by_side_takes_the_demand_its_stretch_shows() -> None:
    """Two tasks at a time on 2 cores, each on CPU for half its run: all of the stretch is
    waiting for a core at 2.0 cores per task (the prior, 1.5, would leave a quarter of it
    standing at local[1]); on CPU for 80%: 1.25. Tasks that ran alone keep the prior."""

    def pairs(stage: int, tid0: int, start: float, cpu: float) -> list[TaskRun]:
        return [
            _task(tid0 + 2 * i + j, stage, start + 110.0 * i, 100.0, cpu, 10)
            for i in range(3)
            for j in range(2)
        ]

    jvm = [OperationNode(1, "MapPartitionsRDD")]
    alone = [_task(20 + i, 2, 1000.0 + 110.0 * i, 100.0, 50.0, 10) for i in range(3)]
    stages = [
        _stage(0, jvm, pairs(0, 0, 0.0, 50.0)),
        _stage(1, jvm, pairs(1, 10, 500.0, 80.0)),
        _stage(2, jvm, alone),
    ]
    est = estimate_bare_log(_profile(stages), host_cores=2)
    assert est.stages[(0, 0)].demand == pytest.approx(2.0)
    assert est.stages[(1, 0)].demand == pytest.approx(1.25)
    assert "waiting for a core" in est.stages[(0, 0)].assumption
    assert est.stages[(0, 0)].from_stretch and not est.stages[(2, 0)].from_stretch
    assert est.stages[(2, 0)].demand == pytest.approx(JVM_OTHER_THREADS)
    notes = assumption_notes(est)
    assert any("2 stage(s) whose tasks ran beside each other" in n for n in notes)
    assert any(f"{JVM_OTHER_THREADS:g}× its thread's cores" in n for n in notes)
    # Neither a stretch (time off CPU) nor the prior carries the CPU time a task gains beside
    # another: every stage takes the host's law in the replay.
    assert est.growth_unseen() == frozenset({(0, 0), (1, 0), (2, 0)})


def test_a_bare_log_s_stages_take_the_co_running_law_where_their_demand_does_not_carry_it() -> None:
    """A JVM stage run two tasks at a time at local[2], each on CPU for 90% of its run (a
    stretch of 1.11 cores per task: neither the cores nor the demand make them wait at
    local[1]). Its CPU time grew beside the other task, which the stretch cannot show: at
    local[1] the replay takes it back out (1/(1 + γ)), and a run at local[1] predicted at
    local[2] puts it in."""
    jvm = [OperationNode(1, "MapPartitionsRDD")]
    tasks = [_task(2 * i + j, 0, 110.0 * i, 100.0, 90.0, 10) for i in range(20) for j in range(2)]
    profile = _profile([_stage(0, jvm, tasks)])
    base = baseline_config(profile, BaselineOverrides(host_cores=2))
    est = estimate_bare_log(profile, base.host_cores)
    assert est.growth_unseen() == frozenset({(0, 0)})
    grown = compile_workload(
        profile, base, demands=est.demands(), growth_unseen=est.growth_unseen()
    )
    plain = compile_workload(profile, base, demands=est.demands())
    assert grown.stages[0].co_running == CO_RUNNING_CPU and plain.stages[0].co_running == 0.0
    assert any("in 1 stage(s) a task's CPU is taken to grow by 10%" in n for n in grown.notes)
    one = apply_what_if(base, WhatIf(cores=1))
    (with_growth,) = all_stage_times(grown.stages, base, one)
    (without,) = all_stage_times(plain.stages, base, one)
    assert with_growth.component_ms[CPU] == pytest.approx(
        without.component_ms[CPU] / (1.0 + CO_RUNNING_CPU)
    )
    assert with_growth.cpu_work_change_ms < 0.0 == without.cpu_work_change_ms
    # The same tasks one at a time at local[1] (the prior's demand), predicted at local[2].
    alone = [_task(i, 0, 110.0 * i, 100.0, 90.0, 10) for i in range(40)]
    single = _profile([_stage(0, jvm, alone)], slots=1)
    base1 = baseline_config(single, BaselineOverrides(host_cores=2))
    est1 = estimate_bare_log(single, base1.host_cores)
    assert est1.growth_unseen() == frozenset({(0, 0)})
    two = apply_what_if(base1, WhatIf(cores=2))
    (more,) = all_stage_times(
        compile_workload(
            single, base1, demands=est1.demands(), growth_unseen=est1.growth_unseen()
        ).stages,
        base1,
        two,
    )
    (flat,) = all_stage_times(
        compile_workload(single, base1, demands=est1.demands()).stages, base1, two
    )
    assert more.concurrency > 1.5
    assert more.component_ms[CPU] == pytest.approx(
        flat.component_ms[CPU] * (1.0 + CO_RUNNING_CPU * (min(more.concurrency, 2.0) - 1.0))
    )


def test_python_stage_without_evidence_gets_the_lanes_or_the_prior() -> None:
    # Thread 50 ms CPU, 50 ms unattributed: two equal lanes, 2 cores; 10/80: the prior.
    even = [_task(i, 0, 200.0 * i, 100.0, 50.0, 10) for i in range(3)]
    thin = [_task(10 + i, 1, 1000.0 + 200.0 * i, 90.0, 10.0, 10) for i in range(3)]
    ops = [OperationNode(1, "PythonRDD")]
    est = estimate_bare_log(_profile([_stage(0, ops, even), _stage(1, ops, thin)]), 2)
    assert est.stages[(0, 0)].demand == pytest.approx(2.0)
    assert est.stages[(1, 0)].demand == pytest.approx(PYTHON_MIN_DEMAND)


def test_advice_assumptions_name_share_resource_and_evidence() -> None:
    from perfmodel.spark.bare_demand import advice_assumptions

    python = [OperationNode(1, "PythonRDD")]
    jvm = [OperationNode(2, "MapPartitionsRDD")]
    py_tasks = [_task(i, 0, 200.0 * i, 100.0, 10.0, 10) for i in range(3)]
    jvm_tasks = [_task(10 + i, 1, 1000.0 + 200.0 * i, 100.0, 40.0, 10) for i in range(3)]
    est = estimate_bare_log(_profile([_stage(0, python, py_tasks), _stage(1, jvm, jvm_tasks)]), 2)
    notes = advice_assumptions(est)
    assert "90% of its task time is unattributed" in notes[(0, 0)]
    assert "Python-worker CPU" in notes[(0, 0)] and "PythonRDD" in notes[(0, 0)]
    assert "unknown" in notes[(1, 0)]
    assert "45% of task time is unattributed time taken to be Python-worker CPU" in notes[None]
    assert "30% of task time is unattributed with no evidence" in notes[None]
    assert advice_assumptions(est, {(0, 0)}).keys() == {(1, 0), None}
