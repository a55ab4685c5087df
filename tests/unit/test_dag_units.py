"""Unit tests of the DAG layer: decomposition, resource resolution, critical path."""

from __future__ import annotations

import pytest

from perfmodel.analysis.diagnosis import critical_path
from perfmodel.dag.decomposition import decompose_task, decompose_tasks
from perfmodel.dag.model import ApplicationProfile, ExecutorInfo, StageNode
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.tasks import TaskMetrics, TaskRun
from perfmodel.spark.config import parse_jvm_memory, resolve_resources, sustained_concurrency


def _task(tid: int, launch: float, finish: float | None, **metrics: float) -> TaskRun:
    return TaskRun(
        task_id=tid,
        index=tid,
        attempt=0,
        stage_id=0,
        stage_attempt=0,
        executor_id="1",
        host="h",
        launch_ms=launch,
        finish_ms=finish,
        status="SUCCESS",
        metrics=TaskMetrics(**metrics),  # type: ignore[arg-type]
    )


def test_decomposition_adds_up_and_keeps_the_rest_visible() -> None:
    t = _task(
        1,
        0,
        1000,
        run_ms=900,
        cpu_ms=500,
        has_cpu_time=True,
        gc_ms=100,
        shuffle_fetch_wait_ms=50,
        shuffle_write_ms=20,
    )
    d = decompose_task(t)
    assert d.cpu == 500 and d.gc == 100 and d.network == 50 and d.disk == 20
    assert d.unattributed == pytest.approx(230)
    assert d.scheduling == pytest.approx(100)
    assert d.total_ms == pytest.approx(1000)


def test_overlapping_measurements_are_scaled_into_the_run_time() -> None:
    t = _task(1, 0, 1000, run_ms=800, cpu_ms=700, has_cpu_time=True, gc_ms=300)
    d = decompose_task(t)
    assert d.cpu + d.gc == pytest.approx(800)
    assert d.cpu / d.gc == pytest.approx(7 / 3)
    assert d.unattributed == pytest.approx(0)


def test_missing_cpu_metric_is_not_zero_cpu() -> None:
    d = decompose_task(_task(1, 0, 100, run_ms=100))
    assert not d.cpu_measured
    assert d.unattributed == 100


def test_unfinished_tasks_are_left_out_of_sums() -> None:
    total = decompose_tasks([_task(1, 0, 100, run_ms=100), _task(2, 0, None, run_ms=50)])
    assert total.total_ms == pytest.approx(100)


def test_concurrency_frees_a_slot_before_reusing_it() -> None:
    tasks = [_task(1, 0, 10), _task(2, 10, 20), _task(3, 5, 15)]
    assert sustained_concurrency(tasks) == 2


def test_brief_overlaps_at_slot_handover_are_not_slots() -> None:
    # Two slots; the driver logs each end 1 ms after the slot started its next task.
    tasks = [_task(i, 100 * (i // 2), 100 * (i // 2) + 101) for i in range(40)]
    assert sustained_concurrency(tasks) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4g", 4 << 30), ("512m", 512 << 20), ("1024", 1024 << 20), ("2G", 2 << 30), ("x", None)],
)
def test_jvm_memory(text: str, expected: int | None) -> None:
    assert parse_jvm_memory(text) == expected


def _profile(master: str, **props: str) -> ApplicationProfile:
    p = ApplicationProfile(app_id="a", properties={"spark.master": master, **props})
    stage = StageNode(stage_id=0, attempt=0, name="s", num_tasks=3)
    stage.tasks = [_task(1, 0, 10), _task(2, 0, 10), _task(3, 0, 10)]
    p.stages[(0, 0)] = stage
    return p


def test_local_modes() -> None:
    assert resolve_resources(_profile("local[4]")).total_slots == 4
    star = resolve_resources(_profile("local[*]"))
    assert star.total_slots == 3 and "observed" in star.sources["executor_cores"]
    # The driver's executor event says how many cores local[*] had, whatever ran at once.
    logged = _profile("local[*]")
    logged.executors["driver"] = ExecutorInfo("driver", "localhost", cores=8)
    told = resolve_resources(logged)
    assert (told.executor_cores, told.total_slots) == (8, 8)
    assert told.sources["executor_cores"] == "log: local[*] driver executor cores"
    cluster = resolve_resources(_profile("local-cluster[2,3,1024]"))
    assert (cluster.executor_instances, cluster.executor_cores) == (2, 3)
    assert cluster.executor_memory_bytes == 1024 << 20
    assert resolve_resources(_profile("local[2]", **{"spark.task.cpus": "2"})).total_slots == 1


def test_critical_path_walks_dependencies_and_driver_gaps() -> None:
    p = ApplicationProfile(app_id="a", start_ms=0, end_ms=100)
    spans = {0: (10, 30, []), 1: (10, 20, []), 2: (35, 60, [0, 1]), 3: (70, 90, [])}
    for sid, (sub, done, parents) in spans.items():
        p.stages[(sid, 0)] = StageNode(
            stage_id=sid,
            attempt=0,
            name=str(sid),
            num_tasks=1,
            parent_stage_ids=parents,
            submit_ms=sub,
            complete_ms=done,
            status="COMPLETE",
        )
    path = critical_path(p)
    assert path.stage_ids == [0, 2, 3]
    assert path.stage_s == pytest.approx((20 + 25 + 20) / 1000)
    assert path.gaps_s == pytest.approx((10 + 5 + 10) / 1000)


def test_resource_vector() -> None:
    v = ResourceVector.from_weights({"cpu": 3, "disk": 1})
    assert v.shares == {"cpu": 0.75, "disk": 0.25}
    assert v.dominant == "cpu"
    assert ResourceVector.from_weights({"cpu": 0}).dominant is None


def test_attempt_without_metrics_is_unattributed_not_scheduling() -> None:
    """An attempt whose executor was lost reports no metrics: its time is not 'scheduling'."""
    t = _task(1, 0, 5000)
    t.metrics = TaskMetrics(reported=False)
    d = decompose_task(t)
    assert d.unattributed == 5000 and d.scheduling == 0


def test_cpu_is_measured_if_any_attempt_measured_it() -> None:
    measured = _task(1, 0, 100, run_ms=100, cpu_ms=50, has_cpu_time=True)
    lost = _task(2, 0, 100)
    lost.metrics = TaskMetrics(reported=False)
    assert decompose_tasks([measured, lost]).cpu_measured
