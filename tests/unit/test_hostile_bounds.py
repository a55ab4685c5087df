"""Issue 42, the last gaps of class 5: a log without an end event is bounded by the times its
events agree on; an application start that is no date Spark ran at is flagged. (Class 1's
gap, dynamic allocation's executors sizing no slots past the workload's tasks, is checked
with 30,000 executors in tests/e2e/test_hostile_executor_counts.py.)"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.analysis import load
from perfmodel.spark.builder import EARLIEST_SPARK_MS, plausible_date, plausible_end
from perfmodel.spark.load import build_profile
from tests.unit.hostile_helpers import first, wordcount_events, write_events

YEAR_9999_MS = 253_402_300_799_000


# -- 1. a log without an end event -------------------------------------------------------------


def _without_end(events: list[dict]) -> list[dict]:
    return [e for e in events if e["Event"] != "SparkListenerApplicationEnd"]


@settings(max_examples=20, deadline=None)
@given(
    which=st.integers(0, 10),
    late_ms=st.integers(10**10, 10**13),
    absolute=st.booleans(),
)
def test_a_log_without_its_end_is_bounded_by_its_own_times(
    tmp_path_factory: pytest.TempPathFactory, which: int, late_ms: int, absolute: bool
) -> None:
    events = _without_end(wordcount_events())
    ends = [e for e in events if e["Event"] == "SparkListenerTaskEnd"]
    honest = build_profile(write_events(tmp_path_factory.mktemp("end") / "a.json", events))
    task = ends[which % len(ends)]["Task Info"]
    task["Finish Time"] = YEAR_9999_MS if absolute else task["Finish Time"] + late_ms
    log = write_events(tmp_path_factory.mktemp("end") / "b.json", events)
    loaded = build_profile(log)
    assert loaded.quality.counts["out_of_range_value"] == 1
    assert loaded.profile.end_ms == honest.profile.end_ms
    assert loaded.profile.task_table().finish_ms.max() <= loaded.profile.end_ms
    d = load(log).diagnose()
    assert "out of range value" in d.data_quality["headline"]


@given(st.lists(st.floats(0, 10**9), min_size=1, max_size=200))
def test_a_steady_clock_is_never_cut(offsets: list[float]) -> None:
    """Times no more than a day apart are all plausible, whatever their spread."""
    times = np.cumsum(np.minimum(np.array(offsets), 86_400_000.0)) + 1.6e12
    assert plausible_end(times, 1.6e12) == times.max()


# -- 2. an application start that is no date ---------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.one_of(st.integers(0, int(EARLIEST_SPARK_MS) - 1), st.integers(10**13, YEAR_9999_MS)))
def test_an_application_start_that_is_no_date_is_flagged(
    tmp_path_factory: pytest.TempPathFactory, start_ms: int
) -> None:
    events = wordcount_events()
    first(events, "ApplicationStart")["Timestamp"] = start_ms
    log = write_events(tmp_path_factory.mktemp("start") / "log.json", events)
    loaded = build_profile(log)
    assert loaded.quality.counts["out_of_range_value"] >= 1
    p = loaded.profile
    assert p.start_ms is not None and plausible_date(p.start_ms, time.time() * 1000)
    assert p.end_ms is not None and p.end_ms - p.start_ms < 3_600_000
    assert any("not a plausible date" in w for w in p.warnings)
    d = load(log).diagnose()
    assert "out of range value" in d.data_quality["headline"]


def test_the_real_start_is_a_date(tmp_path: Path) -> None:
    loaded = build_profile(write_events(tmp_path / "log.json", wordcount_events()))
    assert loaded.quality.counts["out_of_range_value"] == 0


@settings(max_examples=20, deadline=None)
@given(
    end_ms=st.one_of(st.integers(1, int(EARLIEST_SPARK_MS) - 1), st.integers(10**13, YEAR_9999_MS)),
    late_task=st.booleans(),
)
def test_an_application_end_that_is_no_date_is_flagged(
    tmp_path_factory: pytest.TempPathFactory, end_ms: int, late_task: bool
) -> None:
    """An end in the year 9999 would hold every time inside the span: the end is taken from
    the times the events agree on, and a task finishing in the year 9999 is still clamped."""
    events = wordcount_events()
    honest = build_profile(write_events(tmp_path_factory.mktemp("end") / "a.json", events))
    first(events, "ApplicationEnd")["Timestamp"] = end_ms
    if late_task:
        first(events, "TaskEnd")["Task Info"]["Finish Time"] = YEAR_9999_MS
    log = write_events(tmp_path_factory.mktemp("end") / "b.json", events)
    loaded = build_profile(log)
    p = loaded.profile
    assert loaded.quality.counts["out_of_range_value"] >= 1 + late_task
    assert p.complete
    assert p.end_ms is not None and p.end_ms <= honest.profile.end_ms
    assert p.task_table().finish_ms.max() <= p.end_ms
    assert any("end time is not a plausible date" in w for w in p.warnings)
    d = load(log).diagnose()
    assert "out of range value" in d.data_quality["headline"]
