"""Issue 42, class 5: values in range for their type but absurd for the application are
clamped, counted as ``out_of_range_value`` and named in the headline."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.analysis import load
from perfmodel.spark.load import build_profile
from tests.unit.hostile_helpers import first, wordcount_events, write_events

YEAR_9999_MS = 253_402_300_799_000


def _span(events: list[dict]) -> tuple[int, int]:
    return first(events, "ApplicationStart")["Timestamp"], first(events, "ApplicationEnd")[
        "Timestamp"
    ]


def _successful_ends(events: list[dict]) -> list[dict]:
    return [
        e
        for e in events
        if e["Event"] == "SparkListenerTaskEnd" and e["Task End Reason"]["Reason"] == "Success"
    ]


@given(
    which=st.integers(0, 10),
    field=st.sampled_from(["Finish Time", "Launch Time"]),
    offset_ms=st.one_of(
        st.integers(2_000, 10**7),  # an hour after the end
        st.integers(10**9, 10**13),  # years after
    ),
    before=st.booleans(),
)
def test_task_times_outside_the_application(
    tmp_path_factory: pytest.TempPathFactory,
    which: int,
    field: str,
    offset_ms: int,
    before: bool,
) -> None:
    events = wordcount_events()
    start, end = _span(events)
    task = _successful_ends(events)[which % len(_successful_ends(events))]
    info = task["Task Info"]
    info[field] = max(1, start - offset_ms) if before else end + offset_ms  # 0: "not ended"
    log = write_events(tmp_path_factory.mktemp("times") / "log.json", events)
    loaded = build_profile(log)
    counts = loaded.quality.counts
    # A finish before the application started also ends before the task's own launch: an
    # impossible time, counted as such.
    assert counts["out_of_range_value"] + counts["impossible_times"] >= 1
    table = loaded.profile.task_table()
    assert table.launch_ms.min() >= start and table.finish_ms.max() <= end
    d = load(log).diagnose()
    assert d.data_quality["headline"].startswith("damaged log, figures may be off")
    # The clamped task spans at most the application: one slot's worth more, never the
    # 2775% (or 10¹¹%) an hour-late or year-9999 finish gave.
    assert d.slot_utilisation is None or d.slot_utilisation <= 2.0


@pytest.mark.parametrize(
    ("where", "value"),
    [("Launch Time", 0), ("Finish Time", YEAR_9999_MS)],
)
def test_epoch_zero_and_year_9999(tmp_path: Path, where: str, value: int) -> None:
    events = wordcount_events()
    _successful_ends(events)[0]["Task Info"][where] = value
    loaded = build_profile(write_events(tmp_path / "log.json", events))
    assert loaded.quality.counts["out_of_range_value"] == 1
    durations = loaded.profile.task_table().duration_ms
    assert durations.max() <= loaded.profile.end_ms - loaded.profile.start_ms


@given(
    metric=st.sampled_from(
        ["JVM GC Time", "Executor Run Time", "Executor Deserialize Time", "Executor CPU Time"]
    ),
    value=st.integers(10**7, 10**15),
    which=st.integers(0, 10),
)
def test_metrics_longer_than_the_task_ran(
    tmp_path_factory: pytest.TempPathFactory, metric: str, value: int, which: int
) -> None:
    events = wordcount_events()
    ends = _successful_ends(events)
    task = ends[which % len(ends)]
    task["Task Metrics"][metric] = value * (10**6 if metric == "Executor CPU Time" else 1)
    log = write_events(tmp_path_factory.mktemp("metric") / "log.json", events)
    loaded = build_profile(log)
    assert loaded.quality.counts["out_of_range_value"] == 1
    table = loaded.profile.task_table()
    wall = table.finish_ms - table.launch_ms
    for column in ("gc_ms", "run_ms", "deserialize_ms", "cpu_ms"):
        assert (getattr(table, column) <= wall + 1000.0).all()
    baseline = load(write_events(log.with_name("clean.json"), wordcount_events())).diagnose()
    damaged = load(log).diagnose()
    assert "out of range value" in damaged.data_quality["headline"]
    # One task's clamped metric moves the decomposition by at most that task's wall time
    # (unclamped, 10⁷ ms and more would take it over).
    task_s = (task["Task Info"]["Finish Time"] - task["Task Info"]["Launch Time"]) / 1000.0
    assert damaged.task_time_s == pytest.approx(baseline.task_time_s)
    for name, seconds in damaged.decomposition.items():
        assert abs(seconds - baseline.decomposition[name]) <= task_s + 1e-6


@given(
    stage=st.integers(0, 5),
    when=st.sampled_from(["Submission Time", "Completion Time"]),
    value=st.sampled_from([0, 1, YEAR_9999_MS]),
)
def test_stage_times_outside_the_application(
    tmp_path_factory: pytest.TempPathFactory, stage: int, when: str, value: int
) -> None:
    events = wordcount_events()
    done = [e for e in events if e["Event"] == "SparkListenerStageCompleted"]
    done[stage % len(done)]["Stage Info"][when] = value
    loaded = build_profile(write_events(tmp_path_factory.mktemp("st") / "log.json", events))
    counts = loaded.quality.counts  # a completion before the submission is impossible
    assert counts["out_of_range_value"] + counts["impossible_times"] >= 1
    p = loaded.profile
    for s in p.stages.values():
        for t in (s.submit_ms, s.complete_ms):
            assert t is None or p.start_ms <= t <= p.end_ms


def test_the_real_log_has_no_out_of_range_values(tmp_path: Path) -> None:
    loaded = build_profile(write_events(tmp_path / "log.json", wordcount_events()))
    assert not loaded.quality.damaged
