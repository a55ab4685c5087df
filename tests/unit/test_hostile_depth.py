"""Issue 42, class 4: deep structure never raises RecursionError. Plans nested up to
`MAX_JSON_DEPTH` levels are read whole; deeper lines are counted as damage and skipped."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from perfmodel.spark.load import MAX_JSON_DEPTH, build_profile
from tests.unit.hostile_helpers import first, wordcount_events, write_events


def _plan(depth: int) -> bytes:
    """A SQL plan ``depth`` operators deep (two JSON levels each: the node and its list)."""
    node = b'{"nodeName":"Project","simpleString":"Project","children":['
    return node * depth + b'{"nodeName":"Scan","simpleString":"Scan"}' + b"]}" * depth


def _log_with_plan(path: Path, depth: int) -> Path:
    # Without the adaptive plan updates, which replace the plan the query started with.
    events = [e for e in wordcount_events() if not e["Event"].endswith("AdaptiveExecutionUpdate")]
    start = first(events, "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart")
    start["sparkPlanInfo"] = "PLAN"
    lines = [msgspec_line(e).replace(b'"PLAN"', _plan(depth)) if e is start else e for e in events]
    return write_events(path, lines)


def msgspec_line(event: dict) -> bytes:
    return msgspec.json.encode(event)


@given(depth=st.integers(1, 3 * MAX_JSON_DEPTH))
@example(depth=MAX_JSON_DEPTH // 2 - 1)  # the deepest plan read whole
@example(depth=MAX_JSON_DEPTH // 2 + 40)  # past the bound: damage
def test_deep_sql_plans(tmp_path_factory: pytest.TempPathFactory, depth: int) -> None:
    log = _log_with_plan(tmp_path_factory.mktemp("plan") / "log.json", depth)
    loaded = build_profile(log)
    counts = loaded.quality.counts
    levels = 2 * depth + 2  # the event, then a node and its children list per operator
    if levels <= MAX_JSON_DEPTH:
        assert counts["undecodable_line"] == 0
        (query,) = loaded.profile.queries.values()
        assert query.plan is not None
        assert sum(1 for _ in query.plan.walk()) == depth + 1
    elif levels > MAX_JSON_DEPTH + 60:  # past the bound and the decoder's own calls
        assert counts["undecodable_line"] == 1
        assert any("levels deep" in p.message for p in loaded.problems)
    assert len(loaded.profile.task_table()) == 11  # the rest of the log is read


@given(
    depth=st.integers(900, 20_000),
    where=st.sampled_from(["JobStart", "com.example.CustomEvent", "header"]),
)
def test_deeply_nested_json_anywhere(
    tmp_path_factory: pytest.TempPathFactory, depth: int, where: str
) -> None:
    events: list = wordcount_events()
    nest = "[" * depth + "]" * depth
    if where == "JobStart":
        job = first(events, "JobStart")
        job["Junk"] = "NEST"
        events[events.index(job)] = msgspec_line(job).replace(b'"NEST"', nest.encode())
    elif where == "header":
        events.insert(0, nest)
    else:
        events.insert(5, '{"Event":"com.example.CustomEvent","x":' + nest + "}")
    log = write_events(tmp_path_factory.mktemp("nest") / "log.json", events)
    loaded = build_profile(log)  # never a RecursionError
    assert len(loaded.profile.task_table()) == 11
    assert loaded.quality.counts["undecodable_line"] <= 1
