"""SQL plans: Spark's plan JSON as `PlanNode` trees, and each operator's stages.

A plan comes in whole with one event, but which stages ran its operators is only known
once every stage has listed the accumulators it updated, at the end of the log. Both steps
are plain tree and array work on finished data, independent of the order events arrive
in, so they live apart from the event fold that calls them (`perfmodel.spark.builder`).
"""

from __future__ import annotations

from itertools import chain
from sys import intern

import numpy as np

from perfmodel.dag.model import ApplicationProfile, PlanNode, StageKey
from perfmodel.spark import events as ev


def plan_tree(info: ev.SparkPlanInfoJson) -> PlanNode:
    """Convert a plan tree iteratively: deep plans must not hit Python's recursion limit."""
    # Names repeat in every query of a log (and metric names in every operator): interned,
    # a log of thousands of queries keeps one copy of each.
    root = PlanNode(name=intern(info.node_name))
    stack: list[tuple[ev.SparkPlanInfoJson, PlanNode]] = [(info, root)]
    while stack:
        src, node = stack.pop()
        node.description = intern(src.simple_string)
        node.metric_ids = {
            m.accumulator_id: intern(m.name) for m in src.metrics if m.accumulator_id >= 0
        }
        for child in src.children:
            child_node = PlanNode(name=intern(child.node_name))
            node.children.append(child_node)
            stack.append((child, child_node))
    return root


def link_plans_to_stages(profile: ApplicationProfile) -> None:
    """Attach to each plan operator the stage attempts that updated its metrics.

    This is how Spark's own UI ties SQL operators to stages: an operator's metrics are
    accumulators, and a stage lists the accumulators its tasks updated. All metric ids of
    all operators are looked up at once in the sorted ids of all stages.
    """
    keys = list(profile.stages)
    ids = [np.asarray(s.accumulable_ids, dtype=np.int64) for s in profile.stages.values()]
    nodes = [n for q in profile.queries.values() if q.plan is not None for n in q.plan.walk()]
    if not nodes:
        return
    if not keys:
        for node in nodes:
            node.stage_keys = []
        return
    all_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(keys)), [len(i) for i in ids])
    order = np.argsort(all_ids, kind="stable")
    all_ids, owner = all_ids[order], owner[order]
    counts = [len(n.metric_ids) for n in nodes]
    metric = np.fromiter(chain.from_iterable(n.metric_ids for n in nodes), np.int64, sum(counts))
    node_of = np.repeat(np.arange(len(nodes)), counts)
    lo = np.searchsorted(all_ids, metric, side="left")
    hits = np.searchsorted(all_ids, metric, side="right") - lo
    # Every (operator, stage attempt) pair a metric id links, once: a metric's id may be
    # listed by several stage attempts (hits > 1), and an operator has many metrics.
    found = hits > 0
    per_metric = hits[found]
    first = np.cumsum(per_metric) - per_metric
    at = np.repeat(lo[found] - first, per_metric) + np.arange(int(per_metric.sum()))
    pairs = np.unique(np.repeat(node_of[found], per_metric) * len(keys) + owner[at])
    linked: dict[int, list[StageKey]] = {}
    for node_index, stage_index in zip(
        (pairs // len(keys)).tolist(), (pairs % len(keys)).tolist(), strict=True
    ):
        linked.setdefault(node_index, []).append(keys[stage_index])
    for i, node in enumerate(nodes):
        stage_keys = linked.get(i)
        node.stage_keys = sorted(stage_keys) if stage_keys else []
