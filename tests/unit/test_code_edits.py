"""A code edit's what-if (``stage.ID.partitions=N``): a stage whose task count the code sets
(``repartition(n)``, ``coalesce(n)``, an RDD operation's ``numPartitions``) re-split as that
count would split it, on real Spark logs (tests/data/settings/plans.zstd, made by
tests/data/settings/make_logs.py); any other stage refused, naming what sets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import perfmodel
from perfmodel.analysis import Analysis
from perfmodel.errors import PerfmodelError
from perfmodel.spark.settings import SettingError, parse_value, stage_key, stage_of_key
from tests.cli_runner import invoke_cli

PLANS = Path(__file__).resolve().parents[1] / "data" / "settings" / "plans.zstd"


@pytest.fixture(scope="module")
def plans() -> Analysis:
    return perfmodel.load(PLANS)


def _moved(analysis: Analysis, settings: dict[str, str]) -> dict[int, tuple[int, int, str]]:
    conf = analysis.predict_settings(settings).conf
    assert conf is not None
    return {s.stage_id: (s.tasks_before, s.tasks_after, s.knob) for s in conf.stages}


def test_the_stages_of_the_log_are_set_as_the_tests_expect(plans: Analysis) -> None:
    """The stages below, read from the plan (tests/e2e/test_settings_partitions.py checks
    the reading itself)."""
    stages = {k[0]: p for k, p in plans.partitioning.stages.items()}
    assert stages[5].control == "code" and stages[5].code.startswith("repartition(5)")
    assert stages[9].control == "code" and stages[9].code.startswith("coalesce(3)")
    assert stages[41].control == "code" and "numPartitions=3" in stages[41].code
    assert stages[2].control == "shuffle-partitions"
    assert stages[11].control == "single"


def test_a_repartition_is_re_split_and_its_map_side_rewritten(plans: Analysis) -> None:
    """repartition(5) → 20: the stage runs 20 tasks, and the round-robin exchange's map
    stage writes 20 partitions."""
    moved = _moved(plans, {"stage.5.partitions": "20"})
    assert moved == {5: (5, 20, "stage.5.partitions")}
    prediction = plans.predict_settings({"stage.5.partitions": "20"})
    assert prediction.conf is not None and prediction.conf.map_stages >= 1
    assert prediction.predicted_low_s <= prediction.predicted_s <= prediction.predicted_high_s


def test_an_rdd_operation_s_count_and_a_lower_coalesce(plans: Analysis) -> None:
    assert _moved(plans, {"stage.41.partitions": "12"}) == {41: (3, 12, "stage.41.partitions")}
    assert _moved(plans, {"stage.9.partitions": "2"}) == {9: (3, 2, "stage.9.partitions")}
    # The count the stage ran changes nothing.
    assert _moved(plans, {"stage.5.partitions": "5"}) == {}


def test_a_code_edit_and_a_setting_together(plans: Analysis) -> None:
    moved = _moved(plans, {"stage.5.partitions": "20", "spark.sql.shuffle.partitions": "16"})
    assert moved[5] == (5, 20, "stage.5.partitions")
    assert any(knob == "spark.sql.shuffle.partitions" for _, _, knob in moved.values())


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"stage.2.partitions": "4"}, "follows spark.sql.shuffle.partitions"),
        ({"stage.11.partitions": "4"}, "runs one partition whatever the counts"),
        ({"stage.9.partitions": "50"}, "can only merge its input's partitions"),
        ({"stage.99.partitions": "4"}, "this log has no stage 99"),
    ],
)
def test_a_stage_the_code_does_not_set_is_refused_by_what_sets_it(
    plans: Analysis, settings: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingError, match=message):
        plans.predict_settings(settings)


@given(st.integers(-(10**7), 10**7), st.integers(0, 10**6))
def test_a_stage_key_is_a_count_in_range_or_refused_by_name(count: int, stage_id: int) -> None:
    key = stage_key(stage_id)
    assert stage_of_key(key) == stage_id
    if 1 <= count <= 100_000:
        assert parse_value(key, str(count)) == count
    else:
        with pytest.raises(SettingError, match=rf"^{key}="):
            parse_value(key, str(count))


@given(st.text(max_size=30), st.text(max_size=12))
def test_any_stage_key_text_is_parsed_or_refused_cleanly(suffix: str, value: str) -> None:
    try:
        parse_value("stage." + suffix, value)
    except PerfmodelError as exc:
        assert "stage." in str(exc)


def test_predict_and_sweep_take_the_key_from_the_cli(tmp_path: Path) -> None:
    state = {"PERFMODEL_STATE_DIR": str(tmp_path / "state")}
    res = invoke_cli(
        ["predict", str(PLANS), "--conf", "stage.5.partitions=20", "--json"], env=state
    )
    assert res.exit_code == 0, res.output
    stages = json.loads(res.stdout)["conf"]["stages"]
    assert [(s["stage_id"], s["tasks_after"]) for s in stages] == [(5, 20)]
    res = invoke_cli(
        ["predict", str(PLANS), "--sweep", "stage.5.partitions=5,20,80", "--json"], env=state
    )
    assert res.exit_code == 0, res.output
    res = invoke_cli(["predict", str(PLANS), "--conf", "stage.2.partitions=4"], env=state)
    assert res.exit_code == 2
    assert res.output.startswith("error: stage.2.partitions: ") and "Traceback" not in res.output


def test_the_study_reports_every_pair_beside_no_change() -> None:
    """experiments/settings/code/study.py's table, on hand-worked pairs: errors, no change,
    the pairs of a ≥ 15% effect and the interval's coverage."""
    from tests.conftest import REPO, load_script

    study = load_script("code_study", REPO / "experiments" / "settings" / "code" / "study.py")
    pairs = [
        study.Pair(1, 8, [2, 4], 40.0, 50.0, 44.0, 36.0, 52.0),  # 10% off, no change 25%
        study.Pair(8, 1, [2, 4], 50.0, 40.0, 45.0, 38.0, 48.0),  # 10% off, outside
        study.Pair(8, 3, [2, 4], 42.0, 40.0, 42.0, 40.0, 44.0),  # exact, no change 4.8%
    ]
    assert [round(p.error, 3) for p in pairs] == [0.1, 0.1, 0.0]
    assert [p.inside for p in pairs] == [True, False, True]
    summary = study.report(pairs).splitlines()[2]
    assert summary == "| 3 | 6.7% | 16.6% | 2 | 10.0% | 22.5% | 66.7% |"
