"""Prediction intervals: quantile fitting on hand-made residuals, widening, the shipped file's
round trip, coverage, and calibration on a synthetic store that reads only fit workloads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from perfmodel.experiment.calibrate import calibrate, residuals_of
from perfmodel.experiment.results import PairResult, interval_coverage
from perfmodel.experiment.split import load_split
from perfmodel.runs.rows import RunOutcome
from perfmodel.runs.store import RunStore
from perfmodel.simulate.intervals import (
    BARE_LOG,
    BUNDLE,
    DEFAULT_HALF_WIDTH,
    MIN_PAIRS,
    MIN_WORKLOADS,
    CalibrationError,
    IntervalModel,
    Residual,
    fit_intervals,
    interval,
    load_intervals,
    residual_core,
    widening,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd"


def _residuals(
    cls: str, values: list[float], input_kind: str = BUNDLE, workloads: int = 3
) -> list[Residual]:
    """Residuals spread round-robin over ``workloads`` workloads named w0, w1, ..."""
    return [Residual(f"w{i % workloads}", cls, input_kind, v, 0.0) for i, v in enumerate(values)]


def test_quantiles_of_known_residuals() -> None:
    model = fit_intervals(_residuals("python-rdd", [i / 10 for i in range(11)], workloads=1))
    q = model.quantiles[BUNDLE]["python-rdd"]
    assert (q.low, q.high, q.pairs) == (pytest.approx(0.1), pytest.approx(0.9), 11)
    assert model.quantiles[BUNDLE]["all"].pairs == 11


def test_the_interval_is_the_envelope_of_each_workloads_own_band() -> None:
    # Two workloads whose errors differ in sign: pooled, their pairs would give a band
    # narrower than either workload needs; the envelope holds 80% of each.
    low = [Residual("low", "jvm-sql", BUNDLE, -0.3 + i / 100, 0.0) for i in range(11)]
    high = [Residual("high", "jvm-sql", BUNDLE, 0.2 + i / 100, 0.0) for i in range(11)]
    q = fit_intervals(low + high).quantiles[BUNDLE]["jvm-sql"]
    assert q.low == pytest.approx(-0.29) and q.high == pytest.approx(0.29)
    assert (q.pairs, q.workloads) == (22, 2)
    for w in (low, high):
        inside = [r for r in w if q.low <= r.log_ratio <= q.high]
        assert len(inside) >= 0.8 * len(w)


def test_a_class_with_few_pairs_or_workloads_uses_the_pooled_quantiles() -> None:
    many = _residuals("jvm-sql", [-0.2, -0.1, 0.0, 0.1, 0.2, 0.3])
    few = _residuals("python-udf", [1.0] * (MIN_PAIRS - 1))
    one_workload = _residuals("python-rdd", [0.5] * MIN_PAIRS, workloads=MIN_WORKLOADS - 1)
    model = fit_intervals(many + few + one_workload)
    pooled = len(many) + len(few) + len(one_workload)
    for cls in ("python-udf", "python-rdd"):
        q, phrase = model.for_class(BUNDLE, cls)
        assert q.pairs == pooled and "all classes" in phrase
    q, phrase = model.for_class(BUNDLE, "jvm-sql")
    assert q.pairs == len(many) and "jvm-sql" in phrase


def test_uncalibrated_interval_says_so() -> None:
    low, high, source = interval(IntervalModel(), BARE_LOG, "jvm-sql", 100.0, 0.0)
    assert low == pytest.approx(100 * math.exp(-DEFAULT_HALF_WIDTH))
    assert high == pytest.approx(100 * math.exp(DEFAULT_HALF_WIDTH))
    assert "uncalibrated" in source


def test_widening_adds_self_check_and_the_unknown_share_of_the_change() -> None:
    assert widening(0.0, 0.5, 100.0, 100.0) == 0.0
    assert widening(0.1, 0.0, 50.0, 100.0) == pytest.approx(math.log(1.1))
    assert widening(0.0, 0.5, 50.0, 100.0) == pytest.approx(0.5 * math.log(2))
    low, high, _ = interval(IntervalModel(), BUNDLE, "x", 100.0, 0.1)
    assert high / 100 == pytest.approx(math.exp(DEFAULT_HALF_WIDTH + 0.1))
    assert low < 100 < high


def test_residual_core_takes_the_widening_out_without_crossing_zero() -> None:
    assert residual_core(0.3, 0.1) == pytest.approx(0.2)
    assert residual_core(-0.3, 0.1) == pytest.approx(-0.2)
    assert residual_core(0.05, 0.1) == 0.0


def test_calibration_file_round_trip_and_errors(tmp_path: Path) -> None:
    model = fit_intervals(_residuals("python-rdd", [0.0, 0.1, -0.1, 0.2, -0.2]), source="test")
    path = tmp_path / "intervals.json"
    path.write_text(json.dumps(model.as_dict()))
    again = load_intervals(path)
    assert again.quantiles == model.quantiles and again.source == "test"
    path.write_text("{not json")
    with pytest.raises(CalibrationError):
        load_intervals(path)
    path.write_text(json.dumps({"quantiles": {"bundle": {"x": {"low": 0}}}}))
    with pytest.raises(CalibrationError):
        load_intervals(path)
    with pytest.raises(CalibrationError):
        fit_intervals([])


def _pair(measured: float, predicted: float, **extra: object) -> PairResult:
    fields: dict[str, object] = {
        "experiment": "e",
        "workload": "udf-etl",
        "baseline_run": 1,
        "baseline_config": "local[2]",
        "target_config": "local[1]",
        "target_runs": [2],
        "measured_s": measured,
        "measured_sd_s": 0.0,
        "measured_wall_s": measured,
        "predicted_s": predicted,
        "error": abs(predicted - measured) / measured,
        "slot_only_s": measured,
        "slot_only_error": 0.0,
        "bottleneck": "cpu",
        "baseline_observed_s": measured,
        "baseline_model_error": 0.0,
    }
    fields.update(extra)
    return PairResult(**fields)  # type: ignore[arg-type]


def test_residuals_of_pairs_hold_both_inputs() -> None:
    pair = _pair(100.0, 80.0, workload_class="python-udf", widening=0.05, bare_log_s=125.0)
    got = residuals_of([pair])
    assert [(r.input, r.workload_class) for r in got] == [
        (BUNDLE, "python-udf"),
        (BARE_LOG, "python-udf"),
    ]
    assert got[0].log_ratio == pytest.approx(math.log(100 / 80)) and got[0].widening == 0.05
    assert got[1].log_ratio == pytest.approx(math.log(100 / 125))


def test_coverage_counts_each_input_on_its_own() -> None:
    inside = _pair(100.0, 90.0, predicted_low_s=80.0, predicted_high_s=110.0)
    outside = _pair(100.0, 50.0, predicted_low_s=40.0, predicted_high_s=60.0)
    inside.bare_log_low_s, inside.bare_log_high_s = 120.0, 130.0
    assert interval_coverage([inside, outside]) == 0.5
    assert interval_coverage([inside, outside], bare_log=True) == 0.0


def _store_with_runs(tmp_path: Path) -> RunStore:
    """Runs of a fit workload and of a held-out one, both replaying the example log."""
    store = RunStore(tmp_path / "runs.sqlite")
    for workload, times in (("udf-etl", (66.0, 80.0)), ("tpch", (30.0, 40.0))):
        exp = store.add_experiment(workload, workload, "spec.toml", "", {})
        for cores, measured in zip((2, 1), times, strict=True):
            settings = {"master": f"local[{cores}]"}
            cfg = store.add_config(exp, f"local[{cores}]", f"local[{cores}]", cores, None, settings)
            run = store.start_run(exp, cfg, workload, 0, False, ["spark-submit"], str(EXAMPLE))
            store.finish_run(run, RunOutcome(status="ok", wall_s=measured, app_s=measured))
    return store


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the example event log is not in the checkout")
def test_calibrate_reads_only_fit_workloads(tmp_path: Path) -> None:
    split_file = tmp_path / "split.toml"
    split_file.write_text(
        'rule = "test"\n[fit]\nworkloads = ["udf-etl"]\n[held_out]\nworkloads = ["tpch"]\n'
    )
    with _store_with_runs(tmp_path) as store:
        model = calibrate(store, load_split(split_file), variants=False)
    assert model.fitted_on == ["udf-etl"]
    q = model.quantiles[BUNDLE]["python-udf"]
    assert q.pairs == 2


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the example event log is not in the checkout")
def test_calibrate_pools_the_pairs_of_several_stores(tmp_path: Path) -> None:
    split_file = tmp_path / "split.toml"
    split_file.write_text(
        'rule = "test"\n[fit]\nworkloads = ["udf-etl"]\n[held_out]\nworkloads = ["tpch"]\n'
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with _store_with_runs(tmp_path / "a") as one, _store_with_runs(tmp_path / "b") as two:
        pooled = calibrate([one, two], load_split(split_file), variants=False)
        single = calibrate(one, load_split(split_file), variants=False)
    # Pairs are made within each store, then pooled per workload.
    assert pooled.quantiles[BUNDLE]["python-udf"].pairs == 4
    assert pooled.quantiles[BUNDLE]["python-udf"].workloads == 1
    assert pooled.fitted_on == ["udf-etl"]
    assert "runs.sqlite, runs.sqlite" in pooled.source
    # The same runs twice: each residual twice. The 10% and 90% quantiles (interpolated) of
    # two residuals r0 ≤ r1 lie a tenth of the way in from each; of r0, r0, r1, r1 they are r0
    # and r1: the pooled band is the single one widened by an eighth of its width each side.
    one_band, two_band = (
        single.quantiles[BUNDLE]["python-udf"],
        pooled.quantiles[BUNDLE]["python-udf"],
    )
    width = one_band.high - one_band.low
    assert two_band.low == pytest.approx(one_band.low - width / 8, abs=1e-12)
    assert two_band.high == pytest.approx(one_band.high + width / 8, abs=1e-12)


def test_recommend_band_uses_the_predictions_interval() -> None:
    from perfmodel.recommend.uncertainty import prediction_band
    from perfmodel.simulate.replay import Prediction

    p = Prediction.__new__(Prediction)
    p.predicted_s, p.predicted_low_s, p.predicted_high_s = 100.0, 80.0, 130.0
    p.interval_source = "80% interval, test"
    band = prediction_band(0.0, prediction=p)
    assert band.upper(100.0) == pytest.approx(130.0) and band.lower(100.0) == pytest.approx(80.0)
    assert band.source == "80% interval, test"
    assert prediction_band(0.0, 0.5, prediction=p).relative == 0.5
    assert prediction_band(0.05).relative == 0.15  # no prediction: the default band


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the example event log is not in the checkout")
def test_cli_calibrate_writes_a_loadable_file_and_predict_shows_the_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer
    from typer.testing import CliRunner

    from perfmodel.cli import _ErrorBoundary
    from perfmodel.cli import experiment as experiment_cli
    from perfmodel.cli import predict as predict_cli

    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    app = typer.Typer(cls=_ErrorBoundary)

    @app.callback()
    def main() -> None:
        """perfmodel (test harness)."""

    experiment_cli.register(app)
    predict_cli.register(app)
    split_file = tmp_path / "split.toml"
    split_file.write_text('[fit]\nworkloads = ["udf-etl"]\n[held_out]\nworkloads = ["tpch"]\n')
    _store_with_runs(tmp_path).close()
    out = tmp_path / "intervals.json"
    args = ["experiment", "calibrate", "--store", str(tmp_path / "runs.sqlite")]
    args += ["--split", str(split_file), "--out", str(out), "--no-variants"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert load_intervals(out).fitted_on == ["udf-etl"]
    assert "calibrated scale factors (wider beyond them): " in result.output
    assert "task slots ×0.5–×1" in result.output
    assert load_intervals(out).scale_range["bundle"]["task slots"].low == 0.5
    result = CliRunner().invoke(app, ["predict", str(EXAMPLE), "--cores", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["predicted_low_s"] < data["predicted_s"] < data["predicted_high_s"]
    assert "80% interval" in data["interval_source"]
    text = CliRunner().invoke(app, ["predict", str(EXAMPLE), "--cores", "1"]).output
    assert "range " in text and "80% interval" in text
