"""Spark settings through the one what-if grammar, end to end: the facade's `predict` with a
`Change` holding them, sweeps over them, fleet scenarios of them, and ``perfmodel predict
--conf`` on every form a log comes in (plain, compressed, rolling, in progress, bundle).

The logs are real (tests/data/settings: written by pyspark, see make_logs.py; tests/data/
eventlogs: a PySpark word count in each form; ../shared: public projects' logs).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

import perfmodel
from perfmodel.analysis import CONF, SettingNotPredictedError
from perfmodel.fleet.analyse import analyse_log
from perfmodel.fleet.discover import LogRef
from perfmodel.profile.bundle import BundleManifest
from perfmodel.simulate.config import ConfigError
from perfmodel.simulate.whatif import parse_change
from tests.cli_runner import invoke_cli
from tests.conftest import TEST_DATA, shared_eventlogs

SETTINGS = TEST_DATA / "settings"
EVENTLOGS = TEST_DATA / "eventlogs"
SHUFFLE = "spark.sql.shuffle.partitions"


@pytest.fixture(scope="module")
def aqe_off() -> perfmodel.Analysis:
    """A local[2] run with AQE off: an aggregation reading 8 shuffle partitions."""
    return perfmodel.load(SETTINGS / "aqe_off.zstd")


def test_a_change_with_settings_predicts_them_with_an_interval(aqe_off) -> None:
    base = aqe_off.predict()
    change = parse_change(f"{SHUFFLE}=2000", CONF)
    many = aqe_off.predict(change)
    same = aqe_off.predict_settings({SHUFFLE: "2000"})
    assert many.predicted_s == pytest.approx(same.predicted_s)
    assert many.predicted_s > base.predicted_s
    assert many.predicted_low_s <= many.predicted_s <= many.predicted_high_s
    assert many.baseline_replay_s == pytest.approx(base.baseline_replay_s)
    assert many.conf is not None and many.conf.settings == {SHUFFLE: "2000"}
    assert [(s.tasks_before, s.tasks_after, s.knob) for s in many.conf.stages] == [
        (8, 2000, SHUFFLE)
    ] * 2
    # A prediction without settings has no `conf` object, in the JSON either.
    assert base.conf is None and "conf" not in base.as_dict()
    assert many.as_dict()["conf"]["stages"][0]["tasks_after"] == 2000
    # The blocks each reduce task fetches: 4 and 6 as the log counted them (from 4 map tasks,
    # and from 2 and 4), fewer a task at 2,000 partitions (each map task's aggregated keys
    # fill few of them), so many more in all.
    stages = many.as_dict()["conf"]["stages"]
    assert [(s["blocks_before"], s["blocks_after"]) for s in stages] == [(4.0, 3.1), (6.0, 4.1)]


def test_the_cli_says_how_many_blocks_a_task_fetches() -> None:
    args = ["predict", str(SETTINGS / "aqe_off.zstd"), "--conf", f"{SHUFFLE}=2000"]
    result = invoke_cli(args)
    assert result.exit_code == 0, result.output
    assert "2000 shuffle partitions (from 8); shuffle blocks a task fetches 6 → 4" in result.stdout


def test_settings_and_resources_in_one_change(aqe_off) -> None:
    both = aqe_off.predict(parse_change("cores=1,spark.memory.fraction=0.3", CONF))
    assert both.config.executor_cores == 1 and both.config.memory_fraction == 0.3
    assert both.config.sources["memory_fraction"] == "what-if"
    assert aqe_off.target(parse_change("spark.driver.memory=4g", CONF)).memory_bytes == 4 << 30
    with pytest.raises(ConfigError, match="spark.driver.memory and --mem"):
        aqe_off.predict(parse_change("mem=2g,spark.driver.memory=4g", CONF))


def test_a_sweep_over_a_setting(aqe_off) -> None:
    base = aqe_off.predict()
    points = aqe_off.sweep([f"{SHUFFLE}=8,2000", "cores=1,2"])
    assert [p.settings for p in points] == [
        {SHUFFLE: "8", "cores": "1"},
        {SHUFFLE: "8", "cores": "2"},
        {SHUFFLE: "2000", "cores": "1"},
        {SHUFFLE: "2000", "cores": "2"},
    ]
    by = {(p.settings[SHUFFLE], p.settings["cores"]): p.prediction for p in points}
    # 8 is the run's own count: at its own cores, the baseline replay.
    assert by[("8", "2")].predicted_s == pytest.approx(base.predicted_s)
    assert by[("2000", "2")].predicted_s > by[("8", "2")].predicted_s
    assert by[("2000", "1")].predicted_s > by[("2000", "2")].predicted_s
    with pytest.raises(perfmodel.analysis.SettingError, match=SHUFFLE):
        aqe_off.sweep([f"{SHUFFLE}=8,0"])


def test_a_log_without_sql_plans_says_what_it_cannot_predict() -> None:
    # A YARN application of RDD jobs (../shared; SOURCES.md): no SQL plans in its log.
    rdd = perfmodel.load(shared_eventlogs() / "application_1538416563558_0014")
    assert not any(q.plan for q in rdd.profile.queries.values())
    base = rdd.predict()
    p = rdd.predict(parse_change(f"{SHUFFLE}=64,spark.sql.files.maxPartitionBytes=1m", CONF))
    assert p.conf is not None and not p.conf.stages
    assert "no SQL plans" in p.conf.no_effect[SHUFFLE]
    assert "spark.sql.files.maxPartitionBytes" in p.conf.no_effect
    assert sum(p.conf.controls.values()) == sum(
        1 for s in rdd.profile.stages.values() if s.status != "SKIPPED" and len(s.table)
    )
    assert p.predicted_s == pytest.approx(base.predicted_s)
    # What it can predict: its RDD shuffles follow spark.default.parallelism.
    wide = rdd.predict(parse_change("spark.default.parallelism=64", CONF))
    assert wide.conf is not None and wide.conf.stages
    assert {s.knob for s in wide.conf.stages} == {"spark.default.parallelism"}
    assert {s.tasks_after for s in wide.conf.stages} == {64}


def test_cluster_settings_map_onto_resources() -> None:
    log = shared_eventlogs() / "application_1489705648216_1600"  # YARN, dynamic allocation
    analysis = perfmodel.load(log)
    change = parse_change("spark.executor.cores=4,spark.executor.memory=8g", CONF)
    p = analysis.predict(change)
    assert p.config.executor_cores == 4 and p.config.memory_bytes == 8 << 30
    with pytest.raises(ConfigError, match="spark.executor.cores and --executor-cores"):
        analysis.predict(parse_change("executor-cores=2,spark.executor.cores=4", CONF))
    # Dynamic allocation's keys are the grammar's dynamic-allocation settings.
    off = analysis.predict(parse_change("spark.dynamicAllocation.enabled=false", CONF))
    assert off.predicted_s == pytest.approx(
        analysis.predict(parse_change("dynamic-allocation=off")).predicted_s
    )
    assert not off.config.allocation.enabled
    with pytest.raises(SettingNotPredictedError, match="memoryOverhead"):
        analysis.predict(parse_change("spark.executor.memoryOverhead=1g", CONF))


def test_fleet_scenarios_of_settings() -> None:
    log = SETTINGS / "aqe_off.zstd"
    ref = LogRef(str(log), log.stat().st_size, log.stat().st_mtime_ns)
    scenarios = [parse_change(f"{SHUFFLE}=2000", CONF), parse_change(f"{SHUFFLE}=8", CONF)]
    rows = analyse_log(ref, scenarios)["predictions"]
    assert [r["what_if"] for r in rows] == [f"{SHUFFLE}=2000", f"{SHUFFLE}=8"]
    assert all("error" not in r for r in rows)
    assert rows[0]["predicted_s"] > rows[1]["predicted_s"]
    assert rows[1]["predicted_s"] == pytest.approx(rows[1]["baseline_replay_s"], rel=0.02)


def _bundle(tmp: Path, log: Path) -> Path:
    """A bundle as ``perfmodel record --no-jfr --no-pyspy`` leaves one: manifest and log."""
    out = tmp / "bundle"
    (out / "eventlog").mkdir(parents=True)
    shutil.copy(log, out / "eventlog" / log.name)
    (out / "manifest.json").write_text(BundleManifest(event_logs=[log.name]).to_json())
    return out


def _plain(tmp: Path) -> Path:
    try:
        return shared_eventlogs() / "local-1422981780767"
    except pytest.skip.Exception:
        pytest.skip("no plain (uncompressed) shared log: ../shared is absent")


@pytest.mark.parametrize(
    "form",
    ["plain", "compressed", "rolling", "in-progress", "bundle"],
)
def test_predict_conf_on_every_log_form(form: str, tmp_path: Path) -> None:
    path = {
        "plain": lambda: _plain(tmp_path),
        "compressed": lambda: SETTINGS / "aqe_off.zstd",
        "rolling": lambda: EVENTLOGS / "eventlog_v2_wordcount-rolling",
        "in-progress": lambda: EVENTLOGS / "wordcount-running.lz4.inprogress",
        "bundle": lambda: _bundle(tmp_path, SETTINGS / "aqe_off.zstd"),
    }[form]()
    args = ["predict", str(path), "--conf", f"{SHUFFLE}=64"]
    text = invoke_cli(args)
    assert text.exit_code == 0, text.output
    assert f"settings: {SHUFFLE}=64" in text.stdout and "range " in text.stdout
    result = invoke_cli([*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    conf = data["conf"]
    assert conf["settings"] == {SHUFFLE: "64"}
    assert set(conf) == {
        "settings",
        "stages",
        "joins",
        "map_stages",
        "record_ms",
        "no_effect",
        "not_predicted",
        "controls",
    }
    assert conf["stages"] or SHUFFLE in conf["no_effect"]  # changed, or said why not
    assert math.isfinite(data["predicted_low_s"]) and math.isfinite(data["predicted_high_s"])


def test_predict_conf_errors_are_one_line() -> None:
    log = str(SETTINGS / "aqe_off.zstd")
    for args, named in (
        (["--conf", "spark.sql.shufle.partitions=64"], "spark.sql.shufle.partitions"),
        (["--conf", f"{SHUFFLE}=0"], SHUFFLE),
        (["--conf", "spark.task.cpus=2"], "spark.task.cpus"),
        (["--conf", "spark.sql.adaptive.enabled"], "KEY=VALUE"),
        (["--sweep", f"{SHUFFLE}=8,-1"], SHUFFLE),
    ):
        result = invoke_cli(["predict", log, *args])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0]
        assert "Traceback" not in result.output


def test_a_sweep_refuses_a_bad_point_before_its_first_replay() -> None:
    plans = perfmodel.load(SETTINGS / "plans.zstd")
    # A 1-byte split would cut the scan into millions of tasks: refused when the sweep is
    # set up, not after the first point has been written.
    with pytest.raises(perfmodel.analysis.SettingError, match="maxPartitionBytes"):
        plans.iter_sweep(["spark.sql.files.maxPartitionBytes=1m,1"])
