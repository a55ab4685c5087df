"""`spark_metrics` against sums made independently from the raw JSON of real logs.

The reference here is written from Spark's own rules, not from perfmodel's reader: the
History Server adds each ended task attempt's metrics to its stage (failed attempts
included, attempts without metrics adding nothing, a second end of the same attempt
adding nothing), under the REST API's names and units.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from perfmodel.analysis.diagnosis import diagnose
from perfmodel.spark.load import build_profile
from tests.conftest import shared_eventlogs

PLAIN_LOGS = [
    "example_spark_event_log.txt",  # Spark 3.0, 200 tasks
    "application_1538416563558_0014",  # Spark 2.5, executors lost (tasks without metrics)
    "local-1422981780767",  # Spark 1.2: no CPU time
    "app-20161115172038-0000",  # failed task attempts
]


def _reference(name: str) -> dict[tuple[int, int], dict[str, int]]:
    sums: dict[tuple[int, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: set[int] = set()
    for line in (shared_eventlogs() / name).read_text().splitlines():
        if '"SparkListenerTaskEnd"' not in line:
            continue
        event = json.loads(line)
        task_id = event["Task Info"]["Task ID"]
        if task_id in seen:
            continue
        seen.add(task_id)
        m = event.get("Task Metrics")
        if not m:
            continue
        s = sums[(event["Stage ID"], event.get("Stage Attempt ID", 0))]
        s["executorRunTime"] += m.get("Executor Run Time", 0)
        s["executorCpuTime"] += m.get("Executor CPU Time", 0)
        s["jvmGcTime"] += m.get("JVM GC Time", 0)
        s["executorDeserializeTime"] += m.get("Executor Deserialize Time", 0)
        s["resultSerializationTime"] += m.get("Result Serialization Time", 0)
        s["resultSize"] += m.get("Result Size", 0)
        s["memoryBytesSpilled"] += m.get("Memory Bytes Spilled", 0)
        s["diskBytesSpilled"] += m.get("Disk Bytes Spilled", 0)
        read = m.get("Shuffle Read Metrics") or {}
        s["shuffleRemoteBytesRead"] += read.get("Remote Bytes Read", 0)
        s["shuffleLocalBytesRead"] += read.get("Local Bytes Read", 0)
        s["shuffleFetchWaitTime"] += read.get("Fetch Wait Time", 0)
        write = m.get("Shuffle Write Metrics") or {}
        s["shuffleWriteBytes"] += write.get("Shuffle Bytes Written", 0)
        s["shuffleWriteTime"] += write.get("Shuffle Write Time", 0)
        s["inputBytes"] += (m.get("Input Metrics") or {}).get("Bytes Read", 0)
    return sums


@pytest.mark.parametrize("name", PLAIN_LOGS)
def test_spark_metrics_are_the_raw_sums(name: str) -> None:
    want = _reference(name)
    d = diagnose(build_profile(shared_eventlogs() / name))
    assert want, "the reference found no task metrics"
    for stage in d.stages:
        ref = want.get((stage.stage_id, stage.attempt), {})
        for field, value in ref.items():
            assert stage.spark_metrics[field] == value, (stage.stage_id, field)
        assert stage.spark_metrics["shuffleReadBytes"] == (
            ref.get("shuffleRemoteBytesRead", 0) + ref.get("shuffleLocalBytesRead", 0)
        )
    for field in ("executorRunTime", "jvmGcTime", "shuffleWriteTime", "inputBytes"):
        assert d.spark_metrics[field] == sum(s.spark_metrics[field] for s in d.stages)


@pytest.mark.parametrize("name", PLAIN_LOGS)
def test_the_decomposition_never_exceeds_the_raw_sums(name: str) -> None:
    """The scaled-down shares can only read lower than Spark's own totals."""
    d = diagnose(build_profile(shared_eventlogs() / name))
    raw = d.spark_metrics
    assert d.decomposition["gc"] <= raw["jvmGcTime"] / 1000 + 1e-9
    assert d.decomposition["cpu"] <= raw["executorCpuTime"] / 1e9 + 1e-9
    assert d.decomposition["network"] <= raw["shuffleFetchWaitTime"] / 1000 + 1e-9
    assert d.decomposition["disk"] <= raw["shuffleWriteTime"] / 1e9 + 1e-9
