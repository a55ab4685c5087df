"""The renderer interface (`perfmodel.report`): formats by name, the kinds each has a form
for, a clear error for the others, the JSON sweep streamed, whole-or-nothing files, the
lines of `perfmodel watch`."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

import perfmodel
from perfmodel.analysis import SweepPoint
from perfmodel.analysis.watch import Finding, StageReport, WatchResult
from perfmodel.dag.partition_change import SettingsEffect
from perfmodel.errors import PerfmodelError
from perfmodel.report import (
    FORMATS,
    KINDS,
    ProfileSource,
    Renderer,
    UnknownFormatError,
    UnsupportedFormatError,
    render_to_file,
    renderer,
)
from perfmodel.report.text.prediction import render_settings_effect

WORDCOUNT = Path(__file__).resolve().parents[1] / "data" / "eventlogs" / "wordcount.zstd"

EXPECTED_KINDS = {
    "text": [
        "diagnosis",
        "watch_stage",
        "watch_end",
        "prediction",
        "sweep",
        "recommendation",
        "fleet_summary",
        "stacks",
        "runs",
        "run_detail",
        "run_comparison",
        "experiment_runs",
        "cluster_status",
        "classifications",
        "located_sources",
        "corpus_stats",
        "training",
    ],
    "markdown": ["accuracy", "settings_study"],
    "json": [k for k in KINDS if k not in ("application", "stacks", "training")],
    "html": ["fleet_summary", "accuracy", "application"],
    "speedscope": ["stacks"],
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_is_found_by_name_and_renders_its_kinds(name: str) -> None:
    made = renderer(name)
    assert isinstance(made, Renderer) and made.format == name
    assert made.kinds() == EXPECTED_KINDS[name]


def test_every_kind_has_a_form_somewhere() -> None:
    covered = {k for name in FORMATS for k in renderer(name).kinds()}
    assert covered == set(KINDS)


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(UnknownFormatError, match="no output format 'pdf': use one of text, "):
        renderer("pdf")


def test_a_kind_without_a_form_is_a_clear_user_error() -> None:
    analysis = perfmodel.load(WORDCOUNT)
    points = analysis.iter_sweep(["cores=1,2"])
    with pytest.raises(UnsupportedFormatError) as caught:
        renderer("html").sweep(points, io.StringIO(), source=ProfileSource(str(WORDCOUNT)))
    assert isinstance(caught.value, PerfmodelError)  # one `error:` line at the CLI
    assert str(caught.value) == (
        "the html format has no form for a sweep (html renders a fleet summary, "
        "an accuracy report, an application page)"
    )
    with pytest.raises(UnsupportedFormatError, match="speedscope renders stack profiles"):
        renderer("speedscope").diagnosis(analysis.diagnose(), io.StringIO())


def test_the_json_sweep_is_written_point_by_point() -> None:
    analysis = perfmodel.load(WORDCOUNT)
    out = io.StringIO()
    seen: list[str] = []

    def points() -> Iterator[SweepPoint]:
        for p in analysis.iter_sweep(["cores=1,2,4"]):
            seen.append(out.getvalue())
            yield p

    renderer("json").sweep(points(), out, source=ProfileSource(str(WORDCOUNT)))
    assert seen[0] == ""
    assert seen[1].count('"settings"') == 1 and seen[2].count('"settings"') == 2


def test_the_text_of_a_diagnosis_is_laid_out_for_a_pipe() -> None:
    out = io.StringIO()  # not a terminal: 120 columns, no colour codes
    renderer("text").diagnosis(perfmodel.load(WORDCOUNT).diagnose(), out)
    text = out.getvalue()
    assert "\x1b[" not in text and "Findings" in text
    assert max(len(line) for line in text.splitlines()) <= 120


def test_a_failed_rendering_leaves_the_old_file_and_no_other(tmp_path: Path) -> None:
    path = render_to_file(tmp_path / "sub" / "page.txt", lambda f: f.write("old"))
    assert path.read_text() == "old"

    def broken(f: TextIO) -> None:
        f.write("half a pa")
        raise OSError("disk full")

    with pytest.raises(OSError):
        render_to_file(path, broken)
    assert path.read_text() == "old"
    assert [p.name for p in path.parent.iterdir()] == ["page.txt"]


def _watch_result() -> WatchResult:
    analysis = perfmodel.load(WORDCOUNT)
    report = StageReport(3, 1, "collect at job.py:12", "FAILED", 2.5, 4, 1)
    report.findings = [Finding("failed_tasks", "1 task attempt(s) failed")]
    return WatchResult(analysis, analysis.diagnose(), [report], "timeout", 1234, 7)


def test_watch_stages_are_one_line_each_and_end_with_the_diagnosis() -> None:
    result = _watch_result()
    out = io.StringIO()
    renderer("json").watch_stage(result.stages[0], out)
    renderer("json").watch_end(result, out)
    first, last = out.getvalue().splitlines()
    assert json.loads(first) == {
        "event": "stage",
        "stage_id": 3,
        "attempt": 1,
        "name": "collect at job.py:12",
        "status": "FAILED",
        "duration_s": 2.5,
        "tasks": 4,
        "failed_tasks": 1,
        "findings": [{"kind": "failed_tasks", "text": "1 task attempt(s) failed"}],
    }
    end = json.loads(last)
    assert (end["event"], end["stopped"], end["bytes_read"], end["polls"]) == (
        "diagnosis",
        "timeout",
        1234,
        7,
    )
    diagnose_json = io.StringIO()
    renderer("json").diagnosis(result.diagnosis, diagnose_json)
    assert end["diagnosis"] == json.loads(diagnose_json.getvalue())


def test_the_text_of_a_watched_stage() -> None:
    result = _watch_result()
    out = io.StringIO()
    renderer("text").watch_stage(result.stages[0], out)
    assert out.getvalue() == (
        "stage 3.1 FAILED (collect at job.py:12): 2.5 s, 4 task(s)\n"
        "  failed_tasks: 1 task attempt(s) failed\n"
    )
    out = io.StringIO()
    renderer("text").watch_end(result, out)
    diagnosis = io.StringIO()
    renderer("text").diagnosis(result.diagnosis, diagnosis)
    assert out.getvalue() == diagnosis.getvalue()


def test_a_configuration_is_described_in_the_singular_where_it_is_one() -> None:
    from dataclasses import replace

    from perfmodel.report.text.prediction import describe_config
    from perfmodel.simulate.config import ClusterConfig

    two = ClusterConfig(
        executors=2,
        executor_cores=2,
        memory_bytes=2**30,
        hosts=2,
        host_cores=4,
        host_cores_assumed=False,
    )
    assert describe_config(two).startswith("2 executors × 2 cores on 2 hosts, ")
    one = replace(two, executors=1, executor_cores=1, hosts=1)
    assert describe_config(one).startswith("1 executor × 1 core on 1 host, ")
    assert describe_config(one, "dask").startswith("1 worker × 1 thread on 1 host, ")
    assert describe_config(two, "dask").startswith("2 workers × 2 threads on 2 hosts, ")


def test_the_settings_effect_says_what_sorting_records_adds_or_saves() -> None:
    def line(record_ms: float) -> str:
        effect = SettingsEffect(
            {"spark.sql.shuffle.partitions": "400"}, map_stages=2, record_ms=record_ms
        )
        (found,) = [x for x in render_settings_effect(effect) if "map stage(s)" in x]
        return found

    assert line(2500.0).endswith("; 2.5 s more task time ordering their records by partition")
    assert line(-1200.0).endswith("; 1.2 s less task time ordering their records by partition")
    # Under a twentieth of a second in all it is not worth a word.
    assert line(30.0).endswith("write their shuffle to the new partition count")
