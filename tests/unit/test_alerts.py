"""Alerts (`perfmodel.analysis.alerts`, docs/alerts.md): each fires on a real Spark log made to
trip it (tests/data/alerts, written by make_logs.py) or on a real log whose numbers were
scaled past the threshold, and stays silent on one where it must not fire; every alert names
its knob, a suggested setting is one the plan shows to act, and a predicted alert's runtime
is the settings what-if's (the same as ``predict --conf``)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import zstandard

from perfmodel.analysis import Analysis, load
from perfmodel.analysis.alerts import (
    GC_SHARE,
    KINDS,
    LARGE_BROADCAST,
    LARGE_PARTITION,
    Alert,
    quantify_alerts,
    size_setting,
)
from perfmodel.fleet.analyse import analyse_log
from perfmodel.fleet.discover import LogRef
from perfmodel.report.html.data import application_page
from tests.cli_runner import invoke_cli

DATA = Path(__file__).resolve().parents[1] / "data"
ALERTS = DATA / "alerts"
SETTINGS = DATA / "settings"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "eventlogs"

_CACHE: dict[Path, Analysis] = {}


def analysed(path: Path) -> Analysis:
    """One analysis per log for the whole session (its diagnosis and alerts computed once)."""
    if path not in _CACHE:
        analysis = load(path)
        analysis.diagnose()
        _CACHE[path] = analysis
    return _CACHE[path]


def kinds(path: Path) -> dict[str, list[Alert]]:
    out: dict[str, list[Alert]] = {}
    for alert in analysed(path).alerts():
        out.setdefault(alert.kind, []).append(alert)
    return out


def rewrite(src: Path, dst: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a real log with ``edit`` applied to every event (a generated log)."""
    raw = zstandard.ZstdDecompressor().stream_reader(src.open("rb")).read()
    lines = []
    for line in raw.decode().splitlines():
        event = json.loads(line)
        edit(event)
        lines.append(json.dumps(event))
    dst.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    return dst


# -- each alert: fires where it must, not where it must not ------------------------------------


def test_too_few_tasks_set_by_a_setting_is_predicted() -> None:
    found = kinds(ALERTS / "tasks.zstd")["too-few-tasks"]
    by_setting = [a for a in found if a.knob_kind == "setting"]
    assert by_setting, [a.text for a in found]
    alert = by_setting[0]
    assert alert.knob == "spark.sql.shuffle.partitions"
    assert int(alert.settings["spark.sql.shuffle.partitions"]) > 2
    assert alert.predicted_s is not None and alert.baseline_s is not None
    assert alert.predicted_low_s is not None and alert.predicted_high_s is not None
    assert alert.predicted_low_s <= alert.predicted_s <= alert.predicted_high_s


def test_too_few_tasks_set_by_the_code_names_the_call_and_predicts_the_edit() -> None:
    """The code's repartition(1) is the knob; the suggested count is predicted as the code
    edit (``stage.ID.partitions``), the 54 s one-task stage split over the 4 slots."""
    found = kinds(ALERTS / "tasks.zstd")["too-few-tasks"]
    by_code = [a for a in found if a.knob_kind == "code"]
    assert by_code, [a.text for a in found]
    alert = by_code[0]
    assert "repartition(1)" in alert.knob
    (sid,) = alert.stage_ids
    want = int(alert.settings[f"stage.{sid}.partitions"])
    assert want > 1 and alert.suggestion == f"repartition({want}) instead"
    assert alert.predicted_s is not None and alert.baseline_s is not None, alert.not_predicted
    assert alert.predicted_s < alert.baseline_s  # four slots busy instead of one
    assert alert.predicted_low_s is not None and alert.predicted_high_s is not None
    assert alert.predicted_low_s <= alert.predicted_s <= alert.predicted_high_s
    assert "Predicted:" in alert.text


def test_tiny_tasks_fire_on_600_small_partitions_only() -> None:
    alert = kinds(ALERTS / "tiny.zstd")["tiny-tasks"][0]
    assert alert.knob == "spark.sql.shuffle.partitions"
    assert 0 < int(alert.settings["spark.sql.shuffle.partitions"]) < 600
    assert alert.predicted_s is not None
    assert "tiny-tasks" not in kinds(ALERTS / "tasks.zstd")
    assert "too-few-tasks" not in kinds(ALERTS / "tiny.zstd")


def test_too_many_tasks_fires_and_not_on_a_few_long_tasks() -> None:
    """skew.zstd's query 0 ran 16 tasks of about 150 ms on 2 slots; its query set the
    partition count itself, so the knob is that line of code."""
    alert = kinds(SETTINGS / "skew.zstd")["too-many-tasks"][0]
    assert "16 tasks" in alert.evidence
    assert alert.knob_kind == "code" and "spark.sql.shuffle.partitions" in alert.knob
    assert "too-many-tasks" not in kinds(ALERTS / "tasks.zstd")


def test_small_files_written_by_an_aggregation_is_a_shuffle_setting() -> None:
    alert = kinds(ALERTS / "files.zstd")["small-files-written"][0]
    assert "300 files" in alert.evidence
    assert alert.knob == "spark.sql.shuffle.partitions"
    assert alert.settings == {"spark.sql.shuffle.partitions": "1"}
    assert alert.predicted_s is not None
    # Six files are not many: the settings logs' writes stay silent.
    assert "small-files-written" not in kinds(SETTINGS / "files.zstd")


def test_small_files_read_is_the_data_not_a_setting() -> None:
    alert = kinds(ALERTS / "files_read.zstd")["small-files-read"][0]
    assert "300" in alert.evidence and alert.knob_kind == "data"
    assert alert.predicted_s is None and "files" in alert.not_predicted
    assert "small-files-read" not in kinds(SETTINGS / "files.zstd")


def test_broadcastable_join_by_the_session_setting_is_predicted() -> None:
    alert = kinds(ALERTS / "joins.zstd")["broadcastable-join"][0]
    assert alert.knob == "spark.sql.autoBroadcastJoinThreshold"
    assert alert.predicted_s is not None
    assert "broadcastable-join" not in kinds(ALERTS / "tasks.zstd")


def test_broadcastable_join_the_query_disabled_is_its_code() -> None:
    """The query set the threshold itself (spark.conf.set): --conf would not reach it."""
    alert = kinds(SETTINGS / "skew.zstd")["broadcastable-join"][0]
    assert alert.knob_kind == "code"
    assert "spark.conf.set" in alert.knob and alert.settings == {}
    assert "itself" in alert.not_predicted


def test_skew_in_a_sort_merge_join_suggests_aqe_skew_join() -> None:
    alert = kinds(ALERTS / "joins.zstd")["skew"][0]
    assert alert.knob_kind == "setting"
    assert alert.settings.get("spark.sql.adaptive.skewJoin.enabled") == "true"
    assert "skew" not in kinds(ALERTS / "tiny.zstd")


def test_nested_loop_join_over_many_pairs() -> None:
    alert = kinds(ALERTS / "joins.zstd")["nested-loop-join"][0]
    assert "Cartesian" in alert.where or "NestedLoop" in alert.where
    assert alert.knob_kind == "code" and alert.predicted_s is None
    assert "nested-loop-join" not in kinds(SETTINGS / "plans.zstd")


def test_spill_fires_with_its_partitions_setting() -> None:
    alert = kinds(ALERTS / "memory.zstd")["spill"][0]
    assert alert.knob.startswith("spark.sql.shuffle.partitions")
    assert int(alert.settings["spark.sql.shuffle.partitions"]) > 2
    assert "spill" not in kinds(ALERTS / "tiny.zstd")


def test_large_partition_on_a_generated_log(tmp_path: Path) -> None:
    """tasks.zstd's single task after repartition(1) made to read 3 GiB."""
    base = analysed(ALERTS / "tasks.zstd")
    one = next(
        s for s in base.diagnose().stages if s.tasks_run == 1 and s.shuffle_read_bytes > 1 << 20
    )
    factor = math.ceil(3 * (1 << 30) / one.shuffle_read_bytes)

    def edit(event: dict[str, Any]) -> None:
        if event["Event"] == "SparkListenerTaskEnd" and event["Stage ID"] == one.stage_id:
            metrics = event["Task Metrics"]["Shuffle Read Metrics"]
            for name in ("Remote Bytes Read", "Local Bytes Read"):
                metrics[name] = metrics[name] * factor

    log = rewrite(ALERTS / "tasks.zstd", tmp_path / "large.zstd", edit)
    found = kinds(log)["large-partition"]
    assert found[0].stage_ids == [one.stage_id]
    assert "GiB" in found[0].evidence
    assert one.shuffle_read_bytes < LARGE_PARTITION
    assert "large-partition" not in kinds(ALERTS / "tasks.zstd")


def _broadcast_ids(path: Path) -> set[int]:
    """Accumulator ids of the BroadcastExchange nodes' ``data size`` metrics."""
    ids: set[int] = set()
    raw = zstandard.ZstdDecompressor().stream_reader(path.open("rb")).read()
    for line in raw.decode().splitlines():
        if "BroadcastExchange" not in line:
            continue
        stack = [json.loads(line).get("sparkPlanInfo") or {}]
        while stack:
            node = stack.pop()
            if node.get("nodeName") == "BroadcastExchange":
                ids |= {m["accumulatorId"] for m in node["metrics"] if m["name"] == "data size"}
            stack.extend(node.get("children", []))
    return ids


def test_large_broadcast_on_a_generated_log(tmp_path: Path) -> None:
    """tasks.zstd's broadcast join with its broadcast's size scaled to 2 GiB."""
    ids = _broadcast_ids(ALERTS / "tasks.zstd")
    assert ids

    def edit(event: dict[str, Any]) -> None:
        if event["Event"].endswith("SparkListenerDriverAccumUpdates"):
            event["accumUpdates"] = [
                [i, 2 * LARGE_BROADCAST if i in ids else v] for i, v in event["accumUpdates"]
            ]

    log = rewrite(ALERTS / "tasks.zstd", tmp_path / "broadcast.zstd", edit)
    alert = kinds(log)["large-broadcast"][0]
    assert "2.0 GiB" in alert.evidence and alert.query_id is not None
    assert alert.knob_kind in ("setting", "code")
    assert "large-broadcast" not in kinds(ALERTS / "tasks.zstd")


def test_gc_on_a_generated_log(tmp_path: Path) -> None:
    """tiny.zstd with each task's GC time made half its run time."""

    def edit(event: dict[str, Any]) -> None:
        if event["Event"] == "SparkListenerTaskEnd" and event.get("Task Metrics"):
            m = event["Task Metrics"]
            m["JVM GC Time"] = m["Executor Run Time"] // 2

    log = rewrite(ALERTS / "tiny.zstd", tmp_path / "gc.zstd", edit)
    alert = kinds(log)["gc"][0]
    assert alert.knob.startswith("spark.driver.memory")  # local mode: the driver's heap
    assert alert.predicted_s is not None or alert.not_predicted
    assert analysed(ALERTS / "tiny.zstd").diagnose().shares["gc"] < GC_SHARE
    assert "gc" not in kinds(ALERTS / "tiny.zstd")


def test_memory_underused_on_a_cluster_log() -> None:
    log = SHARED / "eventlog_4nodes_8cores_dynamic_alloc.zstd"
    if not log.exists():
        pytest.skip(f"shared event logs not found at {SHARED} (../shared is absent)")
    alert = kinds(log)["memory-underused"][0]
    assert alert.knob.startswith("spark.executor.memory")
    value = alert.settings["spark.executor.memory"]
    assert value.endswith("m") and int(value[:-1]) * (1 << 20) < 20 * (1 << 30)
    # Local mode: the driver's heap is not an executor paid for.
    assert "memory-underused" not in kinds(ALERTS / "tiny.zstd")


def test_memory_overused_needs_pressure(tmp_path: Path) -> None:
    """Peak heap near the maximum alone is a JVM between collections; with spill it alerts."""
    assert "memory-overused" not in kinds(ALERTS / "tiny.zstd")
    analysis = analysed(ALERTS / "memory.zstd")
    heap = analysis.profile.resources.driver_memory_bytes
    assert heap

    def edit(event: dict[str, Any]) -> None:
        if event["Event"] == "SparkListenerTaskEnd" and event.get("Task Executor Metrics"):
            event["Task Executor Metrics"]["JVMHeapMemory"] = int(heap * 0.95)

    log = rewrite(ALERTS / "memory.zstd", tmp_path / "heap.zstd", edit)
    alert = kinds(log)["memory-overused"][0]
    assert alert.knob.startswith("spark.driver.memory")


# -- what every alert promises -----------------------------------------------------------------

ALL_LOGS = (
    sorted(ALERTS.glob("*.zstd"))
    + sorted(SETTINGS.glob("*.zstd"))
    + (sorted(p for p in SHARED.iterdir() if p.name != "SOURCES.md") if SHARED.is_dir() else [])
)


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name)
def test_every_alert_names_a_knob_and_a_prediction_or_a_reason(path: Path) -> None:
    analysis = analysed(path)
    for alert in analysis.alerts():
        assert alert.kind in KINDS
        assert alert.where and alert.evidence and alert.knob and alert.suggestion
        assert (alert.predicted_s is not None) != bool(alert.not_predicted), alert.text
        if alert.settings:
            # A suggested setting acts on the alert's stage or join by Spark's rules.
            assert analysis._alert_check(alert.settings, alert) is None, alert.text
        if alert.knob_kind == "setting" and alert.query_id is not None:
            own = analysis.partitioning.query_modified.get(alert.query_id, frozenset())
            assert not set(alert.settings) & own, alert.text


def test_an_alert_prediction_is_predict_conf() -> None:
    """The alert's runtime is what ``predict --conf`` prints for the same settings."""
    alert = kinds(ALERTS / "tiny.zstd")["tiny-tasks"][0]
    args = ["predict", str(ALERTS / "tiny.zstd"), "--json"]
    for key, value in alert.settings.items():
        args += ["--conf", f"{key}={value}"]
    result = invoke_cli(args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["predicted_s"] == pytest.approx(alert.predicted_s)


def test_quantify_checks_candidates_and_bounds_replays() -> None:
    """The first candidate the plan accepts is suggested; one none act on says why; only
    ``max_predicted`` distinct settings are replayed."""
    made = [
        Alert("spill", f"stage {i}", "e.", "k", "setting", "s", 10.0 - i, candidates=c)
        for i, c in enumerate(
            [
                [{"a": "1"}, {"b": "2"}],
                [{"a": "1"}],
                [{"c": "3"}],
                [{"d": "4"}],
            ]
        )
    ]
    replayed: list[dict[str, str]] = []

    def check(settings: Any, alert: Alert) -> str | None:
        return "no effect" if "b" in settings or "a" in settings and alert.where == "x" else None

    def predict(settings: Any) -> Any:
        replayed.append(dict(settings))
        return analysed(ALERTS / "tiny.zstd").predict()

    quantify_alerts(made, check, predict, max_predicted=2)
    assert replayed == [{"a": "1"}, {"c": "3"}]
    assert made[0].settings == {"a": "1"} and made[1].predicted_s == made[0].predicted_s
    assert made[3].predicted_s is None and "predict --conf d=4" in made[3].not_predicted


def _timed(seconds: dict[str, float], replayed: list[dict[str, str]]) -> Callable[[Any], Any]:
    """A predict whose runtime for each setting's value is given (a real prediction's)."""
    base = analysed(ALERTS / "tiny.zstd").predict()

    def predict(settings: Any) -> Any:
        replayed.append(dict(settings))
        return replace(base, predicted_s=seconds[next(iter(settings.values()))])

    return predict


def _alert(where: str, impact: float, settings: dict[str, str], kind: str = "setting") -> Alert:
    stage = int(where.split()[1])
    return Alert("tiny-tasks", where, "e.", "k", kind, "s", impact, [stage], candidates=[settings])


def test_alerts_on_one_setting_get_the_value_predicted_fastest() -> None:
    """Two stages' alerts that give one key different values both suggest the value whose
    replay is fastest and say which were compared; other alerts, and code edits, are
    their own."""
    made = [
        _alert("stage 2", 10.0, {"k": "72"}),
        _alert("stage 6", 9.5, {"k": "72"}),
        _alert("stage 3", 9.0, {"k": "27"}),
        _alert("stage 4", 8.0, {"other": "1"}),
        _alert("stage 5", 7.0, {"stage.5.partitions": "4"}, kind="code"),
    ]
    replayed: list[dict[str, str]] = []
    predict = _timed({"72": 21.1, "27": 19.0, "1": 30.0, "4": 25.0}, replayed)
    quantify_alerts(made, lambda settings, alert: None, predict)
    assert replayed == [{"k": "72"}, {"k": "27"}, {"other": "1"}]
    assert made[0].settings == made[1].settings == made[2].settings == {"k": "27"}
    assert made[0].suggestion == "k=27" and made[1].predicted_s == made[2].predicted_s == 19.0
    for alert in made[:3]:
        assert "stages 2, 3 and 6 get one value" in alert.shared
        assert "(72: 21.1 s, 27: 19.0 s), 27 is predicted fastest" in alert.shared
        assert alert.shared in alert.text and alert.as_dict()["shared"] == alert.shared
    assert made[3].shared == "" and made[3].as_dict()["shared"] is None
    assert made[3].predicted_s == 30.0
    assert made[4].shared == "" and made[4].predicted_s is None  # past the replay budget


def test_one_value_within_the_replay_budget() -> None:
    """Values past the replay budget are not compared, and the note says so; the most
    impactful alert's value is replayed first."""
    made = [_alert("stage 2", 10.0, {"k": "72"}), _alert("stage 3", 9.0, {"k": "27"})]
    replayed: list[dict[str, str]] = []
    quantify_alerts(
        made, lambda s, a: None, _timed({"72": 21.1, "27": 19.0}, replayed), max_predicted=1
    )
    assert replayed == [{"k": "72"}]
    assert made[1].settings == {"k": "72"} and made[1].predicted_s == 21.1
    assert "(72: 21.1 s; 1 more not replayed), 72 is predicted fastest" in made[1].shared


def test_two_stages_under_one_setting_get_the_faster_value() -> None:
    """On a real log whose two shuffles both follow spark.sql.shuffle.partitions, each
    stage's tiny-tasks alert suggests the same value: of the two they would suggest alone,
    the one ``predict --conf`` finds faster."""
    log = ALERTS / "two_shuffles.zstd"
    tiny = kinds(log)["tiny-tasks"]
    key = "spark.sql.shuffle.partitions"
    assert len(tiny) == 2 and tiny[0].settings == tiny[1].settings
    compared = re.findall(r"(\d+): [\d.]+ s", tiny[0].shared)
    assert len(set(compared)) == 2, tiny[0].shared
    times = {v: analysed(log).predict_settings({key: v}).predicted_s for v in compared}
    best = min(times, key=lambda v: times[v])
    assert tiny[0].settings == {key: best} and tiny[1].suggestion == f"{key}={best}"
    assert tiny[0].predicted_s == tiny[1].predicted_s == pytest.approx(times[best])


def test_size_setting_is_a_spark_size() -> None:
    assert size_setting(10 * (1 << 20)) == "10m"
    assert size_setting(10 * (1 << 20) + 1) == "11m"
    assert size_setting(3 << 30) == "3g"
    assert size_setting(100) == "100b"


# -- where alerts appear -------------------------------------------------------------------------


def test_alerts_in_diagnose_text_and_json() -> None:
    text = invoke_cli(["diagnose", str(ALERTS / "tiny.zstd")])
    assert text.exit_code == 0, text.output
    assert "Alerts" in text.output and "tiny-tasks" in text.output
    assert "spark.sql.shuffle.partitions" in text.output
    out = invoke_cli(["diagnose", str(ALERTS / "tiny.zstd"), "--json"])
    alerts = json.loads(out.output)["alerts"]
    assert alerts[0]["kind"] == "tiny-tasks" and alerts[0]["predicted_s"] > 0
    assert alerts[0]["settings"] and alerts[0]["not_predicted"] is None


def test_alerts_in_the_html_report_and_fleet_findings() -> None:
    analysis = analysed(ALERTS / "tiny.zstd")
    page = application_page(analysis)
    section = next(s for s in page.sections if s.id == "alerts")
    assert any(i.startswith("Tiny tasks in stage") for i in section.data["items"])
    path = ALERTS / "tiny.zstd"
    stat = path.stat()
    rows = analyse_log(LogRef(str(path), stat.st_size, stat.st_mtime_ns))
    alert_rows = [r for r in rows["findings"] if r.get("alert")]
    assert alert_rows and alert_rows[0]["alert"] == "tiny-tasks"
    assert alert_rows[0]["predicted_s"] > 0 and alert_rows[0]["knob"]
