"""A stage that read part of a shuffle keeps its task count under a new partition count."""

from __future__ import annotations

from perfmodel.dag.model import ApplicationProfile
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.spark.partition_plan import shuffle_change
from perfmodel.spark.partitioning import ShuffleInput, StagePartitioning
from perfmodel.spark.settings import effective_settings

BASE = effective_settings(
    {"spark.sql.shuffle.partitions": "8", "spark.sql.adaptive.enabled": "true"}, "4.0.1"
)


def _stage(tasks: int) -> tuple[ApplicationProfile, StagePartitioning]:
    profile = build_synthetic(
        [[StageSpec(0, [TaskSpec(run_ms=500, remote_read=1 << 20)] * tasks)]], 2
    )
    exchange = ShuffleInput("hash", "ENSURE_REQUIREMENTS", 8, [], "coalesced", 4)
    part = StagePartitioning(
        (0, 0), "shuffle-partitions", tasks, "", planned=8, shuffles=[exchange]
    )
    return profile, part


def test_a_limit_over_a_shuffle_keeps_its_one_task() -> None:
    """`orderBy(...).limit(n)` or `first()` runs one task of a shuffle AQE left at 4
    partitions: 2,000 partitions without AQE do not make it 2,000 tasks (Spark ran it as one
    task in both)."""
    target = BASE.with_changes(
        {"spark.sql.shuffle.partitions": 2000, "spark.sql.adaptive.enabled": False}
    )
    profile, part = _stage(1)
    assert shuffle_change(profile, part, BASE, target, 2, 2) is None
    profile, part = _stage(4)  # the whole shuffle: it follows the setting
    change = shuffle_change(profile, part, BASE, target, 2, 2)
    assert change is not None and change.new_partitions == 2000
