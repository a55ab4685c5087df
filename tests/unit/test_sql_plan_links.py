"""`link_plans_to_stages` pairs operators and stage attempts in one array pass; it must link
exactly what looking up each operator's metric ids one at a time links."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfmodel.dag.model import ApplicationProfile, PlanNode, QueryNode, StageNode
from perfmodel.spark.load import build_profile
from perfmodel.spark.sql_plans import link_plans_to_stages
from tests.conftest import SHARED_EVENTLOGS

LOGS = [
    SHARED_EVENTLOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd",
    SHARED_EVENTLOGS / "local-1776286786993.zstd",
    SHARED_EVENTLOGS / "tasks_executors_fail_compressed_eventlog.zstd",
]


def one_at_a_time(profile: ApplicationProfile) -> list[list[tuple[int, int]]]:
    """The obvious reading: an operator ran in every stage attempt that lists one of its
    metric ids."""
    out = []
    for query in profile.queries.values():
        if query.plan is None:
            continue
        for node in query.plan.walk():
            ids = set(node.metric_ids)
            out.append(
                sorted(
                    key
                    for key, stage in profile.stages.items()
                    if ids & set(stage.accumulable_ids.tolist())
                )
            )
    return out


def linked(profile: ApplicationProfile) -> list[list[tuple[int, int]]]:
    return [
        list(node.stage_keys)
        for q in profile.queries.values()
        if q.plan is not None
        for node in q.plan.walk()
    ]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_real_logs(log: Path) -> None:
    if not log.exists():
        pytest.skip(f"{log} not found (shared event logs absent)")
    profile = build_profile(log).profile
    assert profile.queries
    want = one_at_a_time(profile)
    assert any(want)
    assert linked(profile) == want
    link_plans_to_stages(profile)  # again: the same answer
    assert linked(profile) == want


def stage(stage_id: int, attempt: int, ids: list[int]) -> StageNode:
    node = StageNode(stage_id=stage_id, attempt=attempt, name="", num_tasks=1)
    node.accumulable_ids = np.array(sorted(ids), dtype=np.int64)
    return node


def test_ids_shared_by_attempts_and_operators() -> None:
    profile = ApplicationProfile(app_id="a", attempt=None, framework="spark", source="x")
    for s in (stage(3, 0, [1, 2, 9]), stage(3, 1, [1, 2]), stage(1, 0, [5]), stage(2, 0, [])):
        profile.stages[s.key] = s
    scan = PlanNode("Scan", metric_ids={1: "rows", 2: "bytes", 5: "time"})
    agg = PlanNode("Agg", metric_ids={9: "rows", 77: "unknown"}, children=[scan])
    lone = PlanNode("Lone", metric_ids={})
    profile.queries[0] = QueryNode(query_id=0, plan=agg)
    profile.queries[1] = QueryNode(query_id=1, plan=lone)
    profile.queries[2] = QueryNode(query_id=2, plan=None)
    link_plans_to_stages(profile)
    assert scan.stage_keys == [(1, 0), (3, 0), (3, 1)]
    assert agg.stage_keys == [(3, 0)]
    assert lone.stage_keys == []
    assert linked(profile) == one_at_a_time(profile)


def test_plans_without_stages() -> None:
    profile = ApplicationProfile(app_id="a", attempt=None, framework="spark", source="x")
    scan = PlanNode("Scan", metric_ids={1: "rows"}, stage_keys=[(9, 9)])
    profile.queries[0] = QueryNode(query_id=0, plan=scan)
    link_plans_to_stages(profile)
    assert scan.stage_keys == []
