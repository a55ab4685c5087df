"""The settings study's pairs: the --conf that takes one run's configuration to another's,
and the summary's errors."""

from __future__ import annotations

import math

import pytest

from perfmodel.experiment.settings_study import (
    EFFECT,
    NotASettingsPair,
    SettingsPair,
    median_run,
    repeat_errors,
    settings_diff,
    summarise,
)
from perfmodel.experiment.settings_study import SettingsReport as Report
from perfmodel.report.markdown import render_settings_study as render_markdown
from perfmodel.runs.rows import RunRow


def _config(**conf: str) -> dict[str, object]:
    partitions = conf.pop("partitions", None)
    return {
        "master": "local[2]",
        "driver_memory": "2g",
        "shuffle_partitions": int(partitions) if partitions else None,
        "conf": conf,
    }


AQE = "spark.sql.adaptive.enabled"


def test_the_diff_is_what_the_target_sets_differently() -> None:
    a = _config(partitions="8", **{AQE: "false", "spark.default.parallelism": "4"})
    b = _config(partitions="400", **{AQE: "true", "spark.default.parallelism": "4"})
    assert settings_diff(a, b, "4.0.0", 2) == {
        "spark.sql.shuffle.partitions": "400",
        AQE: "true",
    }
    assert settings_diff(a, a, "4.0.0", 2) == {}


def test_a_key_the_target_leaves_unset_takes_sparks_default() -> None:
    a = _config(**{AQE: "false", "spark.sql.autoBroadcastJoinThreshold": "-1"})
    b = _config()
    # AQE's default is on from Spark 3.2, off before; the threshold's is 10m.
    assert settings_diff(a, b, "3.5.0", 2) == {
        AQE: "true",
        "spark.sql.autoBroadcastJoinThreshold": "10m",
    }
    assert settings_diff(a, b, "3.1.0", 2) == {"spark.sql.autoBroadcastJoinThreshold": "10m"}
    # Unset parallelism is the target's cores.
    c = _config(**{"spark.default.parallelism": "32"})
    assert settings_diff(c, _config(), "4.0.0", 2) == {"spark.default.parallelism": "2"}


def test_pairs_a_settings_what_if_cannot_express_are_refused() -> None:
    a = _config(partitions="8")
    b = dict(_config(partitions="8"), driver_memory="512m")
    with pytest.raises(NotASettingsPair, match="driver_memory"):
        settings_diff(a, b, "4.0.0", 2)
    c = _config(**{"spark.sql.adaptive.coalescePartitions.minPartitionNum": "4"})
    with pytest.raises(NotASettingsPair, match="unset"):
        settings_diff(c, _config(), "4.0.0", 2)
    d = _config(**{"spark.serializer": "org.apache.spark.serializer.KryoSerializer"})
    with pytest.raises(NotASettingsPair, match="not predicted"):
        settings_diff(_config(), d, "4.0.0", 2)


def _pair(source: float, measured: float, predicted: float) -> SettingsPair:
    return SettingsPair(
        experiment="e",
        workload="w",
        source_run=1,
        source_config="a",
        target_config="b",
        target_runs=[2],
        settings={},
        source_s=source,
        measured_s=measured,
        predicted_s=predicted,
        low_s=predicted * 0.9,
        high_s=predicted * 1.1,
    )


def test_the_summary_splits_out_pairs_with_a_large_effect() -> None:
    small = _pair(100.0, 105.0, 100.0)  # 5% effect: noise
    large = _pair(100.0, 200.0, 180.0)  # 100% effect
    s = summarise("all", [small, large])
    assert s.pairs == 2 and s.effect_pairs == 1
    assert small.effect < EFFECT <= large.effect
    assert s.mean_error == pytest.approx((5 / 105 + 20 / 200) / 2)
    assert s.no_change_error == pytest.approx((5 / 105 + 100 / 200) / 2)
    assert s.effect_mean_error == pytest.approx(0.10)
    assert s.effect_no_change_error == pytest.approx(0.5)
    assert s.coverage == pytest.approx(0.5)  # 105 in [90, 110]; 200 not in [162, 198]
    assert math.isnan(summarise("none", []).mean_error)
    text = render_markdown(Report([small, large], [s], [s]))
    assert "**10.0%**" in text and "no-change error" in text


def _run(run_id: int, config: str, app_s: float, workload: str = "w") -> RunRow:
    return RunRow(
        run_id, "e", workload, config, {}, 2, None, 0, False, "ok", [], None, "h",
        0.0, 1.0, 0, app_s, app_s, None, None, None, None, None, None, None, None,
    )  # fmt: skip


def test_the_repeat_error_is_each_run_against_the_mean_of_its_repeats() -> None:
    """A configuration run three times gives three repeat errors; one run once gives none.
    The summary's repeat error covers its own workloads' repeats only."""
    runs = [_run(1, "a", 10.0), _run(2, "a", 12.0), _run(3, "a", 14.0)]
    reps = repeat_errors(runs)
    assert [r.run for r in reps] == [1, 2, 3] and reps[0].repeats == [2, 3]
    assert reps[0].error == pytest.approx(3 / 13) and reps[1].error == pytest.approx(0.0)
    assert repeat_errors([_run(4, "b", 10.0)]) == []
    other = repeat_errors([_run(5, "c", 10.0, "v"), _run(6, "c", 20.0, "v")])
    pair = _pair(100.0, 105.0, 100.0)  # workload "w"
    s = summarise("all", [pair], reps + other)
    assert s.repeat_runs == 3 and s.repeat_error == pytest.approx((3 / 13 + 0 + 3 / 11) / 3)
    assert math.isnan(summarise("all", [pair]).repeat_error)
    text = render_markdown(Report([pair], [s], [s], repeats=reps))
    assert "repeat error" in text and "16.8%" in text


def test_the_median_run_error_pairs_median_runs_with_median_runtimes() -> None:
    """A configuration run three times has a median run (the middle of its runs ordered by
    runtime, then by id); twice, none. Only pairs whose source is a median run and whose
    target has a median count, each against that median."""
    runs = [_run(1, "a", 14.0), _run(2, "a", 10.0), _run(3, "a", 12.0)]
    middle = median_run(runs)
    assert middle is not None and middle.id == 3
    tied = median_run([_run(4, "a", 10.0), _run(5, "a", 10.0), _run(6, "a", 11.0)])
    assert tied is not None and tied.id == 5
    assert median_run(runs[:2]) is None
    from_median = _pair(100.0, 105.0, 90.0)
    from_median.source_is_median, from_median.median_s = True, 120.0
    from_other = _pair(100.0, 200.0, 90.0)
    from_other.median_s = 120.0  # its source is not a median run
    to_few = _pair(100.0, 150.0, 90.0)
    to_few.source_is_median = True  # its target ran fewer than three times
    s = summarise("all", [from_median, from_other, to_few])
    assert s.median_pairs == 1
    assert s.median_error == pytest.approx(30 / 120)  # predicted 90
    assert s.median_no_change_error == pytest.approx(20 / 120)  # the source's 100
    assert "median_error" in from_median.as_dict() and "median_error" not in to_few.as_dict()
    assert math.isnan(summarise("none", [to_few]).median_error)
    text = render_markdown(Report([from_median], [s], [s]))
    assert "median-run error" in text and "25.0%" in text
