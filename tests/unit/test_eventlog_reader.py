"""Resolving user paths to event-log parts, and streaming their lines.

Real logs come from two places: the shared set (../shared/data/eventlogs, public logs; line
counts from its SOURCES.md) and tests/data/eventlogs (written by Spark 4.3 with every codec;
see its SOURCES.md and ../eventlogs_manifest.json). Layouts that need many files (attempts, rolling
directories, damage) are built in tmp_path from those real logs.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard

from perfmodel.errors import (
    AmbiguousEventLogError,
    DecompressionLimitError,
    EventLogNotFoundError,
    NotAnEventLogError,
    PerfmodelError,
)
from perfmodel.profile.eventlog import (
    EventLogSource,
    LogProblem,
    RawLine,
    iter_blocks,
    iter_line_batches,
    iter_lines,
    resolve_event_log,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "eventlogs"
MANIFEST: dict[str, Any] = json.loads((DATA.parent / "eventlogs_manifest.json").read_text())["logs"]
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "eventlogs"


def _shared_inventory() -> dict[str, int]:
    """``{entry name: events}`` from the inventory table of the shared SOURCES.md."""
    sources = SHARED / "SOURCES.md"
    if not sources.is_file():
        return {}
    out: dict[str, int] = {}
    events_col = None
    for row in sources.read_text().splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if "events" in cells and "file (in this folder)" in cells:
            events_col = cells.index("events")
        elif events_col is not None and cells and cells[0].isdigit():
            name = re.search(r"`([^`]+)`", cells[1]).group(1).rstrip("/")  # type: ignore[union-attr]
            out[name] = int(cells[events_col].replace(",", ""))
    return out


SHARED_EVENTS = _shared_inventory()


def read_all(source: EventLogSource, **kwargs: Any) -> tuple[list[RawLine], list[LogProblem]]:
    problems: list[LogProblem] = []
    lines = list(iter_lines(source, problems, **kwargs))
    return lines, problems


def read_path(path: Path | str, **kwargs: Any) -> tuple[list[RawLine], list[LogProblem]]:
    return read_all(resolve_event_log(path), **kwargs)


def plain_wordcount() -> bytes:
    """Decompressed text of a real Spark 4.3 log (checked against Spark in test_codecs)."""
    return (
        zstandard.ZstdDecompressor()
        .decompressobj(read_across_frames=True)
        .decompress((DATA / "wordcount.zstd").read_bytes())
    )


def jsonl(*objs: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


# --- the shared real logs -------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared event logs not found at {SHARED} (../shared is not checked out)")
    return SHARED


def test_shared_inventory_is_complete(shared: Path) -> None:
    on_disk = {p.name for p in shared.iterdir() if p.name != "SOURCES.md"}
    assert set(SHARED_EVENTS) == on_disk
    assert len(SHARED_EVENTS) == 15


@pytest.mark.parametrize("name", sorted(SHARED_EVENTS) or ["(shared data absent)"])
def test_shared_logs_stream_every_event(shared: Path, name: str) -> None:
    source = resolve_event_log(shared / name)
    lines, problems = read_all(source)
    assert problems == []
    assert len(lines) == SHARED_EVENTS[name]
    for line in lines[:3] + lines[-3:]:
        assert "Event" in json.loads(line.data)
    assert [ln.line for ln in lines if ln.file == lines[0].file][:2] == [1, 2]
    assert source.in_progress == name.endswith(".inprogress")


def test_shared_rolling_dir(shared: Path) -> None:
    source = resolve_event_log(shared / "eventlog_v2_local-1623876083964")
    assert source.app_key == "local-1623876083964"
    assert [p.name for p in source.parts] == [
        "events_1_local-1623876083964.zstd",
        "events_2_local-1623876083964.zstd",
    ]
    assert not source.in_progress
    lines, _ = read_all(source)
    assert json.loads(lines[0].data)["Event"] == "SparkListenerLogStart"
    assert json.loads(lines[-1].data)["Event"] == "SparkListenerApplicationEnd"
    assert lines[-1].file.endswith("events_2_local-1623876083964.zstd")


def test_shared_dir_holds_many_applications(shared: Path) -> None:
    with pytest.raises(AmbiguousEventLogError) as info:
        resolve_event_log(shared)
    message = str(info.value)
    assert "15 applications" in message and "spark2-eventlog.zstd" in message
    assert "SOURCES.md" not in message


# --- tests/data: real logs of every codec ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_codec_logs_stream(name: str) -> None:
    source = resolve_event_log(DATA / name)
    lines, problems = read_all(source)
    assert problems == []
    assert len(lines) == MANIFEST[name]["lines"]
    parsed = 0
    for line in lines:
        try:
            json.loads(line.data)
            parsed += 1
        except ValueError:
            assert line is lines[-1]  # only the cut-off end of the in-progress copy
    assert parsed == len(lines) - MANIFEST[name].get("bad_lines", 0)


def test_codec_logs_hold_the_same_events() -> None:
    sequences = []
    for name in ["wordcount.lz4", "wordcount.snappy", "wordcount.lzf", "wordcount.zstd"]:
        lines, _ = read_path(DATA / name)
        sequences.append(sorted(json.loads(ln.data)["Event"] for ln in lines))
    assert all(seq == sequences[0] for seq in sequences)


def test_real_rolling_dir_in_order() -> None:
    source = resolve_event_log(DATA / "eventlog_v2_wordcount-rolling")
    assert source.app_key == "wordcount-rolling" and not source.in_progress
    assert [p.name for p in source.parts] == [
        f"events_{i}_wordcount-rolling.zstd" for i in (1, 2, 3)
    ]
    lines, problems = read_all(source)
    assert problems == [] and len(lines) == MANIFEST["eventlog_v2_wordcount-rolling"]["lines"]
    assert [ln.line for ln in lines if ln.file.endswith("events_2_wordcount-rolling.zstd")][0] == 1


def test_real_in_progress_lz4() -> None:
    source = resolve_event_log(DATA / "wordcount-running.lz4.inprogress")
    assert source.in_progress and source.app_key == "wordcount-running"
    lines, problems = read_all(source)
    assert problems == []  # no end mark is normal while Spark writes
    assert len(lines) == MANIFEST["wordcount-running.lz4.inprogress"]["lines"]
    with pytest.raises(ValueError):
        json.loads(lines[-1].data)  # the last event is cut; the decoder will say so


# --- rolling directories -----------------------------------------------------------------------


def make_rolling(tmp_path: Path, indexes: list[int], status: str = "appstatus_app-1") -> Path:
    d = tmp_path / "eventlog_v2_app-1"
    d.mkdir()
    for i in indexes:
        (d / f"events_{i}_app-1").write_bytes(jsonl({"Event": "X", "part": i}))
    if status:
        (d / status).write_bytes(b"")
    return d


def test_rolling_parts_sort_numerically(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [10, 2, 1, 9])
    source = resolve_event_log(d)
    assert [p.name for p in source.parts] == [f"events_{i}_app-1" for i in (1, 2, 9, 10)]
    lines, _ = read_all(source)
    assert [json.loads(ln.data)["part"] for ln in lines] == [1, 2, 9, 10]
    assert source.app_key == "app-1" and source.attempt is None and not source.in_progress


def test_rolling_in_progress_marker(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2], status="appstatus_app-1.inprogress")
    assert resolve_event_log(d).in_progress


def test_rolling_part_or_marker_means_the_whole_dir(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2, 3])
    for p in (d / "events_2_app-1", d / "appstatus_app-1"):
        assert len(resolve_event_log(p).parts) == 3


def test_rolling_compaction_starts_at_the_last_compact_file(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2, 3, 4])
    (d / "events_3_app-1").rename(d / "events_3_app-1.compact")
    (d / "events_1_app-1.compact").write_bytes(jsonl({"Event": "old"}))
    source = resolve_event_log(d)
    assert [p.name for p in source.parts] == ["events_3_app-1.compact", "events_4_app-1"]


def test_renamed_rolling_dir_is_recognised(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2])
    renamed = d.rename(tmp_path / "my-copy")
    source = resolve_event_log(renamed)
    assert source.app_key == "app-1" and len(source.parts) == 2


def test_rolling_dir_without_parts(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [], status="appstatus_app-1.inprogress")
    with pytest.raises(NotAnEventLogError, match="without any events_"):
        resolve_event_log(d)


def test_rolling_dir_with_an_unreadable_part(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2, 3])
    (d / "events_2_app-1").write_bytes(b"\x00\x01garbage" * 10)
    lines, problems = read_path(d)
    assert [json.loads(ln.data)["part"] for ln in lines] == [1, 3]
    assert len(problems) == 1 and problems[0].file.endswith("events_2_app-1")
    assert "not a Spark event log" in problems[0].message


def test_rolling_dir_with_no_readable_part(tmp_path: Path) -> None:
    d = make_rolling(tmp_path, [1, 2])
    for p in d.glob("events_*"):
        p.write_bytes(b"\x00" * 10)
    with pytest.raises(NotAnEventLogError, match="None of the 2 parts"):
        read_path(d)


def test_legacy_spark_1_dir(tmp_path: Path) -> None:
    d = tmp_path / "app-20140101000000-0000"
    d.mkdir()
    (d / "EVENT_LOG_1").write_bytes(jsonl({"Event": "SparkListenerApplicationStart"}))
    (d / "SPARK_VERSION_1.2.0").write_bytes(b"")
    source = resolve_event_log(d)
    assert source.in_progress and source.app_key == "app-20140101000000-0000"
    (d / "APPLICATION_COMPLETE").write_bytes(b"")
    source = resolve_event_log(d)
    assert not source.in_progress
    assert len(read_all(source)[0]) == 1


# --- attempts ----------------------------------------------------------------------------------


@pytest.fixture
def attempts_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for attempt in (1, 2, 10):
        shutil.copyfile(DATA / "wordcount.lz4", d / f"application_1_0001_{attempt}.lz4")
    (d / "README.md").write_text("not a log\n")
    return d


def test_latest_attempt_by_default(attempts_dir: Path) -> None:
    source = resolve_event_log(attempts_dir)
    assert source.attempt == "10"  # numerically latest, not "2"
    assert source.app_key == "application_1_0001_10"
    assert source.other_attempts == ["1", "2"]
    assert source.parts == [attempts_dir / "application_1_0001_10.lz4"]
    assert source.path == attempts_dir


def test_explicit_attempt(attempts_dir: Path) -> None:
    source = resolve_event_log(attempts_dir, attempt="2")
    assert source.parts == [attempts_dir / "application_1_0001_2.lz4"]
    assert source.other_attempts == ["1", "10"]
    assert len(read_all(source)[0]) == 61


def test_app_id_prefix(attempts_dir: Path) -> None:
    source = resolve_event_log(attempts_dir / "application_1_0001")
    assert source.attempt == "10"
    source = resolve_event_log(str(attempts_dir / "application_1_0001"), attempt="1")
    assert source.parts == [attempts_dir / "application_1_0001_1.lz4"]


def test_pointing_at_one_attempt(attempts_dir: Path) -> None:
    source = resolve_event_log(attempts_dir / "application_1_0001_1.lz4")
    assert source.attempt == "1" and source.other_attempts == ["2", "10"]
    switched = resolve_event_log(attempts_dir / "application_1_0001_1.lz4", attempt="2")
    assert switched.parts == [attempts_dir / "application_1_0001_2.lz4"]


def test_missing_attempt(attempts_dir: Path) -> None:
    with pytest.raises(EventLogNotFoundError, match=r"No attempt 3 .*attempts found: 1, 2, 10"):
        resolve_event_log(attempts_dir, attempt="3")


def test_rolling_attempt_dirs(tmp_path: Path) -> None:
    for attempt in (1, 2):
        d = tmp_path / f"eventlog_v2_application_1_0001_{attempt}"
        d.mkdir()
        (d / f"events_1_application_1_0001_{attempt}").write_bytes(jsonl({"attempt": attempt}))
        (d / f"appstatus_application_1_0001_{attempt}").write_bytes(b"")
    source = resolve_event_log(tmp_path)
    assert source.attempt == "2" and source.other_attempts == ["1"]
    assert json.loads(read_all(source)[0][0].data) == {"attempt": 2}
    source = resolve_event_log(tmp_path / "eventlog_v2_application_1_0001_2", attempt="1")
    assert json.loads(read_all(source)[0][0].data) == {"attempt": 1}


def test_yarn_ids_without_attempt_are_not_split(shared: Path) -> None:
    source = resolve_event_log(shared / "application_1489705648216_1600")
    assert source.attempt is None and source.app_key == "application_1489705648216_1600"


def test_names_without_attempts(tmp_path: Path) -> None:
    (tmp_path / "spark_event_log_example").write_bytes(jsonl({"Event": "A"}))
    source = resolve_event_log(tmp_path / "spark_event_log_example")
    assert source.attempt is None and source.app_key == "spark_event_log_example"


def test_directory_with_several_applications(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "wordcount.lz4", tmp_path / "local-1.lz4")
    shutil.copyfile(DATA / "wordcount.zstd", tmp_path / "local-2.zstd")
    with pytest.raises(AmbiguousEventLogError) as info:
        resolve_event_log(tmp_path)
    assert "local-1.lz4" in str(info.value) and "local-2.zstd" in str(info.value)
    assert isinstance(info.value, PerfmodelError)


def test_same_attempt_twice_is_ambiguous(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "wordcount.lz4", tmp_path / "local-1.lz4")
    shutil.copyfile(DATA / "wordcount.zstd", tmp_path / "local-1.zstd")
    with pytest.raises(AmbiguousEventLogError, match="same application attempt"):
        resolve_event_log(tmp_path)


def test_directory_with_one_log_and_other_files(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "wordcount.snappy", tmp_path / "local-1.snappy")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / ".local-1.snappy.crc").write_bytes(b"crc")
    (tmp_path / "subdir").mkdir()
    source = resolve_event_log(tmp_path)
    assert source.parts == [tmp_path / "local-1.snappy"]


# --- not found, empty, not a log ----------------------------------------------------------------


def test_path_that_does_not_exist(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "wordcount.lz4", tmp_path / "local-1623876083964.lz4")
    with pytest.raises(EventLogNotFoundError, match="Did you mean .*local-1623876083964.lz4"):
        resolve_event_log(tmp_path / "local-1623876083946.lz4")
    with pytest.raises(EventLogNotFoundError, match="does not exist either"):
        resolve_event_log(tmp_path / "nope" / "local-1.lz4")


def test_app_id_without_codec_suffix_finds_the_file(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "wordcount.zstd", tmp_path / "local-1623876083964.zstd")
    source = resolve_event_log(tmp_path / "local-1623876083964")
    assert source.parts == [tmp_path / "local-1623876083964.zstd"]


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "local-1.lz4").write_bytes(b"")
    with pytest.raises(NotAnEventLogError, match="is empty"):
        resolve_event_log(tmp_path / "local-1.lz4")
    (tmp_path / "local-2.inprogress").write_bytes(b"")
    with pytest.raises(NotAnEventLogError, match="only just started"):
        resolve_event_log(tmp_path / "local-2.inprogress")


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(NotAnEventLogError, match="without Spark event logs"):
        resolve_event_log(tmp_path)


def test_binary_garbage(tmp_path: Path) -> None:
    (tmp_path / "app-1").write_bytes(bytes(range(256)) * 100)
    source = resolve_event_log(tmp_path / "app-1")
    with pytest.raises(NotAnEventLogError, match="not a Spark event log"):
        read_all(source)


def test_wrong_codec(tmp_path: Path) -> None:
    (tmp_path / "plain.lz4").write_bytes(plain_wordcount())
    lines, problems = read_path(tmp_path / "plain.lz4")
    assert len(lines) == 61 and problems == []
    (tmp_path / "random.zstd").write_bytes(bytes(range(1, 255)) * 50)
    with pytest.raises(NotAnEventLogError, match="named like a zstd-compressed event log"):
        read_path(tmp_path / "random.zstd")


# --- damage --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["wordcount.zstd", "wordcount.lz4", "wordcount.snappy"])
def test_truncated_stream(tmp_path: Path, name: str) -> None:
    raw = (DATA / name).read_bytes()
    cut = tmp_path / name
    cut.write_bytes(raw[: len(raw) // 2])
    lines, problems = read_path(cut)
    full = [ln for ln in plain_wordcount().split(b"\n") if ln]
    assert 4 <= len(lines) < 61
    for line in lines[:-1]:  # every complete line before the cut comes out intact
        json.loads(line.data)
    assert [ln.line for ln in lines] == list(range(1, len(lines) + 1))
    assert len(problems) == 1
    assert problems[0].file == str(cut) and "cut off" in problems[0].message
    assert problems[0].line in (None, len(lines))
    first_events = [json.loads(ln)["Event"] for ln in full[:3]]
    assert [json.loads(ln.data)["Event"] for ln in lines[:3]] == first_events


def test_lines_numbering_and_edges(tmp_path: Path) -> None:
    body = b'{"a":1}\n\n{"a":2}\r\n\r\n   \n{"a":3}'  # no newline at the end
    (tmp_path / "x.json").write_bytes(body)
    lines, problems = read_path(tmp_path / "x.json")
    assert [(ln.line, json.loads(ln.data)) for ln in lines] == [
        (1, {"a": 1}),
        (3, {"a": 2}),
        (6, {"a": 3}),
    ]
    assert lines[-1].data == b'{"a":3}'
    assert problems == []


def test_batches_are_the_same_for_any_chunk_size() -> None:
    source = resolve_event_log(DATA / "eventlog_v2_wordcount-rolling")

    def flat(chunk_size: int) -> list[tuple[str, int, bytes]]:
        out = []
        for batch in iter_line_batches(source, [], chunk_size=chunk_size):
            for i, data in enumerate(batch.lines):
                if data:
                    out.append((batch.file, batch.first_line + i, data))
        return out

    reference = flat(1 << 20)
    assert len(reference) == MANIFEST["eventlog_v2_wordcount-rolling"]["lines"]
    assert flat(4093) == reference
    assert flat(64 << 20) == reference


@pytest.mark.parametrize("chunk_size", [4093, 100_000, 1 << 20])
def test_blocks_number_lines_like_batches(tmp_path: Path, chunk_size: int) -> None:
    # Blank, whitespace-only and CRLF lines between real events, so line numbers only come
    # out right if every newline of every block is counted (on both sides of the size above
    # which blocks are counted with numpy).
    events = read_path(DATA / "wordcount.zstd")[0]
    body = bytearray()
    for i, ln in enumerate(events):
        body += ln.data + (b"\r\n" if i % 7 == 0 else b"\n")
        if i % 5 == 0:
            body += b"\n   \n" if i % 2 else b"\t\r\n"
    (tmp_path / "x.json").write_bytes(bytes(body))
    source = resolve_event_log(tmp_path / "x.json")

    def from_batches() -> list[tuple[int, bytes]]:
        return [
            (b.first_line + i, d)
            for b in iter_line_batches(source, [], chunk_size=chunk_size)
            for i, d in enumerate(b.lines)
            if d.strip()
        ]

    def from_blocks() -> list[tuple[int, bytes]]:
        out = []
        for block in iter_blocks(source, [], chunk_size=chunk_size):
            lines = bytes(block.data).split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            assert len(lines) == block.lines
            out += [(block.first_line + i, d) for i, d in enumerate(lines) if d.strip()]
        return out

    reference = from_batches()
    assert len(reference) == len(events)
    assert from_blocks() == reference


def test_over_long_line_is_skipped(tmp_path: Path) -> None:
    body = jsonl({"a": 1}) + b"x" * 100_000 + b"\n" + jsonl({"a": 2})
    (tmp_path / "x.json").write_bytes(body)
    problems: list[LogProblem] = []
    batches = iter_line_batches(
        resolve_event_log(tmp_path / "x.json"), problems, chunk_size=1000, max_line_bytes=10_000
    )
    kept = [(b.first_line + i, d) for b in batches for i, d in enumerate(b.lines) if d]
    assert kept == [(1, b'{"a": 1}'), (3, b'{"a": 2}')]
    assert len(problems) == 1 and problems[0].line == 2 and "longer than" in problems[0].message


def test_decompression_cap_spans_parts() -> None:
    """The cap counts all parts together; what was read before it is kept, and the cut is a
    problem of its own kind (the log is reported as cut off, not as complete or empty)."""
    source = resolve_event_log(DATA / "eventlog_v2_wordcount-rolling")
    lines, problems = read_all(source, max_decompressed_bytes=3_000_000)  # part 1: 2.0 MB
    capped = [p for p in problems if p.kind == "capped_stream"]
    assert len(capped) == 1 and "events_2_wordcount-rolling.zstd" in capped[0].file
    assert "max_decompressed_bytes" in capped[0].message
    assert lines and lines[0].file.endswith("events_1_wordcount-rolling.zstd")
    assert sum(len(line.data) + 1 for line in lines) <= 3_000_000


def test_tiny_cap() -> None:
    with pytest.raises(DecompressionLimitError, match="max_decompressed_bytes"):
        read_path(DATA / "wordcount.lzf", max_decompressed_bytes=1000)


def test_only_the_last_part_of_a_running_log_may_lack_its_end(tmp_path: Path) -> None:
    d = tmp_path / "eventlog_v2_app-1"
    d.mkdir()
    for i in (1, 2):
        shutil.copyfile(DATA / "wordcount-running.lz4.inprogress", d / f"events_{i}_app-1.lz4")
    (d / "appstatus_app-1.inprogress").write_bytes(b"")
    lines, problems = read_path(d)
    assert len(lines) == 2 * MANIFEST["wordcount-running.lz4.inprogress"]["lines"]
    assert [(Path(p.file).name, "end mark" in p.message) for p in problems] == [
        ("events_1_app-1.lz4", True)
    ]


def test_directory_scan_ignores_other_json(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"logs": {}}\n')
    (tmp_path / "local-1").write_bytes(jsonl({"Event": "SparkListenerLogStart"}))
    assert resolve_event_log(tmp_path).parts == [tmp_path / "local-1"]


def test_text_header_before_events_is_left_to_the_decoder(tmp_path: Path) -> None:
    """Vendor logs put header lines before the events; the reader passes them on as lines."""
    header = b"SPARK_VERSION 1.2.0\nCOMPRESSION_CODEC none\n"
    (tmp_path / "vendor.lz4").write_bytes(header + plain_wordcount())
    lines, problems = read_path(tmp_path / "vendor.lz4")
    assert problems == [] and len(lines) == 2 + 61
    assert lines[0].data == b"SPARK_VERSION 1.2.0" and lines[2].line == 3
