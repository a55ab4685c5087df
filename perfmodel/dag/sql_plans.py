"""SQL plans: Spark's plan JSON as `PlanNode` trees, and each operator's stages.

A plan comes in whole with one event, but which stages ran its operators is only known
once every stage has listed the accumulators it updated, at the end of the log. Both steps
are plain tree and array work on finished data, independent of the order events arrive
in, so they live apart from the event fold that calls them (`perfmodel.dag.profile_builder`).
"""

from __future__ import annotations

from sys import intern

import numpy as np

from perfmodel.dag.model import ApplicationProfile, PlanNode
from perfmodel.profile import spark_events as ev


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
    all_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(keys)), [len(i) for i in ids])
    order = np.argsort(all_ids, kind="stable")
    all_ids, owner = all_ids[order], owner[order]
    metric = np.fromiter((acc for n in nodes for acc in n.metric_ids), np.int64)
    node_of = np.repeat(np.arange(len(nodes)), [len(n.metric_ids) for n in nodes])
    lo = np.searchsorted(all_ids, metric, side="left")
    hi = np.searchsorted(all_ids, metric, side="right")
    found: dict[int, set[int]] = {}
    for k in np.flatnonzero(hi > lo).tolist():
        found.setdefault(int(node_of[k]), set()).update(owner[lo[k] : hi[k]].tolist())
    for i, node in enumerate(nodes):
        owners = found.get(i)
        node.stage_keys = sorted(keys[o] for o in owners) if owners else []
