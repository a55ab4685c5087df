"""Issue 42, class 1: work and memory sized by the data, never by a number read from the log
or an option. Every command runs in the fuzz suites' memory-limited worker."""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from perfmodel.profile.eventlog import MAX_PROBLEMS_KEPT, LogProblem, ProblemList
from perfmodel.profile.eventlog_paths import _missing_numbers
from tests.fuzz_support import ROLLING_LOG, Worker, check_calm, shared_log, worker_fixture
from tests.unit.hostile_helpers import first, wordcount_events, write_events

worker = pytest.fixture(scope="module")(worker_fixture)


@pytest.fixture
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("sizes")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@given(st.lists(st.integers(1, 10**15), min_size=1, max_size=40, unique=True))
def test_missing_parts_are_runs_however_wide_the_gaps(numbers: list[int]) -> None:
    numbers.sort()
    runs = _missing_numbers(numbers, 1)
    assert len(runs) <= len(numbers)
    missing = sum(hi - lo + 1 for lo, hi in runs)
    assert missing == numbers[-1] - len(numbers)  # every number below the last, not present
    present = set(numbers)
    for lo, hi in runs:
        assert lo not in present and hi not in present and lo <= hi


def test_a_rolling_log_whose_parts_jump_by_a_billion(worker: Worker, scratch: Path) -> None:
    d = scratch / ROLLING_LOG.name
    shutil.copytree(ROLLING_LOG, d)
    parts = sorted(p for p in d.iterdir() if p.name.startswith("events_"))
    last = parts[-1]
    number = last.name.split("_")[1]
    last.rename(d / last.name.replace(f"events_{number}_", "events_1000000000_", 1))
    answer = worker.cli("diagnose", "--json", d)
    check_calm(answer, ("diagnose", "--json", d))
    assert answer["exit_code"] == 0
    quality = answer["json"]["data_quality"]
    assert quality["counts"]["missing_rolling_part"] == 1_000_000_000 - len(parts)
    assert "missing rolling part" in quality["headline"]
    assert len(answer["json"]["problems"]) < 10


# Each case decompresses and parses hundreds of thousands of lines (1–3 s): four cases
# cover the kinds of junk (bad UTF-8, JSON cut short, no JSON) without a minute of the suite.
@settings(max_examples=4)
@given(
    junk=st.sampled_from([b"x", b"{", b"\x00\x01", b"\xff\xfe", b'{"Event":', b"[[[["]),
    lines=st.integers(200_000, 600_000),
)
def test_junk_lines_are_counted_not_remembered(
    worker: Worker, tmp_path_factory: pytest.TempPathFactory, junk: bytes, lines: int
) -> None:
    """A small compressed file of junk lines: each is counted, only the first are kept."""
    path = tmp_path_factory.mktemp("junk") / "junk.zstd"
    events = write_events(path.with_suffix(".json"), wordcount_events()).read_bytes()
    path.write_bytes(zstandard.ZstdCompressor().compress(events + (junk + b"\n") * lines))
    answer = worker.cli("diagnose", "--json", path)
    check_calm(answer, ("diagnose", "--json", path))
    assert answer["exit_code"] == 0
    result = answer["json"]
    assert sum(result["data_quality"]["counts"].values()) == lines
    assert len(result["problems"]) <= MAX_PROBLEMS_KEPT + 1
    # A line of bad UTF-8 that is then no JSON either is two problems, one damaged line.
    note = re.search(r"and ([\d,]+) more problem", result["problems"][-1]["message"])
    assert note is not None
    assert int(note.group(1).replace(",", "")) >= lines - MAX_PROBLEMS_KEPT


@given(st.lists(st.sampled_from(["a.json", "b.json"]), min_size=1, max_size=3000))
@example(["a.json"] * 26)  # the first line past the bound has its two problems counted once
def test_problem_list_keeps_a_bounded_sample_and_counts_every_line(files: list[str]) -> None:
    problems = ProblemList(limit=50)
    for n, file in enumerate(files, 1):
        problems.append(LogProblem(file, n, "not valid JSON (JSON is malformed)"))
        problems.append(LogProblem(file, n, "not valid JSON (JSON is malformed)"))  # same line
    assert len(problems) == min(50, 2 * len(files))
    assert problems.counts == {"undecodable_line": len(files)}
    assert problems.line_problems == len(files)


@pytest.mark.parametrize(
    ("master", "cores"),
    [("local[2000000000]", 2_000_000_000), ("local-cluster[100000,100000,1024]", 4)],
)
def test_a_slot_count_read_from_the_log_sizes_nothing(
    worker: Worker, scratch: Path, master: str, cores: int
) -> None:
    events = wordcount_events()
    first(events, "EnvironmentUpdate")["Spark Properties"]["spark.master"] = master
    first(events, "ExecutorAdded")["Executor Info"]["Total Cores"] = cores
    log = write_events(scratch / "slots.json", events)
    for argv in (("diagnose", "--json", log), ("predict", "--json", log, "--cores", "2x")):
        answer = worker.cli(*argv)
        check_calm(answer, argv)
        assert answer["exit_code"] in (0, 2)
    answer = worker.cli("diagnose", "--json", log)
    quality = answer["json"]["data_quality"]
    assert quality["counts"]["out_of_range_value"] >= 1
    assert "out of range value" in quality["headline"]


def test_executors_times_cores_from_the_options_sizes_nothing(worker: Worker) -> None:
    log = shared_log("application_1538416563558_0014")  # YARN: executors apply
    argv = ("predict", "--json", log, "--executors", "100000", "--executor-cores", "10000")
    answer = worker.cli(*argv)
    check_calm(answer, argv)
    assert answer["exit_code"] == 0
    assert math.isfinite(answer["json"]["predicted_s"])
