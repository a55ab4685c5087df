"""The two pictures the page draws by hand, laid out here: the stage DAG and flame trees.

Both are plain data (positions, nested frames) so the page's script only draws rectangles
and curves; see docs/report.md for why no graph-layout or flame-graph library is used.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from perfmodel.analysis.diagnosis import Diagnosis, StageDiagnosis, short_name
from perfmodel.report.flame import speedscope

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis

MAX_DAG_NODES = 1500
FLAME_MIN_SHARE = 0.003
"""Flame-graph frames under this share of their stage's samples are dropped (page size)."""
FLAME_MAX_DEPTH = 80
MAX_SPEEDSCOPE_CHARS = 3_000_000


def stage_key(stage_id: int, attempt: int) -> str:
    return f"{stage_id}.{attempt}"


def longest_first(stages: list[StageDiagnosis], n: int, critical: set[int]) -> list[StageDiagnosis]:
    """The ``n`` stages a reader needs most: the critical path's and the important ones
    first, then the rest, longest first within each."""
    ranked = sorted(
        stages, key=lambda s: (not (s.stage_id in critical or s.important), -s.duration_s)
    )
    return ranked[:n]


def dag_layout(analysis: Analysis, d: Diagnosis) -> dict[str, Any]:
    """Stages in columns of concurrent work, left to right in the order they ran.

    A stage joins the current column while it overlaps in time with the stages already
    there, and opens the next one otherwise: stages that ran side by side stack, stages
    that ran one after another read left to right, so a long chain of short stages does
    not shrink to slivers beside a long start-up (as a time axis would draw it). The
    shuffle dependencies are the edges; times are in each node's tooltip. O(n log n).
    """
    profile = analysis.profile
    start = profile.start_ms or 0.0
    latest = profile.latest_attempts()
    nodes = [s for s in latest.values() if s.status != "SKIPPED" and s.submit_ms is not None]
    nodes.sort(key=lambda s: (s.submit_ms or 0.0, s.stage_id))
    truncated = len(nodes) > MAX_DAG_NODES
    if truncated:
        keep = {s.stage_id for s in longest_first(d.stages, MAX_DAG_NODES, set(d.critical_path))}
        nodes = [s for s in nodes if s.stage_id in keep]
    critical = set(d.critical_path)
    important = {s.stage_id for s in d.stages if s.important}
    placed: list[dict[str, Any]] = []
    column, row, column_end, tallest = -1, 0, -math.inf, 0
    for s in nodes:
        submit = s.submit_ms or start
        end = max(s.complete_ms or submit, submit)
        if submit < column_end:
            row += 1
            column_end = max(column_end, end)
        else:
            column, row, column_end = column + 1, 0, end
        tallest = max(tallest, row + 1)
        placed.append(
            {
                "id": s.stage_id,
                "key": stage_key(s.stage_id, s.attempt),
                "label": short_name(s.name, 28),
                "x0": round((submit - start) / 1000.0, 3),
                "x1": round((end - start) / 1000.0, 3),
                "column": column,
                "row": row,
                "status": s.status,
                "critical": s.stage_id in critical,
                "important": s.stage_id in important,
            }
        )
    shown = {n["id"] for n in placed}
    edges = [[int(a), int(b)] for a, b in profile.stage_graph.edges() if a in shown and b in shown]
    return {
        "nodes": placed,
        "edges": edges,
        "critical": d.critical_path,
        "columns": column + 1,
        "rows": tallest,
        "truncated": truncated,
    }


def _flame_tree(stacks: dict[tuple[str, ...], int]) -> dict[str, Any]:
    """Root-first stacks → a nested icicle tree, small frames pruned."""
    total = sum(c for c in stacks.values() if c > 0)
    root: dict[str, Any] = {"n": "all", "v": 0, "c": {}}
    for frames, count in stacks.items():
        if count <= 0:
            continue
        node = root
        node["v"] += count
        for frame in frames[:FLAME_MAX_DEPTH]:
            child = node["c"].get(frame)
            if child is None:
                child = node["c"][frame] = {"n": frame, "v": 0, "c": {}}
            child["v"] += count
            node = child
    least = total * FLAME_MIN_SHARE

    def finish(node: dict[str, Any]) -> dict[str, Any]:
        kids = [finish(c) for c in node["c"].values() if c["v"] >= least]
        kids.sort(key=lambda c: -c["v"])
        return {"n": node["n"], "v": node["v"], "c": kids}

    # Iterative depth is bounded by FLAME_MAX_DEPTH, so recursion here stays shallow.
    return finish(root)


def flame_section(analysis: Analysis) -> dict[str, Any] | None:
    samples = analysis.samples
    if samples is None:
        return None
    stages = {
        stage_key(sid, att): _flame_tree(dict(cp.stacks))
        for (sid, att), cp in sorted(samples.stages.items())
        if cp.samples > 0
    }
    if not stages:
        return None
    doc = speedscope(
        {f"stage {k}": dict(cp.stacks) for k, cp in sorted(samples.stages.items())},
        "perfmodel report",
    )
    text = json.dumps(doc)
    bundle = str(analysis.loaded.bundle) if analysis.loaded.bundle else analysis.source
    return {
        "stages": stages,
        "speedscope": doc if len(text) <= MAX_SPEEDSCOPE_CHARS else None,
        "command": f"perfmodel flame {bundle}",
        "files": f"{bundle}/flame/all.speedscope.json",
    }
