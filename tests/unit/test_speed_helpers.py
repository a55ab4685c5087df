"""The helpers that made diagnose fast must give what the slow code gave, to the bit:
segment sums (every stage at once) against per-slice sums, the small stage graph against
networkx, and the streamed JSON writer against encoding the whole document."""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import pytest

from perfmodel.dag.model import StageGraph
from perfmodel.dag.segments import segment_sums
from perfmodel.jsonout import dump, encode


def _segments(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lengths = rng.choice([0, 1, 2, 3, 5, 7, 8, 9, 30, 64, 65, 300], size=60)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    values = rng.random((3, int(lengths.sum()))) * rng.choice([1e-3, 1.0, 1e6], (3, 1))
    return values, starts, lengths.astype(np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_segment_sums_equal_per_slice_sums_bit_for_bit(seed: int) -> None:
    values, starts, lengths = _segments(np.random.default_rng(seed))
    got_sum = segment_sums(values, starts, lengths)
    got_cumsum = segment_sums(values, starts, lengths, like="cumsum")
    got_flat = segment_sums(values[1], starts, lengths)
    for i, (lo, n) in enumerate(zip(starts.tolist(), lengths.tolist(), strict=True)):
        for r in range(values.shape[0]):
            part = values[r, lo : lo + n]
            want_sum = part.sum() if n else 0.0
            want_cumsum = np.cumsum(part)[-1] if n else 0.0
            assert got_sum[r, i] == want_sum, (r, i, n)
            assert got_cumsum[r, i] == want_cumsum, (r, i, n)
        assert got_flat[i] == (values[1, lo : lo + n].sum() if n else 0.0)


def test_stage_graph_answers_as_networkx_does() -> None:
    rng = np.random.default_rng(7)
    ours, theirs = StageGraph(), nx.DiGraph()
    for child in range(200):
        ours.add_node(child)
        theirs.add_node(child)
        for parent in rng.choice(
            child + 1, size=min(child + 1, int(rng.integers(0, 4))), replace=False
        ).tolist():
            if parent != child:
                ours.add_edge(parent, child)
                theirs.add_edge(parent, child)
    ours.add_edge(500, 3)  # a parent never declared as a node
    theirs.add_edge(500, 3)
    assert list(ours.edges()) == list(theirs.edges())
    assert ours.nodes == list(theirs.nodes)
    assert len(ours) == ours.number_of_nodes() == theirs.number_of_nodes()
    assert ours.number_of_edges() == theirs.number_of_edges()
    for node in theirs.nodes:
        assert list(ours.predecessors(node)) == list(theirs.predecessors(node))
        assert list(ours.successors(node)) == list(theirs.successors(node))
        assert node in ours
    assert ours.has_edge(500, 3) and not ours.has_edge(3, 500)
    assert 10_000 not in ours


@dataclass
class _Inner:
    name: str
    values: list[float]
    shares: dict[str, float]


@dataclass
class _Outer:
    title: str
    items: list[_Inner]
    empty: list[int] = field(default_factory=list)
    nested: dict[str, object] = field(default_factory=dict)
    unknown: float = math.nan


def test_streamed_json_equals_the_whole_document() -> None:
    doc = _Outer(
        title='quotes " and newlines \n and ü',
        items=[_Inner(f"s{i}", [1.5, math.inf, 0.1 + 0.2], {"cpu": 0.25}) for i in range(3)],
        nested={"a": [1, {"b": []}], "c": None},
    )
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    dump(doc, out)
    out.flush()
    streamed = out.buffer.getvalue()  # type: ignore[attr-defined]
    assert streamed == encode(doc) + b"\n"
    parsed = json.loads(streamed)
    assert parsed["unknown"] is None and parsed["items"][0]["values"][1] is None
    assert parsed["title"] == doc.title and parsed["empty"] == []
    text = io.StringIO()  # no byte buffer under it: written as text
    dump({"x": [1, 2]}, text)
    assert json.loads(text.getvalue()) == {"x": [1, 2]}


def test_a_profile_whose_stages_never_ran_compiles_and_diagnoses() -> None:
    """Stages declared but never run (all skipped): no replayed stage, no task; the
    application-wide arrays are empty, not off by one."""
    from perfmodel.analysis.task_figures import TaskFigures
    from perfmodel.dag.model import ApplicationProfile, JobNode, StageNode
    from perfmodel.simulate.config import BaselineOverrides, baseline_config
    from perfmodel.simulate.workload import compile_workload

    profile = ApplicationProfile(app_id="app", start_ms=0.0, end_ms=1000.0, complete=True)
    profile.jobs[0] = JobNode(job_id=0, stage_ids=[0, 1], submit_ms=10.0, complete_ms=20.0)
    for stage_id in (0, 1):
        profile.stages[(stage_id, 0)] = StageNode(
            stage_id=stage_id, attempt=0, name="s", num_tasks=1, job_ids=[0]
        )
    workload = compile_workload(profile, baseline_config(profile, BaselineOverrides()))
    assert workload.stages == [] and workload.n_tasks == 0
    figures = TaskFigures(profile)
    assert figures.stage_component_sums().shape == (6, 2)
