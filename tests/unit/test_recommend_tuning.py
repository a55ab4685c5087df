"""`recommend`'s settings dimension (`perfmodel.recommend.tuning`): candidate values derived
from the log's data sizes and the configuration's slots, which points are predicted again
under them, a search on a log no setting controls, and a profile of another framework,
to which Spark settings do not apply."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from perfmodel.analysis import CONF, PartitionKnob, analyse_profile
from perfmodel.recommend.layouts import layouts_for
from perfmodel.recommend.search import Point, Request, points_to_tune, search, target_config
from perfmodel.recommend.tuning import (
    ADVISORY_SIZE,
    MAX_CANDIDATES,
    MAX_PARTITION_COUNT,
    MAX_TUNED_POINTS,
    PARALLELISM_FIRST,
    SHUFFLE_PARTITIONS,
    byte_text,
    candidate_counts,
    candidate_settings,
    settings_label,
)
from perfmodel.simulate.config import BaselineOverrides, ConfigError
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.whatif import parse_change
from perfmodel.spark.settings import parse_settings
from tests.recommend_helpers import SyntheticAnalysis, catalog, row

MIB = 1 << 20
GIB = 1 << 30


def test_counts_cut_the_largest_shuffle_by_size_then_by_slots() -> None:
    # 1 GiB into 16, 64, 128 and 256 MiB partitions; 8 slots: 8 (a duplicate), 16 (one
    # too), 24.
    assert candidate_counts(GIB, 8) == [64, 16, 8, 4, 24]
    # A tiny shuffle: one partition by size, then one to three waves of the slots.
    assert candidate_counts(200_000, 2) == [1, 2, 4, 6]
    # Never beyond Spark's own limit, never more than a handful.
    huge = candidate_counts(10 * (1 << 40), 4)
    assert max(huge) == MAX_PARTITION_COUNT
    assert all(len(candidate_counts(b, s)) <= MAX_CANDIDATES for b in (1, GIB) for s in (1, 64))


def test_shuffle_partition_candidates_leave_out_the_runs_own_value() -> None:
    knob = PartitionKnob(SHUFFLE_PARTITIONS, 16, 3, GIB, True)
    values = [c[SHUFFLE_PARTITIONS] for c in candidate_settings(knob, 8)]
    assert values == ["64", "8", "4", "24"]
    parsed, _ = parse_settings({SHUFFLE_PARTITIONS: values[0]})
    assert parsed[SHUFFLE_PARTITIONS] == 64


def test_advisory_sizes_turn_parallelism_first_off_and_read_as_spark_sizes() -> None:
    knob = PartitionKnob(ADVISORY_SIZE, 64 * MIB, 2, GIB, True)
    found = candidate_settings(knob, 8)
    # The same counts as the shuffle-partition knob, as the size that cuts 1 GiB into them.
    assert [c[ADVISORY_SIZE] for c in found] == ["16m", "64m", "128m", "256m", "43691k"]
    assert all(c[PARALLELISM_FIRST] == "false" for c in found)
    for candidate in found:  # each a value Spark's table accepts
        parsed, _ = parse_settings(candidate)
        assert parsed[PARALLELISM_FIRST] is False
    # A run that coalesced by the advisory size already (parallelismFirst off) keeps its
    # own size out; with parallelismFirst on, that size is a change and stays.
    run_by_size = PartitionKnob(ADVISORY_SIZE, 64 * MIB, 2, GIB, False)
    assert "64m" not in [c[ADVISORY_SIZE] for c in candidate_settings(run_by_size, 8)]
    assert byte_text(3 * MIB) == "3m" and byte_text(3 * 1024) == "3k"
    assert settings_label({}) == "as run"
    assert settings_label({ADVISORY_SIZE: "16m", PARALLELISM_FIRST: "false"}) == "advisory 16m"


def _point(vm: str, cost: float, seconds: float, meets: bool) -> Point:
    machine = catalog(row(vm, 4, 16, 0.2))[0]
    layout = layouts_for(machine)[0]
    base = target_config(SyntheticAnalysis(_profile()).baseline, machine, layout, 1, 1.0)
    p = Point(machine, 1, layout, base, 0.0)
    p.evaluated, p.cost, p.predicted_s, p.meets_deadline = True, cost, seconds, meets
    return p


def _profile():  # type: ignore[no-untyped-def]
    task = TaskSpec(run_ms=2_000, cpu_ms=2_000)
    return build_synthetic([[StageSpec(0, [task] * 8)]], 2)


def test_points_to_tune_are_those_that_can_change_the_answer() -> None:
    # Cost falls as time grows along the front; a deadline of 100 s.
    meeting = [_point(f"ok{i}", 1.0 + i, 90.0 - i, True) for i in range(6)]
    slow = [_point(f"slow{i}", 0.5 - 0.1 * i, 110.0 + 10 * i, False) for i in range(4)]
    dominated = _point("dominated", 5.0, 200.0, False)
    chosen = points_to_tune([*meeting, *slow, dominated], Request(deadline_s=100.0, top=3))
    names = [p.machine.vm_type for p in chosen]
    # The cheapest meeting the deadline first, then the cheaper front points that missed
    # it, nearest the deadline first, then the next cheapest meeting it.
    assert names[:7] == ["ok0", "slow0", "slow1", "slow2", "slow3", "ok1", "ok2"]
    assert "dominated" not in names
    assert len(chosen) <= MAX_TUNED_POINTS


def test_a_log_no_setting_controls_is_searched_as_run_and_says_so() -> None:
    analysis = SyntheticAnalysis(_profile(), BaselineOverrides(host_cores=2))
    machines = catalog(row("small", 2, 8, 0.10), row("big", 8, 32, 0.40))
    answer = search(analysis, machines, Request(max_nodes=2, deadline_s=600.0))
    assert answer.tuning is not None and answer.tuning.knob is None
    assert all(not p.settings for p in answer.points)
    assert any("Spark settings not tuned" in n for n in answer.notes)
    assert "spark.sql.shuffle.partitions" not in answer.recommended.spark_conf()
    assert answer.as_run(answer.recommended) is None
    assert not math.isnan(answer.recommended.cost)


def test_spark_settings_are_refused_for_another_frameworks_profile() -> None:
    profile = _profile()
    profile.framework = "dask"
    analysis = analyse_profile(profile)
    assert analysis.partition_knob() is None
    with pytest.raises(ConfigError, match="do not apply to a dask profile"):
        analysis.predict_settings({SHUFFLE_PARTITIONS: "4"})
    with pytest.raises(ConfigError, match="do not apply to a dask profile"):
        analysis.predict(parse_change(f"{SHUFFLE_PARTITIONS}=4", CONF))
    # Its resources are still predicted.
    assert analysis.predict(parse_change("cores=2x")).predicted_s > 0


def test_the_text_renderer_reads_the_labels_without_the_analysis_stack() -> None:
    # `runs list` and the other text renderings load no log: rendering a recommendation's
    # settings must not import the facade.
    code = (
        "import sys, perfmodel.report.text\n"
        "print(' '.join(m for m in sys.modules if m.startswith('perfmodel.analysis')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
