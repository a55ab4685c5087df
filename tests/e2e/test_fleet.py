"""`perfmodel fleet` with the local engine, on the shared real logs plus a generated fleet
of about 200 copies of them (new ids, names, start times), one slowed-down series and a
few corrupt files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from perfmodel.fleet.discover import expand_inputs
from perfmodel.fleet.regress import threshold
from perfmodel.fleet.synth import copy_events, read_source, write_huge_log, write_log
from perfmodel.simulate.config import ConfigError
from perfmodel.simulate.whatif import parse_change
from tests.cli_runner import invoke_cli
from tests.conftest import shared_entries, shared_eventlogs
from tests.fleet_helpers import make_fleet, read_tables, run

runner = CliRunner()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory):
    shared = shared_eventlogs()
    root = tmp_path_factory.mktemp("fleet")
    synth = make_fleet(shared, root / "logs")
    result = run([str(root / "logs"), str(shared)], root / "out", jobs=2)
    return shared, synth, root / "out", result


def _diagnose_json(path: Path) -> dict:
    out = invoke_cli(["diagnose", "--json", str(path)])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", shared_entries())
def test_each_shared_log_equals_diagnose_json(fleet, name: str) -> None:
    shared, _, out, _ = fleet
    path = str((shared / name).resolve())
    d = _diagnose_json(shared / name)
    apps = pq.read_table(out / "apps.parquet").to_pylist()
    app = next(a for a in apps if a["log_path"] == path)
    for key in ("app_id", "app_name", "spark_version", "duration_s", "complete", "jobs", "tasks"):
        assert app[key] == d[key], key
    for key in ("failed_tasks", "failed_jobs", "slot_utilisation", "bottleneck", "model_error"):
        assert app[key] == d[key], key
    for key in ("stages_completed", "stages_failed", "stages_skipped", "critical_path_s"):
        assert app[key] == d[key], key
    assert app["stages"] == len(d["stages"])
    assert app["executors"] == d["executors"]["count"]
    assert app["total_slots"] == d["executors"]["total_slots"]
    assert app["critical_path_gaps_s"] == d["critical_path_gaps_s"]
    stages = [s for s in pq.read_table(out / "stages.parquet").to_pylist() if s["log_path"] == path]
    assert len(stages) == len(d["stages"])
    for row, s in zip(stages, d["stages"], strict=True):
        for key in ("stage_id", "attempt", "name", "status", "num_tasks", "tasks_run"):
            assert row[key] == s[key], key
        for key in ("failed_tasks", "duration_s", "task_time_s", "skew", "median_task_s"):
            assert row[key] == s[key], key
        assert row["disk_spill_bytes"] == s["disk_spill_bytes"]
        assert row["cpu_s"] == s["decomposition"]["cpu"]
        assert row["job_ids"] == s["job_ids"]
    findings = [
        f for f in pq.read_table(out / "findings.parquet").to_pylist() if f["log_path"] == path
    ]
    # Its findings, then its alerts (docs/alerts.md) with their columns.
    alerts = d["alerts"]
    assert [f["text"] for f in findings] == d["findings"] + [a["text"] for a in alerts]
    assert [f["alert"] for f in findings] == [None] * len(d["findings"]) + [
        a["kind"] for a in alerts
    ]
    for row, alert in zip(findings[len(d["findings"]) :], alerts, strict=True):
        assert row["knob"] == alert["knob"] and row["predicted_s"] == alert["predicted_s"]


def test_predictions_equal_perfmodel_predict(fleet) -> None:
    shared, _, out, _ = fleet
    path = shared / "application_1489705648216_1600"
    rows = [
        r
        for r in pq.read_table(out / "predictions.parquet").to_pylist()
        if r["log_path"] == str(path.resolve())
    ]
    assert [r["what_if"] for r in rows] == ["cores=2x", "mem=0.5x"]
    base = json.loads(invoke_cli(["predict", "--json", str(path)]).stdout)
    cores = base["config"]["executors"] * base["config"]["executor_cores"]
    assert rows[0]["cores"] == 2 * cores
    res = invoke_cli(["predict", "--json", str(path), "--cores", str(2 * cores)])
    want = json.loads(res.stdout)
    assert rows[0]["predicted_s"] == want["predicted_s"]
    assert rows[0]["model_error"] == want["model_error"]
    assert rows[0]["bottleneck"] == want["bottleneck"]
    mem = base["config"]["memory_bytes"] // 2
    assert mem % (1 << 20) == 0 and rows[1]["memory_bytes"] == mem
    res = invoke_cli(["predict", "--json", str(path), "--mem", f"{mem >> 20}m"])
    assert rows[1]["predicted_s"] == json.loads(res.stdout)["predicted_s"]


def test_every_log_is_an_application_or_an_error(fleet) -> None:
    shared, synth, out, result = fleet
    tables = read_tables(out)
    apps = set(tables["apps"].column("log_path").to_pylist())
    errors = tables["errors"].to_pylist()
    assert {e["log_path"] for e in errors} == {str(p.resolve()) for p in synth.corrupt}
    assert all(e["reason"] for e in errors)
    assert len(apps) == len(synth.logs) + len(shared_entries())
    assert result.summary.errors == len(synth.corrupt)
    preds = tables["predictions"]
    assert preds.num_rows == 2 * len(apps)


def test_the_slowed_down_series_is_the_regression(fleet) -> None:
    _, synth, out, _ = fleet
    regressions = pq.read_table(out / "regressions.parquet").to_pylist()
    runs = [r for r in regressions if r["scope"] == "app"]
    assert [r["app_name"] for r in runs] == [synth.regressed_name]
    (r,) = runs
    assert r["latest_log"] == str(synth.regressed.resolve())
    assert r["runs"] == len(synth.regressed_series)
    assert len(r["earlier_app_ids"]) == len(synth.regressed_series) - 1
    assert r["latest_s"] > r["threshold_s"] > r["baseline_median_s"]
    stages = [x for x in regressions if x["scope"] == "stage"]
    assert stages and {x["app_name"] for x in stages} == {synth.regressed_name}
    html = (out / "summary.html").read_text()
    assert synth.regressed_name in html and "<script" not in html


def test_second_run_skips_all_and_a_touched_log_alone_is_analysed_again(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("local-1422981780767", "spark2-eventlog.zstd", "eventlog_v2_local-1623876083964"):
        src = shared / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, logs / name)
    (logs / "broken").write_bytes(b"\x00\x01 not a log")
    first = run([str(logs)], tmp_path / "out", jobs=1)
    assert len(first.analysed) == 4 and first.summary.errors == 1
    before = read_tables(tmp_path / "out")
    second = run([str(logs)], tmp_path / "out", jobs=1)
    assert second.analysed == [] and second.skipped == 4
    assert read_tables(tmp_path / "out") == before
    part = next((logs / "eventlog_v2_local-1623876083964").glob("events_*"))
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))
    third = run([str(logs)], tmp_path / "out", jobs=1)
    assert [Path(r.path).name for r in third.analysed] == ["eventlog_v2_local-1623876083964"]
    after = read_tables(tmp_path / "out")
    for name in ("apps", "errors"):
        assert after[name].drop_columns(["log_mtime_ns"]) == before[name].drop_columns(
            ["log_mtime_ns"]
        )
    assert after["stages"] == before["stages"]


def test_a_new_log_is_picked_up_and_regressions_recomputed(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    src = read_source(shared / "local-1422981780767")
    logs = tmp_path / "logs"
    logs.mkdir()
    day = 86_400_000
    for i, factor in enumerate((1.0, 1.02, 0.99, 1.01)):
        app_id = f"app-series-{i}"
        write_log(logs, app_id, copy_events(src, app_id, "series", i * day, factor), "plain")
    first = run([str(logs)], tmp_path / "out", jobs=1)
    assert first.tables["regressions"].num_rows == 0
    write_log(
        logs, "app-series-9", copy_events(src, "app-series-9", "series", 9 * day, 2.0), "zstd"
    )
    second = run([str(logs)], tmp_path / "out", jobs=1)
    assert [Path(r.path).name for r in second.analysed] == ["app-series-9.zstd"]
    runs = [r for r in second.tables["regressions"].rows() if r["scope"] == "app"]
    assert [(r["app_name"], r["latest_app_id"]) for r in runs] == [("series", "app-series-9")]
    assert runs[0]["earlier_app_ids"] == [f"app-series-{i}" for i in range(4)]


def test_a_log_over_the_memory_cap_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    logs = tmp_path / "logs"
    huge = write_huge_log(logs, shared / "spark2-eventlog.zstd", "app-huge-0001", mib=100)
    shutil.copy(shared / "local-1422981780767", logs / "local-1422981780767")
    capped = run([str(logs)], tmp_path / "out", jobs=1, memory_cap_bytes=32 << 20)
    errors = capped.tables["errors"].rows()
    assert [(e["log_path"], e["kind"]) for e in errors] == [(str(huge.resolve()), "memory_cap")]
    assert capped.tables["apps"].column("app_id") == ["local-1422981780767"]
    # A cap is a property of the run, not of the log: the next run tries the log again.
    uncapped = run([str(logs)], tmp_path / "out", jobs=1)
    assert [Path(r.path).name for r in uncapped.analysed] == [huge.name]
    assert uncapped.tables["errors"].num_rows == 0
    assert uncapped.tables["apps"].num_rows == 2


def test_inputs_directory_glob_and_listing(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    listing = tmp_path / "logs.txt"
    listing.write_text(
        f"{shared / 'spark2-eventlog.zstd'}\n# a comment\n{shared / 'local-1422981780767'}\n"
    )
    assert [Path(p).name for p in expand_inputs([str(listing)])] == [
        "spark2-eventlog.zstd",
        "local-1422981780767",
    ]
    names = [Path(p).name for p in expand_inputs([str(shared / "eventlog_v2_*")])]
    assert names == sorted(n for n in shared_entries() if n.startswith("eventlog_v2_"))
    whole = [Path(p).name for p in expand_inputs([str(shared)])]
    assert whole == shared_entries()  # SOURCES.md is not a log; rolling dirs count once


def test_scenarios_are_relative_to_each_baseline() -> None:
    from perfmodel.simulate.config import ClusterConfig

    base = ClusterConfig(
        executors=4,
        executor_cores=2,
        memory_bytes=4 << 30,
        hosts=4,
        host_cores=2,
        host_cores_assumed=True,
    )
    change = parse_change("cores=2x,mem=0.5x").resolve(base)
    assert (change.cores, change.memory_bytes) == (16, 2 << 30)
    assert parse_change("cores=6").resolve(base).cores == 6
    for bad in ("cores=many", "speed=2x", "cores=2x,cores=3x", ""):
        with pytest.raises(ConfigError):
            parse_change(bad)


def test_the_regression_threshold() -> None:
    median, mad, limit = threshold([100.0, 102.0, 98.0, 101.0, 99.0])
    assert (median, mad) == (100.0, 1.0)
    assert limit == pytest.approx(120.0)  # the 20 % floor is above 3 × 1.4826 × MAD
    assert threshold([10.0, 30.0, 20.0])[2] == pytest.approx(20 + 3 * 1.4826 * 10)


def test_cli_summary_treats_log_text_literally(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    src = read_source(shared / "local-1422981780767")
    name = "[bold red]etl[/] <script>x</script>"
    (tmp_path / "logs").mkdir()
    write_log(tmp_path / "logs", "app-x-1", copy_events(src, "app-x-1", name, 0), "plain")
    res = invoke_cli(
        ["fleet", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--jobs", "1"],
    )
    assert res.exit_code == 0, res.output
    assert "[bold red]etl[/]" in res.stdout
    html = (tmp_path / "out" / "summary.html").read_text()
    assert "&lt;script&gt;" in html and "<script>" not in html
    res = invoke_cli(["fleet", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--json"])
    assert json.loads(res.stdout)["applications"] == 1


def test_cli_bad_input_is_one_error_line(tmp_path: Path) -> None:
    res = invoke_cli(["fleet", str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "error:" in res.output and "Traceback" not in res.output
    res = invoke_cli(["fleet", str(tmp_path), "hdfs://nn/logs", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--engine spark" in res.output


def test_since_keeps_logs_modified_from_that_date(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    shared = shared_eventlogs()
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(shared / "spark2-eventlog.zstd", logs / "spark2-eventlog.zstd")
    old = logs / "local-1422981780767"
    shutil.copy(shared / "local-1422981780767", old)
    os.utime(old, (1_600_000_000, 1_600_000_000))  # 2020
    later = run([str(logs)], tmp_path / "out", jobs=1, since=datetime.now(UTC) + timedelta(1))
    assert later.analysed == []
    recent = run([str(logs)], tmp_path / "out", jobs=1, since=datetime(2026, 1, 1, tzinfo=UTC))
    assert [Path(r.path).name for r in recent.analysed] == ["spark2-eventlog.zstd"]


def test_wasted_core_hours_are_held_minus_busy(fleet) -> None:
    _, _, out, _ = fleet
    apps = pq.read_table(out / "apps.parquet").to_pylist()
    local = [a for a in apps if a["local_mode"]]
    assert local and any(not a["local_mode"] for a in apps)
    for a in apps:
        wasted = max(0.0, a["held_core_hours"] - a["busy_core_hours"])
        assert a["wasted_core_hours"] == pytest.approx(wasted, rel=1e-9, abs=1e-12)
    for a in local:  # held = slots × run, so busy ÷ held is the slot utilisation
        assert a["held_from"].startswith("local mode")
        if a["task_cpus"] == 1 and a["held_core_hours"]:
            ratio = a["busy_core_hours"] / a["held_core_hours"]
            assert ratio == pytest.approx(a["slot_utilisation"], rel=1e-9)
    cluster = [a for a in apps if a["held_from"] == "executor added/removed events"]
    assert len(cluster) > len(apps) // 2
