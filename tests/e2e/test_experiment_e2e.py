"""A small study end to end through the CLI: real PySpark runs into a store, then the
accuracy report with its JSON, figures, and the runs commands.

The runs are the suite's shared `machine_runs`: the study's word count over 8 MB of
generated text on two configurations (1 or 2 cores with a 1g driver heap, one repetition
each), recorded without JFR or py-spy to keep them short; the event log is
recorded as always. tests/e2e/test_recommend_e2e.py checks `recommend` against the same runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from perfmodel.runs.store import RunStore
from tests.cli_runner import invoke_cli
from tests.conftest import MachineRuns

CONFIGS = ["local[1] driver=1g", "local[2] driver=1g"]
PAIRS = len(CONFIGS) * (len(CONFIGS) - 1)
"""Every run predicts the other configuration."""


@pytest.fixture
def study(machine_runs: MachineRuns) -> tuple[Path, Path, list[dict]]:
    return machine_runs.spec, machine_runs.store, machine_runs.runs


@pytest.mark.slow
def test_runs_are_recorded_and_stored(study) -> None:
    _, store, runs = study
    assert [(r["config"], r["status"]) for r in runs] == [(c, "ok") for c in CONFIGS]
    for r in runs:
        assert r["app_s"] > 0 and r["wall_s"] >= r["app_s"]
        assert (Path(r["bundle"]) / "manifest.json").is_file()
    listed = invoke_cli(["runs", "list", "--store", str(store), "--json"])
    rows = json.loads(listed.stdout)
    assert [row["status"] for row in rows] == ["ok"] * len(CONFIGS)
    assert all(row["cpu_s"] > 0 and row["peak_rss_bytes"] > 100 << 20 for row in rows)
    shown = invoke_cli(["runs", "show", "1", "--store", str(store), "--json"])
    detail = json.loads(shown.stdout)
    assert detail["samples"] and detail["stages"]
    assert {"--master", "local[1]"} <= set(detail["command"])
    assert sum(s["input_bytes"] for s in detail["stages"]) >= 8 << 20
    compared = invoke_cli(["runs", "compare", "1", "2", "--store", str(store)])
    assert compared.exit_code == 0 and "run 1" in compared.stdout and "run 2" in compared.stdout


@pytest.mark.slow
def test_report_pairs_every_run_with_the_other_config(study, tmp_path: Path) -> None:
    spec, store, runs = study
    out = tmp_path / "report"
    result = invoke_cli(
        [
            "experiment",
            "report",
            str(spec),
            "--store",
            str(store),
            "--out",
            str(out),
            "--html",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    pairs = report["pairs"]
    assert {(p["baseline_config"], p["target_config"]) for p in pairs} == {
        (a, b) for a in CONFIGS for b in CONFIGS if a != b
    }
    by_id = {r["run_id"]: r for r in runs}
    for p in pairs:
        (target,) = p["target_runs"]
        assert p["measured_s"] == pytest.approx(by_id[target]["app_s"])
        gap = abs(p["predicted_s"] - p["measured_s"])
        assert p["error"] == pytest.approx(gap / p["measured_s"])
        assert p["slot_only_error"] == pytest.approx(
            abs(p["slot_only_s"] - p["measured_s"]) / p["measured_s"]
        )
        assert p["bottleneck"] in {"cpu", "memory", "disk", "network", "scheduling", "other"}
    (wl,) = report["workloads"]
    assert wl["workload"] == "wordcount" and wl["pairs"] == PAIRS
    assert math.isclose(wl["mean_error"], sum(p["error"] for p in pairs) / PAIRS)
    assert wl["worst_error"] == max(p["error"] for p in report["pairs"])
    assert report["repeat_error"] is None  # one run per configuration: no noise floor
    assert (out / "accuracy.md").read_text().count("| wordcount |") >= 3
    assert json.loads((out / "accuracy.json").read_text())["mean_error"] == report["mean_error"]
    for stem in ("runtime-wordcount", "stages-wordcount"):
        assert (out / "plots" / f"{stem}.png").stat().st_size > 1000
        assert (out / "plots" / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
    _check_accuracy_page(out / "accuracy.html", report)
    # Predictions are kept in the store, one per pair and method.
    import sqlite3

    count = sqlite3.connect(store).execute("SELECT COUNT(*) FROM predictions").fetchone()[0]
    assert count == 2 * PAIRS  # the replay's and slot-only replay's


def _check_accuracy_page(page: Path, report: dict) -> None:
    """The --html page: measured against predicted per pair, drawn without errors."""
    from tests.headless_chromium import Browser

    with Browser() as browser:
        browser.open(page)
        browser.wait_for("document.body && document.body.dataset.ready === '1'", timeout=120)
        assert browser.problems() == []
        pairs = browser.evaluate("document.querySelector('[data-key=pairs] .value').textContent")
        assert pairs == str(len(report["pairs"]))
        plotted = browser.evaluate("document.getElementById('pairs-plot-plot').data[0]")
        assert sorted(zip(plotted["x"], plotted["y"], strict=True)) == sorted(
            (p["measured_s"], p["predicted_s"]) for p in report["pairs"]
        )
        rows = browser.evaluate("document.querySelectorAll('#every-pair-table tr').length")
        assert rows == len(report["pairs"]) + 1


@pytest.mark.slow
def test_report_under_a_split_with_every_reading_of_the_baseline(study, tmp_path: Path) -> None:
    """--split labels the workload held-out; --variants adds the bare-log and no-code-vector
    predictions of every pair (and stores them)."""
    spec, store, _ = study
    split = tmp_path / "split.toml"
    split.write_text('[fit]\nworkloads = ["sort"]\n[held_out]\nworkloads = ["wordcount"]\n')
    result = invoke_cli(
        ["experiment", "report", str(spec), "--store", str(store), "--no-plots"]
        + ["--split", str(split), "--variants", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["workloads"][0]["role"] == "held-out"
    held, fit = report["groups"]
    assert (held["role"], held["pairs"], fit["pairs"], fit["missing"]) == (
        "held-out",
        PAIRS,
        0,
        ["sort"],
    )
    for p in report["pairs"]:
        assert p["bare_log_s"] > 0 and p["bare_log_error"] == pytest.approx(
            abs(p["bare_log_s"] - p["measured_s"]) / p["measured_s"]
        )
        # Recorded without stack samplers: no code vectors to leave out, the same prediction.
        assert p["no_code_vectors_s"] == pytest.approx(p["predicted_s"])
    assert held["mean_error"] == pytest.approx(report["mean_error"])
    # Every prediction now carries an 80% interval: coverage is a share of the pairs.
    assert 0.0 <= held["interval_coverage"] <= 1.0
    for p in report["pairs"]:
        assert p["predicted_low_s"] <= p["predicted_s"] <= p["predicted_high_s"]
    import sqlite3

    methods = sqlite3.connect(store).execute(
        "SELECT DISTINCT m.method FROM predictions p JOIN model_versions m "
        "ON p.model_version_id = m.id"
    )
    assert {m for (m,) in methods} >= {"replay", "slot-only", "bare-log", "no-code-vectors"}
    bad = invoke_cli(
        ["experiment", "report", str(spec), "--store", str(store), "--split", str(tmp_path)],
    )
    assert bad.exit_code == 2 and bad.output.startswith("error:")


def test_cli_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n')
    cases = [
        ["experiment", "run", str(bad), "--store", str(store)],
        ["experiment", "run", str(tmp_path / "absent.toml"), "--store", str(store)],
        ["experiment", "report", "nosuch", "--store", str(store)],
        ["runs", "show", "42", "--store", str(store)],
        ["runs", "compare", "1", "--store", str(store)],
        ["runs", "list", "--store", str(tmp_path)],
    ]
    for args in cases:
        result = invoke_cli(args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("error: ") and "Traceback" not in result.output
        assert result.output.count("\n") == 1, result.output


def test_main_cli_has_experiment_and_runs(tmp_path: Path) -> None:

    res = invoke_cli(["--help"])
    assert res.exit_code == 0 and "experiment" in res.output and "runs" in res.output
    store = tmp_path / "empty.sqlite"
    res = invoke_cli(["runs", "list", "--store", str(store), "--json"])
    # Reading a store that is not there is an error, and creates nothing.
    assert res.exit_code == 2 and "no run store" in res.output, res.output
    assert not store.exists()
    RunStore(store).close()  # as `experiment run` makes it
    res = invoke_cli(["runs", "list", "--store", str(store), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []
    res = invoke_cli(["runs", "show", "42", "--store", str(store)])
    assert res.exit_code == 2 and "42" in res.output and "Traceback" not in res.output
