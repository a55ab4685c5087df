"""The scale benchmark's helpers: the log replicator (benchmarks/replicate_log.py) on a real
log from the shared set, and the measuring pieces of benchmarks/scale.py."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import BENCHMARKS, SHARED_EVENTLOGS, load_script

# Real, zstd, dynamic allocation, 20 jobs / 45 stage infos / 235 tasks / 5 SQL executions.
SOURCE = SHARED_EVENTLOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd"
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
SQL_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"


@pytest.fixture(scope="module")
def replicate_log() -> ModuleType:
    return load_script("replicate_log", BENCHMARKS / "replicate_log.py")


@pytest.fixture(scope="module")
def scale(replicate_log: ModuleType) -> ModuleType:
    return load_script("scale", BENCHMARKS / "scale.py")


@pytest.fixture(scope="module")
def source_events(replicate_log: ModuleType) -> list[dict[str, Any]]:
    if not SOURCE.exists():
        pytest.skip(f"shared event logs not found at {SHARED_EVENTLOGS}")
    return [json.loads(line) for line in replicate_log.read_lines(SOURCE) if line.strip()]


@pytest.fixture(scope="module")
def tripled(replicate_log: ModuleType, source_events: list[dict[str, Any]], tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "x3.zstd"
    replicate_log.write_events(replicate_log.replicate(SOURCE, 3), out)
    events = [json.loads(line) for line in replicate_log.read_lines(out) if line.strip()]
    return out, events


def _kinds(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["Event"] for e in events)


def test_one_copy_is_the_original(replicate_log: ModuleType, source_events, tmp_path: Path):
    out = tmp_path / "x1.json"
    replicate_log.write_events(replicate_log.replicate(SOURCE, 1), out)
    assert [json.loads(line) for line in out.read_text().splitlines()] == source_events


def test_job_events_tripled_app_events_once(source_events, tripled):
    _, events = tripled
    before, after = _kinds(source_events), _kinds(events)
    for kind in ("SparkListenerJobStart", "SparkListenerStageCompleted", "SparkListenerTaskEnd"):
        assert after[kind] == 3 * before[kind] > 0
    assert after[SQL_START] == 3 * before[SQL_START] > 0
    for kind in ("SparkListenerApplicationStart", "SparkListenerEnvironmentUpdate"):
        assert after[kind] == before[kind] == 1
    assert after["SparkListenerExecutorAdded"] == before["SparkListenerExecutorAdded"]
    assert events[-1]["Event"] == "SparkListenerApplicationEnd"


def test_ids_unique_and_links_kept(tripled):
    _, events = tripled
    jobs = [e["Job ID"] for e in events if e["Event"] == "SparkListenerJobStart"]
    tasks = [e["Task Info"]["Task ID"] for e in events if e["Event"] == "SparkListenerTaskEnd"]
    sqls = [e["executionId"] for e in events if e["Event"] == SQL_START]
    stage_attempts = [
        (e["Stage Info"]["Stage ID"], e["Stage Info"]["Stage Attempt ID"])
        for e in events
        if e["Event"] == "SparkListenerStageCompleted"
    ]
    for ids in (jobs, tasks, sqls, stage_attempts):
        assert len(ids) == len(set(ids))
    # Every job's stages are declared by it, every task's stage is one of some job's, every
    # job's SQL execution exists, and every RDD parent is an RDD of the same replica's range.
    declared = {s for e in events if e["Event"] == "SparkListenerJobStart" for s in e["Stage IDs"]}
    assert {e["Stage ID"] for e in events if e["Event"] == "SparkListenerTaskEnd"} <= declared
    job_sqls = {
        int(e["Properties"]["spark.sql.execution.id"])
        for e in events
        if e["Event"] == "SparkListenerJobStart" and "spark.sql.execution.id" in e["Properties"]
    }
    assert job_sqls and job_sqls <= set(sqls)
    assert {e["executionId"] for e in events if e["Event"] == SQL_END} == set(sqls)
    starts = [e for e in events if e["Event"] == "SparkListenerJobStart"]
    per = len(starts) // 3
    rdds = [
        {
            r["RDD ID"]
            for e in starts[i * per : (i + 1) * per]
            for s in e["Stage Infos"]
            for r in s["RDD Info"]
        }
        for i in range(3)
    ]
    assert rdds[0] and not (rdds[0] & rdds[1]) and not (rdds[1] & rdds[2])
    for e in starts:
        for info in e["Stage Infos"]:
            assert set(info["Parent IDs"]) <= set(e["Stage IDs"])


def test_replica_accumulators_disjoint(source_events, tripled):
    _, events = tripled
    ends = [e for e in events if e["Event"] == "SparkListenerTaskEnd"]
    per_replica = len(ends) // 3
    ids = [
        {
            a["ID"]
            for e in ends[i * per_replica : (i + 1) * per_replica]
            for a in e["Task Info"]["Accumulables"]
        }
        for i in range(3)
    ]
    assert ids[0] and not (ids[0] & ids[1]) and not (ids[1] & ids[2])
    plan_ids = {
        m["accumulatorId"]
        for e in events
        if "sparkPlanInfo" in e  # the execution's start and its adaptive re-plans
        for m in _plan_metrics(e["sparkPlanInfo"])
    }
    task_sql_ids = {
        a["ID"] for e in ends for a in e["Task Info"]["Accumulables"] if a.get("Metadata") == "sql"
    }
    assert task_sql_ids <= plan_ids  # SQL metrics still name a metric of some plan


def _plan_metrics(node: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(node.get("metrics", []))
    for child in node.get("children", []):
        found += _plan_metrics(child)
    return found


def test_replicas_follow_one_another(tripled):
    _, events = tripled
    starts = [e for e in events if e["Event"] == "SparkListenerJobStart"]
    per = len(starts) // 3
    ends = [e["Completion Time"] for e in events if e["Event"] == "SparkListenerJobEnd"]
    for r in (1, 2):
        first_of_r = min(e["Submission Time"] for e in starts[r * per : (r + 1) * per])
        assert first_of_r > max(ends[(r - 1) * per : r * per])
    assert events[-1]["Timestamp"] >= max(ends)


def test_perfmodel_reads_the_replicated_log(tripled):
    from perfmodel.spark.load import build_profile

    out, _ = tripled
    original = build_profile(str(SOURCE)).profile
    tripled_profile = build_profile(str(out)).profile
    assert len(tripled_profile.jobs) == 3 * len(original.jobs)
    assert len(tripled_profile.stages) == 3 * len(original.stages)


def test_survey_counts(scale: ModuleType, tripled, source_events):
    out, events = tripled
    found = scale.survey(out)
    kinds = _kinds(events)
    assert found.jobs == kinds["SparkListenerJobStart"] == 60
    assert found.tasks == kinds["SparkListenerTaskEnd"] == 705
    assert found.stages == kinds["SparkListenerStageCompleted"]
    assert found.lines == len(events)
    assert scale.survey(out) == found  # from the cache beside the log


@pytest.mark.parametrize("buffer_bytes", [4 << 20, 100])
def test_floor_decodes_every_event(
    scale: ModuleType,
    tripled,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    buffer_bytes: int,
):
    """The floor process reads as many events as the log holds, compressed or plain, and
    whatever its buffer (100 bytes: shorter than every line, so it must grow)."""
    from perfmodel.spark.events import EVENT_TYPES, PASSIVE_EVENTS

    out, events = tripled
    plain = tmp_path / "x3.json"
    plain.write_text("".join(json.dumps(e) + "\n" for e in events))
    known = sum(e["Event"] in EVENT_TYPES or e["Event"] in PASSIVE_EVENTS for e in events)
    for log in (out, plain):
        scale.floor_child(str(log), buffer_bytes)
        found = json.loads(capsys.readouterr().out)
        # All but one (a fully-qualified SparkListenerMiscellaneousProcessAdded, read line by
        # line as ingest does with an event it does not decode).
        assert found["events"] == known == len(events) - 1


def test_measure_a_process(scale: ModuleType):
    grow = "b = bytearray(80 * 2**20); print('{}')"
    m = scale.measure([sys.executable, "-c", grow], timeout_s=60)
    assert m.rc == 0 and not m.timed_out
    assert m.max_rss_mb >= 80  # the child's own peak, not the benchmark's
    slow = scale.measure([sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5)
    assert slow.timed_out and slow.wall_s < 10


def test_measure_counts_a_silent_success_as_failed(scale: ModuleType):
    """A wrong --perfmodel (say, a module that imports and exits) must not be timed as a run."""
    silent = scale.measure([sys.executable, "-c", "pass"], timeout_s=60)
    assert silent.rc != 0 and not silent.timed_out
    assert scale.measure([sys.executable, "-c", "pass"], 60, expect_json=False).rc == 0


def test_paired_ratio(scale: ModuleType):
    r = scale.paired_ratio([1.1, 2.2, 3.3, 4.4], [1.0, 2.0, 3.0, 4.0])
    assert r["n"] == 4 and math.isclose(r["ratio"], 1.1)
    assert math.isclose(r["ci_low"], 1.1) and math.isclose(r["ci_high"], 1.1)
    noisy = scale.paired_ratio([1.0, 1.2, 0.9, 1.1], [1.0, 1.0, 1.0, 1.0])
    assert noisy["ci_low"] < noisy["ratio"] < noisy["ci_high"]


def test_zstd_framed_as_spark_writes_it(replicate_log: ModuleType, source_events, tmp_path: Path):
    """A frame ends after each event Spark's writer flushes (jobs, completed stages, SQL...);
    task events and stage submissions run on in the frame, as in Spark's own zstd logs."""
    import zstandard

    events = source_events[:60]
    out = tmp_path / "part.zstd"
    replicate_log.write_events(events, out)
    data, frames = out.read_bytes(), []
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        frames.append([json.loads(line) for line in frame.decompress(data).splitlines()])
        assert frame.eof
        data = frame.unused_data
    assert [e for f in frames for e in f] == events
    unflushed = replicate_log._UNFLUSHED
    assert any(len(f) > 1 for f in frames)  # task events shared a frame
    for f in frames[:-1]:
        assert f[-1]["Event"] not in unflushed
        assert all(e["Event"] in unflushed for e in f[:-1])
