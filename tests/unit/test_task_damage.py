"""Damage inside task and stage events of a real log: counted in `quality`, never silent.

Each test edits one real event log (the k8s Spark 3.0 example, 200 tasks) the way damaged
logs come (a TaskEnd written three times, an end before its start, a 400-digit metric),
then checks the count and that every headline figure is what the undamaged log gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from perfmodel.analysis.diagnosis import diagnose
from perfmodel.dag.loaded import LoadedProfile
from perfmodel.spark.load import build_profile
from tests.conftest import shared_eventlogs

LOG = "example_spark_event_log.txt"


def _lines() -> list[str]:
    return (shared_eventlogs() / LOG).read_text().splitlines()


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "app-damaged"
    path.write_text("\n".join(lines) + "\n")
    return path


def _task_end_rows(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if '"Event":"SparkListenerTaskEnd"' in line]


def _headline(loaded: LoadedProfile) -> dict[str, Any]:
    d = diagnose(loaded).to_json()
    keep = ("tasks", "failed_tasks", "task_end_reasons", "task_time_s", "decomposition")
    out = {k: d[k] for k in keep}
    out["stages"] = [
        {k: s[k] for k in ("stage_id", "tasks_run", "task_time_s", "spark_metrics")}
        for s in d["stages"]
    ]
    out["critical_path"] = d["critical_path"]
    out["spark_metrics"] = d["spark_metrics"]
    return out


@pytest.fixture(scope="module")
def clean() -> tuple[LoadedProfile, dict[str, Any]]:
    loaded = build_profile(shared_eventlogs() / LOG)
    return loaded, _headline(loaded)


def test_the_clean_log_has_no_damage(clean: tuple[LoadedProfile, dict[str, Any]]) -> None:
    loaded, _ = clean
    assert not loaded.quality.damaged
    assert loaded.task_end_events == 200


def test_a_task_end_repeated_is_counted_once(
    tmp_path: Path, clean: tuple[LoadedProfile, dict[str, Any]]
) -> None:
    lines = _lines()
    row = _task_end_rows(lines)[5]
    lines[row + 1 : row + 1] = [lines[row], lines[row]]  # the line three times in a row
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["duplicate_event"] == 2
    assert loaded.task_end_events == 200
    assert _headline(loaded) == clean[1]


def test_a_task_end_repeated_at_the_end_of_the_log_is_counted_once(
    tmp_path: Path, clean: tuple[LoadedProfile, dict[str, Any]]
) -> None:
    lines = _lines()
    row = _task_end_rows(lines)[0]
    lines += [lines[row]] * 2
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["duplicate_event"] == 2
    assert _headline(loaded) == clean[1]


def test_a_task_that_ends_before_it_starts_is_kept_with_zero_length(tmp_path: Path) -> None:
    lines = _lines()
    row = _task_end_rows(lines)[3]
    event = json.loads(lines[row])
    info = event["Task Info"]
    info["Finish Time"] = info["Launch Time"] - 5000
    lines[row] = json.dumps(event)
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["impossible_times"] == 1
    assert loaded.task_end_events == 200
    table = loaded.profile.stages[(event["Stage ID"], 0)].table
    mine = table.task_id == info["Task ID"]
    assert table.finish_ms[mine].tolist() == table.launch_ms[mine].tolist()
    assert diagnose(loaded).tasks == 200


def test_a_stage_that_completes_before_it_is_submitted_is_counted(tmp_path: Path) -> None:
    lines = _lines()
    row = next(i for i, s in enumerate(lines) if '"Event":"SparkListenerStageCompleted"' in s)
    event = json.loads(lines[row])
    info = event["Stage Info"]
    info["Completion Time"] = info["Submission Time"] - 1000
    lines[row] = json.dumps(event)
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["impossible_times"] == 1
    stage = loaded.profile.stages[(info["Stage ID"], 0)]
    assert stage.complete_ms == stage.submit_ms


def test_numbers_outside_any_real_range_are_clamped_and_counted(
    tmp_path: Path, clean: tuple[LoadedProfile, dict[str, Any]]
) -> None:
    lines = _lines()
    rows = _task_end_rows(lines)
    huge = "9" * 400
    lines[rows[0]] = re.sub(
        r'"Executor Run Time":\d+', f'"Executor Run Time":{huge}', lines[rows[0]]
    )
    lines[rows[1]] = re.sub(r'"Bytes Read":\d+', '"Bytes Read":-77', lines[rows[1]], count=1)
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["out_of_range_value"] == 2
    assert loaded.task_end_events == 200
    d = diagnose(loaded)
    assert d.tasks == 200
    clean_stages = {s["stage_id"]: s for s in clean[1]["stages"]}
    for s in d.stages:  # the clamped run time is capped at the task's wall time
        assert s.task_time_s == pytest.approx(clean_stages[s.stage_id]["task_time_s"])


def test_a_huge_finish_time_does_not_stop_the_reading(tmp_path: Path) -> None:
    lines = _lines()
    row = _task_end_rows(lines)[-1]
    lines[row] = re.sub(r'"Finish Time":\d+', '"Finish Time":' + "9" * 400, lines[row])
    app_end = next(i for i, s in enumerate(lines) if "SparkListenerApplicationEnd" in s)
    del lines[app_end]  # so the log's clock comes from the tasks
    loaded = build_profile(_write(tmp_path, lines))
    assert loaded.quality.counts["out_of_range_value"] == 1
    assert loaded.task_end_events == 200


def test_rows_kept_in_small_chunks_give_the_same_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunk boundaries (and Resubmitted ends reaching back into earlier chunks) change
    nothing: the log with 50 Resubmitted ends, read with 7-row chunks."""
    from perfmodel.spark import task_ingest

    log = shared_eventlogs() / "tasks_executors_fail_compressed_eventlog.zstd"
    whole = diagnose(build_profile(log)).to_json()
    monkeypatch.setattr(task_ingest, "CHUNK_ROWS", 7)
    loaded = build_profile(log)
    assert loaded.task_end_reasons["Resubmitted"] == 50
    assert int(loaded.profile.task_table().resubmitted.sum()) == 50
    assert diagnose(loaded).to_json() == whole
