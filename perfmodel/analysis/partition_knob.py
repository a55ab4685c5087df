"""The Spark setting that sets the task count of a log's shuffles, and the data they split.

A search over settings (``recommend``) chooses candidate values of the setting from the
data the log's shuffles moved, and prices each with the settings what-if. It may not read
the Spark front end itself (the layers put it above the facade), so the facade reads the
front end's partitioning (`perfmodel.spark.partitioning`) and hands over this summary.

Which setting: where the stages' queries ran with AQE coalescing shuffle partitions,
AQE's advisory partition size decides how many partitions a shuffle is read in; else
``spark.sql.shuffle.partitions`` does. Only stages whose task count the plan shows the
setting sets count (a ``repartition(n)`` in the code is not a setting's to change), and
not those whose query set the key for itself (``spark.conf.set`` wins over ``--conf``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel.dag.model import ApplicationProfile
from perfmodel.spark.partitioning import SHUFFLE_SETTING, Partitioning

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
ADVISORY_SIZE = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
PARALLELISM_FIRST = "spark.sql.adaptive.coalescePartitions.parallelismFirst"
_AQE = "spark.sql.adaptive.enabled"
_COALESCE = "spark.sql.adaptive.coalescePartitions.enabled"


@dataclass(frozen=True, slots=True)
class PartitionKnob:
    """The setting that sets the shuffle stages' task counts in this log, as it was run."""

    key: str
    """`SHUFFLE_PARTITIONS`, or `ADVISORY_SIZE` where AQE coalesced the shuffles."""
    value: int
    """Its value in the run: partitions, or bytes."""
    stages: int
    """Stages that ran whose task count it sets."""
    largest_shuffle_bytes: int
    """The most bytes one of those stages read (all its tasks together)."""
    parallelism_first: bool
    """Whether AQE coalesced for parallelism first (Spark's default since 3.2), which
    ignores the advisory size: a size only applies with it off."""

    def as_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "value": self.value,
            "stages": self.stages,
            "largest_shuffle_bytes": self.largest_shuffle_bytes,
            "parallelism_first": self.parallelism_first,
        }


def partition_knob(profile: ApplicationProfile, partitioning: Partitioning) -> PartitionKnob | None:
    """The setting in control of the log's shuffle stages (see the module's doc); None where
    no stage's task count follows a setting (an RDD job, a log without SQL plans, or only
    counts the code set)."""
    parts = [
        p
        for p in partitioning.stages.values()
        if p.control == SHUFFLE_SETTING
        and SHUFFLE_PARTITIONS not in partitioning.query_modified.get(p.query_id or -1, ())
    ]
    if not parts:
        return None
    largest = 0
    for part in parts:
        stage = profile.stages.get(part.key)
        if stage is None or not len(stage.table):
            continue
        t = stage.table
        read = t.total("input_bytes", "shuffle_read_bytes")
        largest = max(largest, int(np.int64(read)))
    settings = partitioning.settings
    adaptive = bool(settings.get(_AQE)) and bool(settings.get(_COALESCE))
    first = bool(settings.get(PARALLELISM_FIRST))
    if adaptive:
        return PartitionKnob(
            ADVISORY_SIZE, int(settings.int_of(ADVISORY_SIZE, 0)), len(parts), largest, first
        )
    value = settings.int_of(SHUFFLE_PARTITIONS, 200)
    return PartitionKnob(SHUFFLE_PARTITIONS, value, len(parts), largest, first)
