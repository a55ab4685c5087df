"""Damaged copies of real event logs through every command that reads a log.

Hypothesis draws the damage (bit flips, truncation anywhere, duplicated, reordered and
dropped lines, bad UTF-8, control bytes, 400-digit numbers, megabyte strings, wrong JSON
types in the fields the parser reads, damaged compressed data, missing and extra rolling
parts). Every command must stay calm (`fuzz_support.check_calm`: exit 0 or 2, never a
traceback, strict JSON) within the hang bound, and where the damage has a known count the
log's data quality must report exactly it. Profiles and the long local run: `fuzz_support`.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz_support import (
    PLAIN_LOG,
    ROLLING_LOG,
    SPARK1_LOG,
    ZSTD_LOG,
    Worker,
    check_calm,
    counts,
    shared_log,
    worker_fixture,
)
from tests.schema_paths import wrong_type_mutations

worker = pytest.fixture(scope="module")(worker_fixture)

HUGE_NUMBER = b"9" * 400


def run_every_command(w: Worker, log: Path, scratch: Path) -> list[dict[str, Any]]:
    """Every subcommand that reads a log, on ``log``; each answer checked for calm."""
    bundle = scratch / "bundle"
    shutil.rmtree(bundle, ignore_errors=True)
    calls: list[tuple[str | Path, ...]] = [
        ("diagnose", log),
        ("diagnose", log, "--json"),
        ("predict", log, "--cores", "2"),
        ("predict", log, "--executors", "2", "--mem", "2g", "--json"),
        ("predict", log, "--sweep", "cores=1,4", "--json"),
        ("profile", log, "--out", bundle),
    ]
    answers = []
    for argv in calls:
        answer = w.cli(*argv)
        check_calm(answer, argv)
        answers.append(answer)
    as_json = answers[1]
    if as_json["exit_code"] == 0:  # what diagnose --json reports is what reading counted
        counted = counts(w.quality(log))
        assert as_json["json"]["data_quality"]["counts"] == counted
    if answers[-1]["exit_code"] == 0:  # a bundle came out: the bundle readers too
        for argv in (("diagnose", bundle), ("flame", bundle), ("predict", bundle, "--cores", "1")):
            check_calm(w.cli(*argv), argv)
    return answers


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def _write(scratch: Path, name: str, data: bytes) -> Path:
    path = scratch / name
    path.write_bytes(data)
    return path


# -- plain JSON lines ----------------------------------------------------------------------


@st.composite
def damaged_lines(draw: st.DrawFn, base: bytes) -> tuple[bytes, dict[str, int]]:
    """A damaged copy of ``base`` and the damage counts it must be reported with (only the
    kinds whose count the damage fixes; others are free)."""
    lines = base.split(b"\n")
    body = [i for i, line in enumerate(lines) if line.strip()][1:]  # not the first event
    kind = draw(
        st.sampled_from(
            [
                "bit_flips",
                "truncate",
                "truncate_at_line",
                "duplicate",
                "reorder",
                "drop",
                "bad_utf8",
                "control_byte",
                "huge_number",
                "huge_string",
                "wrong_type",
            ]
        )
    )
    expect: dict[str, int] = {}
    if kind == "bit_flips":
        data = bytearray(base)
        for _ in range(draw(st.integers(1, 8))):
            pos = draw(st.integers(0, len(data) - 1))
            data[pos] ^= 1 << draw(st.integers(0, 7))
        return bytes(data), expect
    if kind in ("truncate", "truncate_at_line"):
        if kind == "truncate_at_line":
            cut = sum(len(line) + 1 for line in lines[: draw(st.integers(2, len(lines) - 1))])
        else:
            cut = draw(st.integers(1, len(base) - 1))
        data = base[:cut]
        last = data.rsplit(b"\n", 1)[-1]
        inside_a_line = bool(last.strip()) and base[cut : cut + 1] != b"\n"
        expect = {"truncated_tail": 1 if inside_a_line else 0}
        return data, expect
    picked = draw(st.lists(st.sampled_from(body), min_size=1, max_size=4, unique=True))
    if kind == "duplicate":
        for i in sorted(picked, reverse=True):
            lines.insert(i, lines[i])
    elif kind == "reorder":
        j = draw(st.sampled_from(body))
        lines[picked[0]], lines[j] = lines[j], lines[picked[0]]
    elif kind == "drop":
        for i in sorted(picked, reverse=True):
            del lines[i]
    elif kind == "bad_utf8":
        for i in picked:  # inside the first string value after the event name
            at = lines[i].find(b'":"', 12) + 3
            lines[i] = lines[i][:at] + b"\xff\xc3(" + lines[i][at:]
        expect = {"undecodable_line": len(picked)}
    elif kind == "control_byte":
        i = picked[0]
        at = draw(st.integers(1, max(1, len(lines[i]) - 1)))
        lines[i] = lines[i][:at] + b"\x01" + lines[i][at:]
    elif kind == "huge_number":
        tasks = [i for i in body if lines[i].startswith(b'{"Event":"SparkListenerTaskEnd"')]
        i = draw(st.sampled_from(tasks))
        lines[i] = re.sub(rb'"Finish Time":\d+', b'"Finish Time":' + HUGE_NUMBER, lines[i], count=1)
        expect = {"out_of_range_value": 1}
    elif kind == "huge_string":
        big = b"N" * draw(st.sampled_from([100_000, 1_000_000]))
        for key in (b'"App Name":"', b'"Stage Name":"', b'"Details":"'):
            lines = [line.replace(key, key + big) for line in lines]
    elif kind == "wrong_type":
        mutations = [m for i in body for m in wrong_type_mutations(lines[i], i)]
        i, damaged = draw(st.sampled_from(mutations))
        lines[i] = damaged
        expect = {"wrong_type": 1}
    return b"\n".join(lines), expect


def _plain(name: str) -> bytes:
    return shared_log(name).read_bytes()


@given(data=st.data())
def test_damaged_plain_logs(worker: Worker, scratch: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from([PLAIN_LOG, SPARK1_LOG]))
    damaged, expect = data.draw(damaged_lines(_plain(name)))
    log = _write(scratch, name, damaged)
    run_every_command(worker, log, scratch)
    _check_counts(worker.quality(log), expect)


def _check_counts(answer: dict[str, Any], expect: dict[str, int]) -> None:
    found = counts(answer)
    if not found:
        return  # refused as a whole (e.g. cut before its first event): the CLI said why
    for kind, n in expect.items():
        assert found[kind] == n, f"{kind}: expected {n}, reported {found[kind]} ({found})"


# -- compressed data -----------------------------------------------------------------------


@given(data=st.data())
def test_damaged_compressed_logs(worker: Worker, scratch: Path, data: st.DataObject) -> None:
    base = shared_log(ZSTD_LOG).read_bytes()
    how = data.draw(st.sampled_from(["bit_flips", "truncate", "garbage_tail", "zeros"]))
    if how == "bit_flips":
        damaged = bytearray(base)
        for _ in range(data.draw(st.integers(1, 6))):
            pos = data.draw(st.integers(0, len(base) - 1))
            damaged[pos] ^= 1 << data.draw(st.integers(0, 7))
        damaged = bytes(damaged)
    elif how == "truncate":
        damaged = base[: data.draw(st.integers(1, len(base) - 1))]
    elif how == "garbage_tail":
        damaged = base + data.draw(st.binary(min_size=1, max_size=200))
    else:
        damaged = base[: data.draw(st.integers(4, 400))] + bytes(data.draw(st.integers(1, 5000)))
    log = _write(scratch, ZSTD_LOG, damaged)
    run_every_command(worker, log, scratch)
    answer = worker.quality(log)
    assert "crash" not in answer, answer.get("traceback")
    if how == "truncate" and "quality" in answer:
        found = answer["quality"]["counts"]
        assert found["truncated_tail"] + found["corrupt_stream"] >= 1, found


# -- rolling logs --------------------------------------------------------------------------


@given(data=st.data())
def test_damaged_rolling_logs(worker: Worker, scratch: Path, data: st.DataObject) -> None:
    rolling = scratch / ROLLING_LOG.name
    shutil.rmtree(rolling, ignore_errors=True)
    shutil.copytree(ROLLING_LOG, rolling)
    parts = sorted(rolling.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
    how = data.draw(st.sampled_from(["missing_middle", "missing_first", "extra", "damaged"]))
    expect: dict[str, int] = {}
    if how == "missing_middle":
        parts[1].unlink()
        expect = {"missing_rolling_part": 1}
    elif how == "missing_first":
        parts[0].unlink()
        expect = {"missing_rolling_part": 1}
    elif how == "extra":
        n = data.draw(st.sampled_from([4, 6]))
        shutil.copyfile(parts[-1], rolling / f"events_{n}_wordcount-rolling.zstd")
        expect = {"missing_rolling_part": n - 4}
    else:
        victim = data.draw(st.sampled_from(parts))
        body = victim.read_bytes()
        victim.write_bytes(body[: data.draw(st.integers(0, len(body) - 1))])
    run_every_command(worker, rolling, scratch)
    _check_counts(worker.quality(rolling), expect)
