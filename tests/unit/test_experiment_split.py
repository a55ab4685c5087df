"""The held-out split: reading the file, choosing specs by side, and the report under it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from perfmodel.experiment.accuracy import _summarise
from perfmodel.experiment.held_out import apply_split
from perfmodel.experiment.results import PairResult
from perfmodel.experiment.split import (
    DEFAULT_SPLIT,
    FIT,
    HELD_OUT,
    UNLISTED,
    SplitError,
    load_split,
    main,
    specs_for,
)
from perfmodel.report.jsonrenderer import accuracy_json
from perfmodel.report.markdown import render_markdown
from tests.conftest import REPO


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "split.toml"
    path.write_text(text)
    return path


def test_the_repositorys_split_holds_out_the_new_workloads() -> None:
    split = load_split(DEFAULT_SPLIT)
    assert split.held_out == {
        *("tpch", "tpcds", "ml-pipeline", "window", "pandas-groups"),
        *("als", "ngrams", "inverted-index"),
        "wide-shuffle",  # the scale-out study's (experiments/cluster/scaleout/)
        "components",  # the held-out check of the bare-log JVM demand (2026-11-29)
        "sessions",  # the third held-out scale-out study (2026-11-30)
        "star-join",  # the held-out check of the co-running growth of bare logs (2026-12-02)
    }
    assert split.fit == {"wordcount", "pagerank", "sort", "sql-join", "udf-etl"}
    assert "No figure" in split.rule
    assert split.role("tpch") == HELD_OUT and split.role("sort") == FIT
    assert split.role("tpcds") == HELD_OUT


def test_every_spec_in_experiments_is_on_one_side() -> None:
    split = load_split(DEFAULT_SPLIT)
    specs = sorted((REPO / "experiments").glob("*.toml"))
    held, fit = specs_for(split, HELD_OUT, specs), specs_for(split, FIT, specs)
    assert {p.stem for p in held} == {
        *("tpch", "tpcds", "ml_pipeline", "window", "pandas_groups"),
        *("als", "ngrams", "inverted_index", "wide_shuffle", "components", "sessions", "star_join"),
    }
    assert len(held) + len(fit) == len(specs)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[fit]\nworkloads = ["a"]\n[held_out]\nworkloads = ["a"]\n', "both"),
        ('[fit]\nworkloads = ["a"]\n', "names no workload"),
        ('[held_out]\nworkloads = "a"\n', "list of workload names"),
        ('[held_out]\nworkloads = ["a", "a"]\n', "twice"),
        ('[held_out]\nworkload = ["a"]\n', "unknown key"),
        ('heldout = 1\n[held_out]\nworkloads = ["a"]\n', "unknown key"),
        ('rule = 3\n[held_out]\nworkloads = ["a"]\n', "`rule`"),
        ("[held_out\n", "not valid TOML"),
    ],
)
def test_bad_split_files_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SplitError, match=message):
        load_split(_write(tmp_path, text))


def test_a_missing_split_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(SplitError, match="cannot read"):
        load_split(tmp_path / "absent.toml")


def test_the_spec_chooser_prints_one_spec_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    specs = [str(REPO / "experiments" / f) for f in ("tpch.toml", "sort.toml", "window.toml")]
    assert main([str(DEFAULT_SPLIT), "--role", "held-out", *specs]) == 0
    assert capsys.readouterr().out.split() == [specs[0], specs[2]]
    assert main(["/nonexistent/split.toml", *specs]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read")


def _pair(workload: str, run: int, measured: float, predicted: float, **extra: float) -> PairResult:
    return PairResult(
        experiment=workload,
        workload=workload,
        baseline_run=run,
        baseline_config="local[2] driver=2g",
        target_config="local[1] driver=2g",
        target_runs=[run + 100],
        measured_s=measured,
        measured_sd_s=0.0,
        measured_wall_s=measured + 5,
        predicted_s=predicted,
        error=abs(predicted - measured) / measured,
        slot_only_s=measured,
        slot_only_error=0.0,
        bottleneck="cpu",
        baseline_observed_s=measured,
        baseline_model_error=0.0,
        **extra,
    )


def test_the_report_labels_workloads_and_summarises_each_side(tmp_path: Path) -> None:
    split = load_split(
        _write(
            tmp_path,
            'rule = "held out"\n[fit]\nworkloads = ["sort"]\n'
            '[held_out]\nworkloads = ["tpch", "window"]\n',
        )
    )
    pairs = [
        _pair("tpch", 1, 100.0, 110.0, bare_log_s=150.0, bare_log_error=0.5),
        _pair("tpch", 2, 100.0, 70.0, bare_log_s=100.0, bare_log_error=0.0),
        _pair("sort", 3, 50.0, 50.0),
        _pair("other", 4, 10.0, 20.0),
    ]
    report = apply_split(_summarise(pairs, "v", 8, [], {}), split)
    roles = {w.workload: w.role for w in report.workloads}
    assert roles == {"tpch": HELD_OUT, "sort": FIT, "other": UNLISTED}
    held, fit = report.groups
    assert (held.role, held.workloads, held.pairs, held.missing) == (
        HELD_OUT,
        ["tpch"],
        2,
        ["window"],
    )
    assert held.mean_error == pytest.approx(0.2)
    assert held.bare_log_mean_error == pytest.approx(0.25)
    assert math.isnan(held.no_code_vectors_mean_error)
    assert math.isnan(held.interval_coverage)  # no prediction carries an interval yet
    assert held.worst_error == pytest.approx(0.3)
    assert "run 2" in held.worst_pair and "-30.0%" in held.worst_pair
    assert (fit.workloads, fit.pairs, fit.mean_error) == (["sort"], 1, 0.0)
    text = render_markdown(report)
    assert "| tpch | held-out | 2 | 25.0% | 20.0% | n/a | 0.0% |" in text
    assert "| **all held-out** | held-out | 2 |" in text
    assert "without pairs here: window (held-out)" in text
    assert "| tpch | held-out | 2 | 20.0% |" in text  # the per-workload table's set column
    payload = json.loads(accuracy_json(report))
    assert payload["groups"][0]["interval_coverage"] is None
    assert payload["workloads"][0]["role"] in (HELD_OUT, FIT, UNLISTED)


def test_interval_coverage_counts_measured_runtimes_inside_the_interval() -> None:
    pairs = [
        _pair("tpch", 1, 100.0, 100.0, predicted_low_s=90.0, predicted_high_s=110.0),
        _pair("tpch", 2, 100.0, 100.0, predicted_low_s=101.0, predicted_high_s=120.0),
        _pair("tpch", 3, 100.0, 100.0),
    ]
    report = _summarise(pairs, "v", 3, [], {})
    assert report.workloads[0].interval_coverage == pytest.approx(0.5)


def test_without_a_split_the_report_is_as_before() -> None:
    report = _summarise([_pair("sort", 1, 10.0, 11.0)], "v", 2, [], {})
    text = render_markdown(report)
    assert "held-out" not in text and "| workload | pairs |" in text
    assert report.groups == [] and report.split == ""


def test_runs_kept_with_both_samplers_compare_them_pair_by_pair(tmp_path: Path) -> None:
    split = load_split(
        _write(
            tmp_path, 'rule = "r"\n[fit]\nworkloads = ["sort"]\n[held_out]\nworkloads = ["tpch"]\n'
        )
    )
    pairs = [
        _pair("tpch", 1, 100.0, 110.0, plugin_samples_s=120.0, plugin_samples_error=0.2),
        _pair("tpch", 2, 100.0, 90.0, plugin_samples_s=90.0, plugin_samples_error=0.1),
        _pair("sort", 3, 50.0, 50.0),  # recorded with one sampler: not in the comparison
    ]
    report = apply_split(_summarise(pairs, "v", 6, [], {}), split)
    assert report.groups[0].plugin_samples_mean_error == pytest.approx(0.15)
    text = render_markdown(report)
    assert "JVM samplers on the same runs" in text
    # JFR 10.0% and 10.0% → 10.0%; plugin 20% and 10% → 15.0%; +5 points; 120 vs 110 moved 9.1%.
    assert "| tpch | held-out | 2 | 10.0% | 15.0% | +5.0 | 9.1% |" in text
    assert "| **all held-out** | held-out | 2 | 10.0% | 15.0% |" in text
    assert "sort | fit | 1 | 0.0% | n/a" not in text
    plain = _summarise([_pair("sort", 1, 10.0, 11.0)], "v", 2, [], {})
    assert "JVM samplers" not in render_markdown(plain)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_split_that_is_no_regular_file_is_refused_before_reading(
    tmp_path: Path, kind: str
) -> None:
    """A FIFO would wait for a writer forever and /dev/zero never ends: refused up front."""
    import os

    if kind == "fifo":
        path = tmp_path / "split.toml"
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    else:
        path = tmp_path
    with pytest.raises(SplitError, match="not a split file"):
        load_split(path)
