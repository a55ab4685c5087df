"""Intervals that say when they extrapolate: the calibration keeps the range of scale factors
its pairs spanned, and a prediction whose change goes beyond it gets a wider interval that
says why (`perfmodel.simulate.intervals.extrapolation`)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from perfmodel.experiment.calibrate import calibrate, residuals_of
from perfmodel.experiment.results import PairResult
from perfmodel.experiment.split import load_split
from perfmodel.runs.rows import RunOutcome
from perfmodel.runs.store import RunStore
from perfmodel.simulate import intervals as iv
from perfmodel.simulate.allocation_settings import AllocationSettings
from perfmodel.simulate.config import ClusterConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd"
MB = 1 << 20

BASE = ClusterConfig(
    executors=2,
    executor_cores=1,
    memory_bytes=512 * MB,
    hosts=2,
    host_cores=1,
    host_cores_assumed=False,
    net_bw=12.5e6,
)


def _residual(workload: str, input_kind: str, scale: dict[str, float]) -> iv.Residual:
    return iv.Residual(workload, "jvm-sql", input_kind, 0.05, 0.0, scale)


def _model(ranges: dict[str, tuple[float, float]], input_kind: str = iv.BUNDLE) -> iv.IntervalModel:
    q = iv.Quantiles(-0.1, 0.1, 20, 5)
    return iv.IntervalModel(
        quantiles={input_kind: {iv.POOLED: q}},
        scale_range={input_kind: {d: iv.ScaleRange(lo, hi) for d, (lo, hi) in ranges.items()}},
    )


def test_scale_factors_of_hand_built_configurations() -> None:
    target = replace(BASE, executors=8, hosts=8, memory_bytes=2048 * MB, net_bw=125e6)
    got = iv.scale_factors(BASE, target)
    assert got[iv.SLOTS] == 4.0 and got[iv.EXECUTORS] == 4.0
    assert got[iv.MEMORY] == 4.0 and got[iv.NETWORK] == pytest.approx(10.0)
    assert got[iv.DISK] == 1.0 and got[iv.CPU_SPEED] == 1.0
    # Bounded dynamic allocation reaches maxExecutors' slots, whatever the static count.
    dynamic = replace(BASE, allocation=AllocationSettings(enabled=True, max_executors=8))
    assert iv.scale_factors(BASE, dynamic)[iv.SLOTS] == 4.0
    assert iv.scale_factors(dynamic, BASE)[iv.EXECUTORS] == 0.25
    # Unbounded dynamic allocation: the configuration's own executors.
    unbounded = replace(BASE, allocation=AllocationSettings(enabled=True))
    assert iv.scale_factors(BASE, unbounded)[iv.SLOTS] == 1.0


def test_calibration_records_the_range_per_input_with_unvaried_dimensions_at_one() -> None:
    residuals = [
        _residual("a", iv.BUNDLE, {iv.SLOTS: 2.0, iv.MEMORY: 1.0}),
        _residual("a", iv.BUNDLE, {iv.SLOTS: 0.5, iv.MEMORY: 4.0}),
        _residual("b", iv.BUNDLE, {iv.SLOTS: 1.5, iv.MEMORY: 0.25}),
        _residual("b", iv.BARE_LOG, {iv.SLOTS: 3.0}),
        _residual("b", iv.BARE_LOG, {}),  # a pair without its scale: adds nothing
    ]
    model = iv.fit_intervals(residuals)
    bundle = model.scale_range[iv.BUNDLE]
    assert bundle[iv.SLOTS] == iv.ScaleRange(0.5, 2.0)
    assert bundle[iv.MEMORY] == iv.ScaleRange(0.25, 4.0)
    assert bundle[iv.NETWORK] == iv.ScaleRange(1.0, 1.0)  # never varied
    assert set(bundle) == set(iv.SCALE_DIMENSIONS)
    assert model.scale_range[iv.BARE_LOG][iv.SLOTS] == iv.ScaleRange(1.0, 3.0)  # ×1 inside
    # No residual with a scale: no range at all (as in files written before it was kept).
    assert iv.fit_intervals([_residual("a", iv.BUNDLE, {})]).scale_range == {}


def test_the_range_survives_the_file_and_old_files_have_none(tmp_path: Path) -> None:
    model = iv.fit_intervals([_residual("a", iv.BUNDLE, {iv.SLOTS: 2.0})])
    path = tmp_path / "intervals.json"
    path.write_text(json.dumps(model.as_dict()))
    assert iv.load_intervals(path).scale_range == model.scale_range
    old = model.as_dict()
    del old["scale_range"]
    path.write_text(json.dumps(old))
    loaded = iv.load_intervals(path)
    assert loaded.scale_range == {}
    assert iv.extrapolation(loaded, iv.BUNDLE, {iv.SLOTS: 100.0}, 10.0, 100.0) is None
    # The shipped file predates the range: it keeps working, without extrapolation widening.
    assert iv.load_intervals().quantiles
    broken = model.as_dict()
    broken["scale_range"][iv.BUNDLE][iv.SLOTS] = {"low": 2.0, "high": 4.0}  # ×1 outside
    path.write_text(json.dumps(broken))
    with pytest.raises(iv.CalibrationError, match="task slots"):
        iv.load_intervals(path)


def test_no_widening_inside_the_calibrated_range() -> None:
    model = _model({iv.SLOTS: (0.5, 2.0), iv.MEMORY: (0.25, 4.0)})
    assert iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 2.0, iv.MEMORY: 0.25}, 50.0, 100.0) is None
    assert iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 1.0}, 50.0, 100.0) is None
    # A dimension the file has no range for (written with fewer dimensions): not judged.
    assert iv.extrapolation(model, iv.BUNDLE, {iv.NETWORK: 10.0}, 50.0, 100.0) is None
    # Another input's range does not apply.
    assert iv.extrapolation(model, iv.BARE_LOG, {iv.SLOTS: 8.0}, 50.0, 100.0) is None


def test_beyond_the_range_the_share_beyond_of_the_predicted_change_widens_both_sides() -> None:
    model = _model({iv.SLOTS: (0.5, 2.0), iv.NETWORK: (1.0, 1.0)})
    # ×8 slots against ×2 calibrated: log 8 − log 2 of log 8 is beyond, two thirds.
    up = iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 8.0}, 40.0, 100.0)
    assert up is not None and up.dimension == iv.SLOTS
    assert up.share == pytest.approx(2 / 3)
    assert up.widening == pytest.approx(2 / 3 * math.log(100 / 40))
    # Downwards the same: ×1/8 against ×0.5.
    down = iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 0.125}, 250.0, 100.0)
    assert down is not None and down.share == pytest.approx(2 / 3)
    # The further beyond, the wider (with the same predicted change).
    shares = [
        e.share
        for r in (3.0, 4.0, 16.0, 256.0)
        if (e := iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: r}, 40.0, 100.0)) is not None
    ]
    assert shares == sorted(shares) and len(shares) == 4 and shares[-1] < 1.0
    # A dimension never varied in calibration: all of its change is beyond; it is the one
    # named when it goes further beyond (as a share) than the others.
    net = iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 4.0, iv.NETWORK: 10.0}, 80.0, 100.0)
    assert net is not None and net.dimension == iv.NETWORK and net.share == 1.0
    assert net.widening == pytest.approx(math.log(100 / 80))
    # A model that predicts no change has nothing beyond to be unsure of.
    same = iv.extrapolation(model, iv.BUNDLE, {iv.NETWORK: 10.0}, 100.0, 100.0)
    assert same is not None and same.widening == 0.0


def test_the_interval_is_widened_and_says_it_extrapolates() -> None:
    model = _model({iv.SLOTS: (0.5, 2.0)})
    plain_low, plain_high, plain = iv.interval(model, iv.BUNDLE, "jvm-sql", 40.0, 0.0)
    beyond = iv.extrapolation(model, iv.BUNDLE, {iv.SLOTS: 8.0}, 40.0, 100.0)
    low, high, source = iv.interval(model, iv.BUNDLE, "jvm-sql", 40.0, 0.0, beyond)
    assert beyond is not None
    factor = math.exp(beyond.widening)
    assert low == pytest.approx(plain_low / factor) and high == pytest.approx(plain_high * factor)
    assert "extrapolated" not in plain
    assert source.endswith(
        f"; extrapolated: task slots ×8, beyond the ×0.5–×2 the intervals were calibrated on, "
        f"so widened ×{factor:.2f} (the 67% of the change beyond that range may have all of "
        "its predicted effect or none)"
    )
    never = iv.extrapolation(
        _model({iv.NETWORK: (1.0, 1.0)}), iv.BUNDLE, {iv.NETWORK: 10.0}, 80.0, 100.0
    )
    assert never is not None
    assert never.describe().startswith(
        "network bandwidth ×10, a change the intervals' calibration never saw, so widened ×1.25 "
        "(the change may have"
    )
    got = beyond.as_dict()
    assert got["dimension"] == iv.SLOTS and got["ratio"] == 8.0
    assert (got["calibrated_low"], got["calibrated_high"]) == (0.5, 2.0)
    assert got["widening"] == pytest.approx(factor)


def _pair(scale: dict[str, float], bare_scale: dict[str, float]) -> PairResult:
    return PairResult(
        experiment="e",
        workload="sort",
        baseline_run=1,
        baseline_config="a",
        target_config="b",
        target_runs=[2],
        measured_s=10.0,
        measured_sd_s=0.0,
        measured_wall_s=10.0,
        predicted_s=9.0,
        error=0.1,
        slot_only_s=10.0,
        slot_only_error=0.0,
        bottleneck="cpu",
        baseline_observed_s=10.0,
        baseline_model_error=0.0,
        bare_log_s=11.0,
        scale=scale,
        bare_log_scale=bare_scale,
    )


def test_residuals_carry_each_inputs_scale() -> None:
    got = residuals_of([_pair({iv.SLOTS: 2.0}, {iv.SLOTS: 2.0, iv.MEMORY: 4.0})])
    assert [dict(r.scale) for r in got] == [{iv.SLOTS: 2.0}, {iv.SLOTS: 2.0, iv.MEMORY: 4.0}]


def _store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "runs.sqlite")
    exp = store.add_experiment("udf-etl", "udf-etl", "spec.toml", "", {})
    for cores, measured in ((2, 66.0), (1, 80.0)):
        settings = {"master": f"local[{cores}]"}
        cfg = store.add_config(exp, f"local[{cores}]", f"local[{cores}]", cores, None, settings)
        run = store.start_run(exp, cfg, "udf-etl", 0, False, ["spark-submit"], str(EXAMPLE))
        store.finish_run(run, RunOutcome(status="ok", wall_s=measured, app_s=measured))
    return store


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the example event log is not in the checkout")
def test_calibrate_keeps_the_range_of_its_pairs_and_predict_json_shows_extrapolation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both "runs" of the store are one real local[2] log, so its pairs are local[2] →
    local[1] (×0.5 slots) and local[2] → local[2] (×1): the range of task slots is ×0.5–×1.
    `predict --json` on that log then widens a ×4 change of slots (all of it beyond the
    range), names it in `interval_source`, and shows it in `interval_extrapolation`."""
    from typer.testing import CliRunner

    from perfmodel.analysis import facade
    from perfmodel.cli import build_app

    split_file = tmp_path / "split.toml"
    split_file.write_text('[fit]\nworkloads = ["udf-etl"]\n[held_out]\nworkloads = ["tpch"]\n')
    with _store(tmp_path) as store:
        model = calibrate(store, load_split(split_file), variants=True)
    assert model.scale_range[iv.BUNDLE][iv.SLOTS] == iv.ScaleRange(0.5, 1.0)
    assert model.scale_range[iv.BUNDLE][iv.NETWORK] == iv.ScaleRange(1.0, 1.0)
    # The store's "bundles" are a bare log, which `predict` reads with the bare-log
    # calibration: give it the same range.
    model.scale_range[iv.BARE_LOG] = model.scale_range[iv.BUNDLE]

    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(facade, "shipped_intervals", lambda framework="spark": model)
    runner, app = CliRunner(), build_app("predict")

    def predict(*args: str) -> dict[str, object]:
        result = runner.invoke(app, ["predict", str(EXAMPLE), *args, "--json"])
        assert result.exit_code == 0, result.output
        data: dict[str, object] = json.loads(result.output)
        return data

    inside = predict("--cores", "1")  # ×0.5: calibrated
    assert inside["interval_extrapolation"] is None
    assert "extrapolated" not in str(inside["interval_source"])
    beyond = predict("--cores", "8")
    extra = beyond["interval_extrapolation"]
    assert isinstance(extra, dict)
    assert extra["dimension"] == iv.SLOTS and extra["ratio"] == pytest.approx(4.0)
    assert extra["share_beyond"] == pytest.approx(1.0)
    assert "extrapolated: task slots" in str(beyond["interval_source"])
    assert extra["widening"] > 1.0
    # An old calibration file (no range): the same prediction, not widened, and not said.
    monkeypatch.setattr(
        facade, "shipped_intervals", lambda framework="spark": replace(model, scale_range={})
    )
    old = predict("--cores", "8")
    assert old["interval_extrapolation"] is None
    assert float(str(old["predicted_high_s"])) < float(str(beyond["predicted_high_s"]))


def test_pairs_from_cluster_runs_are_calibrated_apart_from_local_ones() -> None:
    local = _pair({iv.SLOTS: 2.0}, {iv.SLOTS: 2.0})
    cluster = replace(local, workload="wordcount", cluster=True, scale={iv.EXECUTORS: 4.0})
    cluster.bare_log_scale = {iv.EXECUTORS: 4.0}
    got = residuals_of([local, cluster])
    assert [r.input for r in got] == [
        iv.BUNDLE,
        iv.BARE_LOG,
        iv.cluster_kind(iv.BUNDLE),
        iv.cluster_kind(iv.BARE_LOG),
    ]
    model = iv.fit_intervals(got)
    assert set(model.quantiles) == {*iv.INPUTS, *(iv.cluster_kind(i) for i in iv.INPUTS)}
    # Each calibration keeps the range its own pairs spanned.
    assert model.scale_range[iv.BUNDLE][iv.EXECUTORS] == iv.ScaleRange(1.0, 1.0)
    assert model.scale_range[iv.cluster_kind(iv.BUNDLE)][iv.EXECUTORS] == iv.ScaleRange(1.0, 4.0)
    executors = {iv.EXECUTORS: 4.0, iv.SLOTS: 1.0}
    assert model.kind_for(iv.BARE_LOG, True, executors) == iv.cluster_kind(iv.BARE_LOG)
    assert model.kind_for(iv.BARE_LOG, False, executors) == iv.BARE_LOG
    # A change the cluster pairs never made (a link), or no change: the input's own.
    assert model.kind_for(iv.BARE_LOG, True, {iv.NETWORK: 10.0}) == iv.BARE_LOG
    assert model.kind_for(iv.BARE_LOG, True, {**executors, iv.NETWORK: 10.0}) == iv.BARE_LOG
    assert model.kind_for(iv.BARE_LOG, True, {iv.EXECUTORS: 1.0}) == iv.BARE_LOG
    # A file without a cluster calibration: cluster runs use the local one.
    old = replace(model, quantiles={i: model.quantiles[i] for i in iv.INPUTS})
    assert old.kind_for(iv.BARE_LOG, True, executors) == iv.BARE_LOG


def test_a_cluster_log_is_predicted_with_the_cluster_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real YARN log (executors on other hosts than the driver's) takes the cluster
    calibration's band for a change of executors, and the local band for a change the
    cluster pairs never made (memory); the local example log takes the local one; with no
    cluster calibration in the file the YARN log takes the local band, as before."""
    from typer.testing import CliRunner

    from perfmodel.analysis import facade
    from perfmodel.cli import build_app
    from tests.conftest import SHARED_EVENTLOGS

    yarn = SHARED_EVENTLOGS / "application_1628109047826_1317105"
    if not yarn.exists() or not EXAMPLE.exists():
        pytest.skip(f"{yarn} or {EXAMPLE} not found (../shared is absent)")
    narrow, wide = iv.Quantiles(-0.05, 0.05, 20, 5), iv.Quantiles(-0.5, 0.5, 20, 5)
    model = iv.IntervalModel(
        quantiles={
            iv.BARE_LOG: {iv.POOLED: narrow},
            iv.cluster_kind(iv.BARE_LOG): {iv.POOLED: wide},
        },
        scale_range={
            iv.cluster_kind(iv.BARE_LOG): {
                iv.EXECUTORS: iv.ScaleRange(0.25, 4.0),
                iv.SLOTS: iv.ScaleRange(0.25, 4.0),
            }
        },
    )
    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    runner, app = CliRunner(), build_app("predict")

    def source(log: Path, chosen: iv.IntervalModel, *change: str) -> str:
        monkeypatch.setattr(facade, "shipped_intervals", lambda framework="spark": chosen)
        result = runner.invoke(app, ["predict", str(log), *change, "--json"])
        assert result.exit_code == 0, result.output
        return str(json.loads(result.output)["interval_source"])

    more = ("--executors", "8")
    assert "20 cluster bare-log pairs" in source(yarn, model, *more)
    assert "20 bare-log pairs" in source(yarn, model, "--mem", "4g")
    assert "cluster" not in source(yarn, model, "--mem", "4g")
    assert "cluster" not in source(EXAMPLE, model, "--cores", "4")
    local_only = replace(model, quantiles={iv.BARE_LOG: {iv.POOLED: narrow}})
    assert "20 bare-log pairs" in source(yarn, local_only, *more)


def test_the_mixture_weighs_each_workload_alike_whatever_its_pairs() -> None:
    """Known answers. A workload of 90 residuals at 0.0 and one of 10 at 1.0 weigh alike,
    so half the mixture is 1.0 and its 90th percentile is 1.0 (pooled by pairs it would be
    0.0: the big workload's pairs would drown the other). Among 20 workloads, one whose
    every residual is 5.0 is a twentieth of the mixture, under its 10% tail: the mixture's
    top stays 0.0 where the envelope's is that workload's 5.0."""
    quiet = [iv.Residual("quiet", "dask", iv.BUNDLE, 0.0, 0.0) for _ in range(90)]
    loud = [iv.Residual("loud", "dask", iv.BUNDLE, 1.0, 0.0) for _ in range(10)]
    mixture = iv.fit_intervals(quiet + loud, across=iv.MIXTURE).quantiles[iv.BUNDLE]["all"]
    assert (mixture.low, mixture.high, mixture.pairs, mixture.workloads) == (0.0, 1.0, 100, 2)
    many = [iv.Residual(f"w{i}", "dask", iv.BUNDLE, 0.0, 0.0) for i in range(19) for _ in range(4)]
    odd = [iv.Residual("odd", "dask", iv.BUNDLE, 5.0, 0.0) for _ in range(4)]
    by_mixture = iv.fit_intervals(many + odd, across=iv.MIXTURE).quantiles[iv.BUNDLE]
    assert by_mixture["all"].high == 0.0 and by_mixture["dask"].workloads == 20
    assert iv.fit_intervals(many + odd).quantiles[iv.BUNDLE]["all"].high == 5.0
    with pytest.raises(iv.CalibrationError, match="across"):
        iv.fit_intervals(quiet, across="median")


def test_each_front_end_reads_its_own_shipped_calibration() -> None:
    """Spark's file is fitted on Spark's studies only and Dask's on Dask's
    (experiments/dask/calibrate.py); a front end with no file is uncalibrated."""
    spark, dask = iv.load_intervals(), iv.load_intervals(framework="dask")
    assert "cluster bundle" in spark.quantiles and "cluster bundle" not in dask.quantiles
    assert not set(spark.fitted_on) & set(dask.fitted_on)
    assert dask.quantiles[iv.BUNDLE]["dask"].workloads >= 3
    assert dask.scale_range[iv.BUNDLE][iv.EXECUTORS] == iv.ScaleRange(0.5, 2.0)
    assert iv.load_intervals(framework="flink").quantiles == {}


def test_a_dask_prediction_is_calibrated_on_dask_pairs(tmp_path: Path) -> None:
    """A Dask run's prediction names the Dask calibration (its one class, ``dask``), not
    Spark's cluster pairs, though its workers are processes apart from the client."""
    import perfmodel
    from perfmodel.simulate.config import WhatIf
    from tests.unit.dask_streams import two_stage

    analysis = perfmodel.load(two_stage().bundle(tmp_path / "b"))
    assert analysis.workload_class == "dask"
    prediction = analysis.predict(WhatIf(executor_cores=1))
    pairs = iv.load_intervals(framework="dask").quantiles[iv.BUNDLE]["dask"].pairs
    assert f"calibrated on {pairs} dask bundle pairs" in prediction.interval_source
    assert prediction.predicted_low_s < prediction.predicted_s < prediction.predicted_high_s
