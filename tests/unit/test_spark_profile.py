"""The Spark front end against real event logs: counts must agree exactly with the log."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from perfmodel.analysis.diagnosis import diagnose
from perfmodel.dag.decomposition import decompose_task
from perfmodel.dag.tasks import TaskMetrics, TaskRun
from perfmodel.spark.load import build_profile
from tests.conftest import EXAMPLE_LOG, TEST_DATA, shared_entries, shared_eventlogs
from tests.rawcount import count


def _check_counts(path: Path) -> None:
    raw = count(path)
    loaded = build_profile(path)
    d = diagnose(loaded)
    p = loaded.profile
    assert loaded.problems == [] or all(pr.line is None for pr in loaded.problems)
    assert d.jobs == raw.jobs
    assert d.tasks == raw.task_ends
    assert d.failed_tasks == raw.failed_tasks
    assert d.task_end_reasons == dict(raw.task_end_reasons)
    assert d.sql_executions == raw.sql
    assert {s.key for s in p.stages.values() if s.status == "COMPLETE"} == raw.stage_completed
    assert {s.key for s in p.stages.values() if s.status == "FAILED"} == raw.stage_failed
    assert d.complete == (raw.app_end is not None)
    if raw.app_start is not None and raw.app_end is not None:
        assert d.duration_s == pytest.approx((raw.app_end - raw.app_start) / 1000.0)
    assert p.event_count == sum(raw.events.values())
    # Every ended task's decomposition adds up to its wall time, nothing hidden.
    for task in p.tasks():
        if task.finish_ms is not None:
            assert decompose_task(task).total_ms == pytest.approx(task.duration_ms, abs=1e-6)


@pytest.mark.parametrize("name", shared_entries() or ["<none>"])
def test_shared_logs_counts_agree(name: str) -> None:
    logs = shared_eventlogs()
    _check_counts(logs / name)


def test_bundled_example_counts_agree() -> None:
    _check_counts(EXAMPLE_LOG)


def test_in_progress_log_is_reported_unfinished() -> None:
    loaded = build_profile(shared_eventlogs() / "truncated_eventlog.inprogress")
    assert not loaded.profile.complete
    assert any("did not finish" in w for w in loaded.profile.warnings)
    assert loaded.profile.duration_ms > 0


def test_rolling_dir_reads_all_parts_in_order() -> None:
    loaded = build_profile(shared_eventlogs() / "eventlog_v2_local-1623876083964")
    p = loaded.profile
    assert p.complete
    assert loaded.task_end_events == 2801
    assert p.framework_version == "3.1.1"


def test_pre_13_log_without_log_start() -> None:
    loaded = build_profile(shared_eventlogs() / "local-1422981780767")
    d = diagnose(loaded)
    assert d.spark_version.startswith("unknown")
    assert d.stages_failed == 1
    assert d.failed_tasks == 1
    # Spark 1.2 has no CPU time metric: the compute time must not be reported as 0 CPU.
    assert all(not s.cpu_measured for s in d.stages if s.tasks_run)


def test_sql_plans_link_to_stages_through_metric_ids() -> None:
    loaded = build_profile(shared_eventlogs() / "local-1776286786993.zstd")
    p = loaded.profile
    assert len(p.queries) == 10
    linked = [
        node
        for q in p.queries.values()
        if q.plan is not None
        for node in q.plan.walk()
        if node.stage_keys
    ]
    assert linked, "no plan operator was linked to a stage"
    for node in linked:
        assert all(key in p.stages for key in node.stage_keys)
    jobs_with_query = [j for j in p.jobs.values() if j.query_id is not None]
    assert jobs_with_query
    for job in jobs_with_query:
        assert job.job_id in p.queries[job.query_id].job_ids


def test_stage_graph_and_operations() -> None:
    loaded = build_profile(EXAMPLE_LOG)
    p = loaded.profile
    assert p.resources.master == "local[2]"
    assert p.resources.total_slots == 2
    ran = [s for s in p.stages.values() if s.status == "COMPLETE"]
    assert any(s.parent_stage_ids for s in ran), "no shuffle dependency found"
    for s in ran:
        assert len(s.operations) > 0
        for parent in s.parent_stage_ids:
            assert p.stage_graph.has_edge(parent, s.stage_id)
    assert any(
        "reduceByKey" in s.operation(o).scope_name or "reduceByKey" in s.name
        for s in ran
        for o in s.operations
    )


def test_executors_and_config_from_cluster_log() -> None:
    loaded = build_profile(shared_eventlogs() / "example_spark_event_log.txt")
    res = loaded.profile.resources
    assert res.executor_cores == 3
    assert res.executor_instances == 3
    assert res.hosts == 3
    assert res.total_slots == 9


def test_codec_logs_from_real_spark_runs() -> None:
    logs = TEST_DATA / "eventlogs"
    if not logs.is_dir():
        pytest.skip("codec test logs not generated")
    found = [p for p in logs.iterdir() if p.name != "SOURCES.md"]
    assert found
    for path in found:
        loaded = build_profile(path)
        assert loaded.task_end_events > 0, path
        if path.name.endswith(".inprogress"):
            # Copied while Spark was still writing: unfinished, its last line cut off.
            assert not loaded.profile.complete, path
            continue
        assert loaded.profile.complete, path
        assert not [pr for pr in loaded.problems if pr.line is not None], path


def _task_end_line(task_id: int, metrics: bool) -> dict[str, object]:
    event: dict[str, object] = {
        "Event": "SparkListenerTaskEnd",
        "Stage ID": 3,
        "Stage Attempt ID": 1,
        "Task Type": "ShuffleMapTask",
        "Task End Reason": {"Reason": "Success"}
        if metrics
        else {"Reason": "ExecutorLostFailure", "Loss Reason": "gone"},
        "Task Info": {
            "Task ID": task_id,
            "Index": 7,
            "Attempt": 2,
            "Launch Time": 1_000_000 + task_id,
            "Executor ID": "5",
            "Host": "node-a",
            "Locality": "NODE_LOCAL",
            "Speculative": True,
            "Getting Result Time": 1_000_900,
            "Finish Time": 1_001_000 + task_id,
            "Accumulables": [{"ID": 1, "Name": "x", "Update": 1, "Value": 1}],
        },
    }
    if metrics:
        event["Task Metrics"] = {
            "Executor Deserialize Time": 11,
            "Executor Run Time": 12,
            "Executor CPU Time": 13_000_000,
            "Result Size": 14,
            "JVM GC Time": 15,
            "Result Serialization Time": 16,
            "Memory Bytes Spilled": 17,
            "Disk Bytes Spilled": 18,
            "Peak Execution Memory": 19,
            "Shuffle Read Metrics": {
                "Remote Bytes Read": 20,
                "Local Bytes Read": 21,
                "Fetch Wait Time": 22,
                "Total Records Read": 23,
            },
            "Shuffle Write Metrics": {
                "Shuffle Bytes Written": 24,
                "Shuffle Write Time": 25_000_000,
                "Shuffle Records Written": 26,
            },
            "Input Metrics": {"Bytes Read": 27, "Records Read": 28},
            "Output Metrics": {"Bytes Written": 29, "Records Written": 30},
        }
    return event


@pytest.mark.parametrize("padding", [0, 5000], ids=["line-by-line", "block-decoded"])
def test_task_end_fields_map_one_to_one(tmp_path: Path, padding: int) -> None:
    """Every field of a task's run and metrics comes from its own JSON field, whichever
    decoding path (the careful first block, or whole blocks at once) the line takes."""
    filler = {"Event": "SparkListenerBlockUpdated", "Block Updated Info": {"pad": "x" * 300}}
    lines = [{"Event": "SparkListenerLogStart", "Spark Version": "3.5.1"}]
    lines += [filler] * padding
    lines += [_task_end_line(1, metrics=True), _task_end_line(2, metrics=False)]
    log = tmp_path / "local-1"
    log.write_text("".join(json.dumps(e) + "\n" for e in lines))
    assert gc.isenabled()
    loaded = build_profile(log)
    assert gc.isenabled()  # paused while building, and turned back on
    assert loaded.problems == []
    tasks = {t.task_id: t for t in loaded.profile.tasks()}
    assert tasks[1] == TaskRun(
        task_id=1,
        index=7,
        attempt=2,
        stage_id=3,
        stage_attempt=1,
        executor_id="5",
        host="node-a",
        launch_ms=1_000_001.0,
        finish_ms=1_001_001.0,
        getting_result_ms=1_000_900.0,
        status="SUCCESS",
        failure_reason=None,
        locality="NODE_LOCAL",
        speculative=True,
        resubmitted=False,
        task_type="ShuffleMapTask",
        metrics=TaskMetrics(
            reported=True,
            run_ms=12.0,
            cpu_ms=13.0,
            has_cpu_time=True,
            deserialize_ms=11.0,
            result_serialize_ms=16.0,
            gc_ms=15.0,
            shuffle_fetch_wait_ms=22.0,
            shuffle_write_ms=25.0,
            input_bytes=27,
            input_records=28,
            output_bytes=29,
            output_records=30,
            shuffle_read_bytes=41,
            shuffle_remote_read_bytes=20,
            shuffle_read_records=23,
            shuffle_write_bytes=24,
            shuffle_write_records=26,
            memory_spill_bytes=17,
            disk_spill_bytes=18,
            peak_execution_memory=19,
            result_size=14,
        ),
    )
    lost = tasks[2]
    assert (lost.status, lost.failure_reason) == ("FAILED", "ExecutorLostFailure: gone")
    assert lost.metrics == TaskMetrics(reported=False)


def test_unattributed_finding_points_at_samples_only_when_there_are_some() -> None:
    loaded = build_profile(TEST_DATA / "eventlogs" / "wordcount.zstd")
    (bare,) = [f for f in diagnose(loaded).findings if "broken down" in f]
    assert "perfmodel record" in bare
    with_samples = diagnose(loaded, has_samples=True).findings
    (sampled,) = [f for f in with_samples if "broken down" in f]
    assert "perfmodel record" not in sampled and "top functions" in sampled
