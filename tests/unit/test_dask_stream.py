"""Reading Dask task-stream files: every record kind, and damage counted, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.dask.stream import DaskStream, add_lines, read_stream
from tests.unit.dask_streams import T0, two_stage


def test_reads_every_record_of_a_stream(tmp_path: Path) -> None:
    two_stage().write(tmp_path)
    stream = read_stream(tmp_path)
    assert not stream.problems and not stream.quality.damaged
    (scheduler,) = stream.schedulers
    assert scheduler.address == "tcp://127.0.0.1:9000" and scheduler.version == "2026.8.0"
    assert list(scheduler.workers) == ["tcp://127.0.0.1:40001"]
    assert scheduler.workers["tcp://127.0.0.1:40001"].nthreads == 2
    assert len(scheduler.graphs) == 1 and len(scheduler.tasks) == 3
    assert scheduler.closed_t == T0 + 1.5
    (client,) = stream.clients
    assert client.client_id == "Client-1" and len(client.submits) == 1
    (worker,) = stream.workers
    assert worker.worker == "tcp://127.0.0.1:40001" and worker.pid == 20
    assert sorted(v for vs in worker.cpu_s.values() for v in vs) == [0.1, 0.2, 0.2]
    assert stream.lines == stream.records


def _read(kind: str, lines: list[bytes]) -> DaskStream:
    out = DaskStream()
    add_lines(kind, f"{kind}-1.jsonl", lines, out)
    return out


GOOD_TASK = {
    "e": "task",
    "key": "x-1",
    "prefix": "x",
    "status": "memory",
    "worker": "w",
    "startstops": [{"action": "compute", "start": 1.0, "stop": 2.0}],
    "t": 2.0,
}


def test_damage_is_counted_by_kind() -> None:
    lines = [
        json.dumps(GOOD_TASK).encode() + b"\n",
        b"{not json\n",
        json.dumps({**GOOD_TASK, "startstops": "soon"}).encode() + b"\n",
        json.dumps({"e": "mystery", "t": 1}).encode() + b"\n",
        json.dumps({**GOOD_TASK, "t": -5.0}).encode() + b"\n",
        json.dumps({"e": "thread-cpu", "key": "x", "s": 1.0, "t": 1.0}).encode() + b"\n",
        b'{"e": "task", "key": "x-2", "pre',
    ]
    out = _read("scheduler", lines)
    counts = {k: v for k, v in out.quality.counts.items() if v}
    assert counts == {
        "undecodable_line": 1,
        "wrong_type": 1,
        "unknown_event": 2,  # an unknown tag; a worker record in a scheduler file
        "out_of_range_value": 1,
        "truncated_tail": 1,
    }
    assert [p.line for p in out.problems] == [2, 3, 4, 5, 6, 7]
    assert len(out.schedulers[0].tasks) == 1


def test_a_task_ending_before_it_starts_is_kept_and_counted() -> None:
    bad = {**GOOD_TASK, "startstops": [{"action": "compute", "start": 3.0, "stop": 2.0}]}
    out = _read("scheduler", [json.dumps(bad).encode() + b"\n"])
    assert out.quality.counts["impossible_times"] == 1
    assert len(out.schedulers[0].tasks) == 1


def test_lock_probes_are_read_and_bad_ones_counted() -> None:
    good = {"e": "lock", "t0": 1.0, "at": [0, 10], "lag_us": [120, 5100], "t": 2.0}
    lines = [
        json.dumps(good).encode() + b"\n",
        json.dumps({**good, "lag_us": [120]}).encode() + b"\n",  # one lag for two probes
        json.dumps({**good, "lag_us": [120, -1]}).encode() + b"\n",
        json.dumps({**good, "t0": -3.0}).encode() + b"\n",
    ]
    out = _read("worker", lines)
    assert [p.line for p in out.problems] == [2, 3, 4]
    assert out.quality.counts["out_of_range_value"] == 3
    assert [(p.at, p.lag_us) for p in out.workers[0].probes] == [([0, 10], [120, 5100])]


def test_a_file_of_unknown_kind_is_reported() -> None:
    out = _read("other", [b"{}\n"])
    assert out.quality.counts["unknown_event"] == 1 and not out.schedulers


_record = st.fixed_dictionaries(
    {"e": st.sampled_from(["task", "graph", "done", "thread-cpu", "lock", "submit", "x", "close"])},
    optional={
        "t": st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=3)),
        "key": st.one_of(st.text(max_size=5), st.integers()),
        "s": st.floats(allow_nan=True, allow_infinity=True),
        "keys": st.lists(st.text(max_size=3), max_size=3),
        "tasks": st.lists(st.text(max_size=3), max_size=3),
        "startstops": st.lists(
            st.fixed_dictionaries(
                {"action": st.text(max_size=8), "start": st.floats(), "stop": st.floats()}
            ),
            max_size=2,
        ),
        "prefix": st.text(max_size=3),
        "status": st.text(max_size=3),
        "worker": st.text(max_size=3),
        "t0": st.one_of(st.floats(allow_nan=True), st.integers()),
        "at": st.lists(st.integers(-5, 2000), max_size=3),
        "lag_us": st.lists(st.integers(-5, 9000), max_size=3),
    },
)
_line = st.one_of(
    _record.map(lambda r: json.dumps(r).encode() + b"\n"),
    st.binary(max_size=40),
    _record.map(lambda r: json.dumps(r).encode()[: max(1, len(json.dumps(r)) // 2)]),
)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["scheduler", "worker", "client"]), lines=st.lists(_line, max_size=12))
def test_any_lines_are_read_or_counted_never_fatal(kind: str, lines: list[bytes]) -> None:
    """Whatever the bytes, reading finishes, and every non-blank line is either a record
    or one counted problem."""
    out = _read(kind, lines)
    nonblank = sum(1 for line in lines if line.strip())
    line_problems = [p for p in out.problems if p.line is not None]
    assert out.records + len(line_problems) == nonblank
    assert sum(out.quality.counts.values()) >= len(line_problems)
