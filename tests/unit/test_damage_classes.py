"""One test per class of damage, each built from a real log, asserting the exact counts of
its data quality (docs/damaged-logs.md says what is done with each kind)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard

import perfmodel
from perfmodel.errors import DecompressionLimitError, NotAnEventLogError
from perfmodel.profile.quality import DAMAGE_KINDS
from perfmodel.report import renderer
from perfmodel.spark.load import build_profile
from tests.cli_runner import invoke_cli
from tests.fuzz_support import PLAIN_LOG, ROLLING_LOG, ZSTD_LOG, shared_log

UNKNOWN = b'{"Event":"com.example.MyListenerEvent","Payload":[1,2,3]}'


def _lines() -> list[bytes]:
    return shared_log(PLAIN_LOG).read_bytes().split(b"\n")


def _write(tmp_path: Path, lines: list[bytes], name: str = PLAIN_LOG) -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines))
    return path


def _counts(path: Path, **kwargs: Any) -> dict[str, int]:
    quality = build_profile(path, **kwargs).quality
    return {k: quality.counts[k] for k in DAMAGE_KINDS}


def _only(**expected: int) -> dict[str, int]:
    return {k: expected.get(k, 0) for k in DAMAGE_KINDS}


def _task_end_lines(lines: list[bytes]) -> list[int]:
    return [
        i for i, line in enumerate(lines) if line.startswith(b'{"Event":"SparkListenerTaskEnd"')
    ]


def test_an_undamaged_log_reports_no_damage() -> None:
    assert _counts(shared_log(PLAIN_LOG)) == _only()


def test_lines_that_are_not_json_are_skipped_and_counted(tmp_path: Path) -> None:
    lines = _lines()
    for i in _task_end_lines(lines)[:3]:
        lines[i] = lines[i][: len(lines[i]) // 2]  # cut in the middle: not JSON any more
    assert _counts(_write(tmp_path, lines)) == _only(undecodable_line=3)


def test_invalid_utf8_is_replaced_and_counted_without_losing_the_event(tmp_path: Path) -> None:
    lines = _lines()
    start = next(i for i, line in enumerate(lines) if b'"App Name":"' in line)
    lines[start] = lines[start].replace(b'"App Name":"', b'"App Name":"\xff\xfe', 1)
    task = _task_end_lines(lines)[0]
    lines[task] = lines[task].replace(b'"Host":"', b'"Host":"\xc3(', 1)
    path = _write(tmp_path, lines)
    loaded = build_profile(path)
    assert _counts(path) == _only(undecodable_line=2)
    assert loaded.profile.app_name.startswith("\ufffd")  # the application start was kept
    original = build_profile(shared_log(PLAIN_LOG))
    assert len(loaded.profile.stages) == len(original.profile.stages)


def test_invalid_utf8_that_also_breaks_the_event_counts_the_line_once(tmp_path: Path) -> None:
    # Hypothesis found it: bad bytes inside a key ("Event") leave, once repaired, a line that
    # is still no event; it was counted by the repair and again by the decoder.
    lines = _lines()
    end = next(i for i, line in enumerate(lines) if b"SparkListenerApplicationEnd" in line)
    lines[end] = lines[end][:2] + b"\xff\xc3(" + lines[end][2:]
    assert _counts(_write(tmp_path, lines)) == _only(undecodable_line=1)


def test_a_400_digit_integer_is_an_out_of_range_value(tmp_path: Path) -> None:
    lines = _lines()
    i = _task_end_lines(lines)[0]
    lines[i] = re.sub(rb'"Finish Time":\d+', b'"Finish Time":' + b"9" * 400, lines[i], count=1)
    assert _counts(_write(tmp_path, lines)) == _only(out_of_range_value=1)
    result = invoke_cli(["diagnose", str(tmp_path / PLAIN_LOG), "--json"])
    assert result.exit_code == 0 and result.exception is None, result.output


def test_a_control_byte_near_the_start_does_not_make_the_log_binary(tmp_path: Path) -> None:
    lines = _lines()
    lines.insert(1, b"\x01\x02garbage")
    assert _counts(_write(tmp_path, lines)) == _only(undecodable_line=1)


def test_a_wrong_json_type_is_counted(tmp_path: Path) -> None:
    lines = _lines()
    i = _task_end_lines(lines)[0]
    event = json.loads(lines[i])
    event["Task Info"]["Launch Time"] = "yesterday"
    lines[i] = json.dumps(event, separators=(",", ":")).encode()
    assert _counts(_write(tmp_path, lines)) == _only(wrong_type=1)


def test_events_of_unknown_types_are_counted_but_do_not_change_the_answer(tmp_path: Path) -> None:
    lines = _lines()
    lines[5:5] = [UNKNOWN, UNKNOWN]
    path = _write(tmp_path, lines)
    quality = build_profile(path).quality
    assert {k: quality.counts[k] for k in DAMAGE_KINDS} == _only(unknown_event=2)
    assert not quality.damaged and not quality.affects_answer  # counted, not damage


def test_a_cut_off_last_event_is_a_truncated_tail(tmp_path: Path) -> None:
    data = shared_log(PLAIN_LOG).read_bytes().rstrip(b"\n")
    cut = data[: len(data) - 40]
    path = tmp_path / PLAIN_LOG
    path.write_bytes(cut)
    quality = build_profile(path).quality
    assert {k: quality.counts[k] for k in DAMAGE_KINDS} == _only(truncated_tail=1)
    assert not quality.affects_answer


def test_a_cut_off_compressed_log_is_a_truncated_tail(tmp_path: Path) -> None:
    data = shared_log(ZSTD_LOG).read_bytes()  # one zstd block: a cut loses every event
    path = tmp_path / ZSTD_LOG
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(NotAnEventLogError, match="cut off") as info:
        build_profile(path)
    assert "empty" not in str(info.value)
    rolling = _rolling(tmp_path)  # Spark's own zstd: many blocks, the cut loses the tail
    last = rolling / "events_3_wordcount-rolling.zstd"
    last.write_bytes(last.read_bytes()[:-1000])
    assert _counts(rolling) == _only(truncated_tail=1)


def test_garbage_after_a_compressed_stream_is_a_corrupt_stream(tmp_path: Path) -> None:
    path = tmp_path / ZSTD_LOG
    path.write_bytes(shared_log(ZSTD_LOG).read_bytes() + b"not zstd at all")
    assert _counts(path) == _only(corrupt_stream=1)


def _rolling(tmp_path: Path) -> Path:
    rolling = tmp_path / ROLLING_LOG.name
    shutil.copytree(ROLLING_LOG, rolling)
    return rolling


def test_a_missing_middle_part_of_a_rolling_log_is_counted(tmp_path: Path) -> None:
    rolling = _rolling(tmp_path)
    (rolling / "events_2_wordcount-rolling.zstd").unlink()
    loaded = build_profile(rolling)
    assert {k: loaded.quality.counts[k] for k in DAMAGE_KINDS} == _only(missing_rolling_part=1)
    assert loaded.quality.affects_answer
    assert any("part 2" in p.message for p in loaded.problems)


def test_the_decompression_cap_keeps_what_came_before_and_says_the_log_was_cut(
    tmp_path: Path,
) -> None:
    rolling = _rolling(tmp_path)
    loaded = build_profile(rolling, max_decompressed_bytes=3_000_000)
    assert {k: loaded.quality.counts[k] for k in DAMAGE_KINDS} == _only(capped_stream=1)
    assert loaded.profile.stages  # the events before the cap were analysed


def _zeros_zstd(path: Path, megabytes: int, prefix: bytes = b"") -> Path:
    compressor = zstandard.ZstdCompressor(level=1).compressobj()
    block = bytes(1 << 20)
    with open(path, "wb") as out:
        out.write(compressor.compress(prefix))
        for _ in range(megabytes):
            out.write(compressor.compress(block))
        out.write(compressor.flush())
    return path


def test_a_capped_stream_of_zeros_is_reported_as_cut_off_not_empty(tmp_path: Path) -> None:
    path = _zeros_zstd(tmp_path / "zeros.zstd", 64)
    with pytest.raises(DecompressionLimitError) as info:
        build_profile(path, max_decompressed_bytes=16 << 20)
    assert "empty" not in str(info.value) and "exceeds" in str(info.value)
    result = invoke_cli(["diagnose", str(path), "--max-decompressed-bytes", str(16 << 20)])
    assert result.exit_code == 2 and "empty" not in result.output


def test_zeros_after_real_events_are_one_undecodable_line(tmp_path: Path) -> None:
    data = shared_log(PLAIN_LOG).read_bytes()
    path = _zeros_zstd(tmp_path / "tail-zeros.zstd", 300, prefix=data)
    counts = _counts(path)
    assert counts["undecodable_line"] == 1 and counts["capped_stream"] == 0, counts


def test_profile_refuses_a_file_that_is_no_event_log(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"hello": "world"}\n' * 300)
    out = tmp_path / "bundle"
    result = invoke_cli(["profile", str(garbage), "--out", str(out)])
    assert result.exit_code == 2 and "not a Spark event log" in result.output
    assert not out.exists()


# -- the builder's kinds: counted while the DAG is built (dag/profile_builder.py) ----------


def _json_quality(path: Path) -> dict[str, Any]:
    result = invoke_cli(["diagnose", str(path), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert "data_quality" in payload, "diagnose --json has no data_quality yet"
    return payload


def test_a_task_end_repeated_three_times_counts_once(tmp_path: Path) -> None:
    lines = _lines()
    i = _task_end_lines(lines)[0]
    lines[i + 1 : i + 1] = [lines[i], lines[i]]
    payload = _json_quality(_write(tmp_path, lines))
    original = _json_quality(shared_log(PLAIN_LOG))
    assert payload["data_quality"]["counts"]["duplicate_event"] == 2
    assert payload["tasks"] == original["tasks"]
    assert payload["task_time_s"] == pytest.approx(original["task_time_s"])


def test_a_task_that_ends_before_it_starts_is_kept_and_counted(tmp_path: Path) -> None:
    lines = _lines()
    i = _task_end_lines(lines)[0]
    event = json.loads(lines[i])
    info = event["Task Info"]
    info["Launch Time"], info["Finish Time"] = info["Finish Time"] + 5000, info["Launch Time"]
    lines[i] = json.dumps(event, separators=(",", ":")).encode()
    payload = _json_quality(_write(tmp_path, lines))
    original = _json_quality(shared_log(PLAIN_LOG))
    assert payload["data_quality"]["counts"]["impossible_times"] == 1
    assert payload["tasks"] == original["tasks"]


# -- what the user sees --------------------------------------------------------------------


def _render(diagnosis: Any) -> str:
    buffer = io.StringIO()  # not a terminal: the text is laid out 120 columns wide
    renderer("text").diagnosis(diagnosis, buffer)
    return buffer.getvalue()


def test_damage_that_changes_the_answer_is_said_at_the_top(tmp_path: Path) -> None:
    rolling = _rolling(tmp_path)
    (rolling / "events_2_wordcount-rolling.zstd").unlink()
    text = _render(perfmodel.load(rolling).diagnose())
    first = text.splitlines()[0]
    assert first.startswith("warning: damaged log") and "missing rolling part" in first
    assert "Data quality" in text and "parts missing from a rolling log" in text


def test_a_megabyte_long_name_is_cut_for_display_and_never_markup(tmp_path: Path) -> None:
    lines = _lines()
    name = b"[bold]" + b"A" * 1_000_000
    lines = [line.replace(b'"App Name":"', b'"App Name":"' + name, 1) for line in lines]
    text = _render(perfmodel.load(_write(tmp_path, lines)).diagnose())
    assert text.startswith("[bold]AAA")
    head = text.split(" · Spark")[0]
    assert len(head) < 400 and re.search(r"\(1,000,0\d\d characters\)", head)


def test_a_deeply_nested_rdd_scope_is_damage_not_a_crash(tmp_path: Path) -> None:
    lines = _lines()
    i = next(i for i, line in enumerate(lines) if b'"Scope":"' in line)
    lines[i] = lines[i].replace(b'"Scope":"', b'"Scope":"' + b"[" * 200_000, 1)
    result = invoke_cli(["diagnose", str(_write(tmp_path, lines))])
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 2) and not crashed, result.output
