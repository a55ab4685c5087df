"""A change of a profile's partitioning: what a front end plans, what the replay prices.

A settings what-if (``--conf spark.sql.shuffle.partitions=64``) is answered in two halves
that must not know each other. The front end knows its framework's rules: which stages a
setting re-partitions, into how many partitions holding how many bytes, which joins change
strategy (`perfmodel.spark.partition_plan`). The replay knows what work costs: a task's
fixed cost, spill, a shuffle's cost per byte (`perfmodel.simulate.repartition`). These
plain records are what passes between them, framework-free, and what a prediction reports
back to the user (`SettingsEffect`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from perfmodel.dag.model import StageKey

FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class StageChange:
    """A stage whose partitions new settings change."""

    key: StageKey
    control: str
    """What sets its task count (`perfmodel.spark.partitioning.CONTROLS`)."""
    knob: str
    """The setting in control, as the user writes it (``spark.sql.shuffle.partitions``)."""
    old_partitions: int
    new_partitions: int
    data: FloatArray
    """Bytes each new partition's task reads, in the order the tasks run."""
    why: str
    map_stages: list[StageKey] = field(default_factory=list)
    """Stages that write the shuffle it reads: they write to ``planned[1]`` partitions now."""
    planned: tuple[int, int] = (0, 0)
    """Partitions the shuffle is written to, before and after (0: not a shuffle)."""
    write_ms: dict[StageKey, tuple[float, float]] = field(default_factory=dict)
    """Per map stage: milliseconds each of its tasks spends writing the ``planned``
    partitions beyond its data, before and after (the front end's rule for its shuffle
    writer, from what the stage's tasks wrote)."""
    writer: str = ""
    """The front end's name for its map stages' shuffle writer, which prices ``write_ms``
    (empty: none)."""
    record_ms: dict[StageKey, tuple[float, float]] = field(default_factory=dict)
    """Per map stage: milliseconds its mean task spends on its records' way through its
    shuffle writer beyond their bytes, before and after (the front end's rule: a writer
    that sorts by partition pays per record). Work that follows the data: a map stage
    re-split shares it out with the rest of its time."""
    task_fixed_ms: tuple[float, float] = (0.0, 0.0)
    """Milliseconds each of its tasks spends whatever its data, beyond its launch, before
    and after (the front end's rule: the output files each task writes and commits)."""
    launch_ms: float = 0.0
    """Milliseconds a task of the stage spends on launching at least once the JVM is warm
    (the front end's rule: a task writing output deserialises its writer's configuration)."""
    read_ms: tuple[float, float] = (0.0, 0.0)
    """Milliseconds each of its tasks spends fetching the shuffle blocks it reads beyond
    their bytes, before and after (the front end's rule: a cost per block, and a block per
    map task holding rows for the task's partitions, so both its own count and its map
    stages' count move it)."""
    blocks: tuple[float, float] = (0.0, 0.0)
    """Shuffle blocks each of its tasks fetches, before and after, which ``read_ms`` prices
    (0: it reads no shuffle, or its map stages' records are unknown)."""


@dataclass(slots=True)
class JoinChange:
    """A join whose strategy new settings change, and the data that moves with it."""

    query_id: int
    before: str
    after: str
    shuffled_bytes: dict[StageKey, float]
    """Per stage: bytes it now shuffles and sorts (a broadcast join's stream side become a
    sort-merge join's), shared by its tasks by the bytes each reads."""
    scaled: dict[StageKey, float]
    """Per stage: the factor its tasks' time is multiplied by (the share of a join's input
    it still reads); -1: the shuffle write it no longer does."""
    why: str


@dataclass(slots=True)
class PartitionPlan:
    """Everything new settings change in a profile's partitioning, and what was kept."""

    changes: list[StageChange] = field(default_factory=list)
    joins: list[JoinChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    writers: frozenset[StageKey] = frozenset()
    """Stages whose tasks each wrote an output file: their tasks' time holds the file's
    cost, so none of them measures what a bare task costs a warm JVM."""

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.joins)


@dataclass(frozen=True, slots=True)
class StageTaskChange:
    """One stage's task count under the settings, for the user."""

    stage_id: int
    attempt: int
    control: str
    knob: str
    tasks_before: int
    tasks_after: int
    why: str
    blocks_before: float = 0.0
    blocks_after: float = 0.0
    """Shuffle blocks each task fetches, before and after (`StageChange.blocks`): a shuffle
    of many map tasks into many partitions is read in many small blocks, each of which
    costs its reader."""

    def as_dict(self) -> dict[str, object]:
        return {
            "stage_id": self.stage_id,
            "attempt": self.attempt,
            "control": self.control,
            "knob": self.knob,
            "tasks_before": self.tasks_before,
            "tasks_after": self.tasks_after,
            "why": self.why,
            "blocks_before": round(self.blocks_before, 1),
            "blocks_after": round(self.blocks_after, 1),
        }


@dataclass(frozen=True, slots=True)
class JoinStrategyChange:
    """One join whose strategy the settings change, for the user."""

    query_id: int
    before: str
    after: str
    why: str

    def as_dict(self) -> dict[str, object]:
        return {
            "query_id": self.query_id,
            "before": self.before,
            "after": self.after,
            "why": self.why,
        }


@dataclass(slots=True)
class SettingsEffect:
    """What framework settings changed in a prediction (``predict --conf``): the settings
    as given, every stage whose task count they change (old → new, the knob in control),
    the joins that change strategy, the settings that change nothing here and why, and
    which knob sets the task count of how many of the profile's stages."""

    settings: dict[str, str]
    stages: list[StageTaskChange] = field(default_factory=list)
    joins: list[JoinStrategyChange] = field(default_factory=list)
    map_stages: int = 0
    """Stages whose map tasks write their shuffle to a new partition count."""
    record_ms: float = 0.0
    """Task time those map stages' writers spend on their records beyond their bytes,
    after minus before, over all their tasks (ms; `StageChange.record_ms`): positive where
    a writer now sorts its records by partition, negative where it no longer does."""
    no_effect: dict[str, str] = field(default_factory=dict)
    """Settings given that change nothing in this profile, with the reason."""
    not_predicted: dict[str, str] = field(default_factory=dict)
    """Settings given whose effect the model cannot predict (left out, with the reason)."""
    controls: dict[str, int] = field(default_factory=dict)
    """Stages per knob kind in control of their task count (`CONTROLS`)."""

    def as_dict(self) -> dict[str, object]:
        """The ``conf`` object of ``predict --json`` (docs/predict.md)."""
        return {
            "settings": dict(self.settings),
            "stages": [s.as_dict() for s in self.stages],
            "joins": [j.as_dict() for j in self.joins],
            "map_stages": self.map_stages,
            "record_ms": round(self.record_ms, 1),
            "no_effect": dict(self.no_effect),
            "not_predicted": dict(self.not_predicted),
            "controls": dict(self.controls),
        }
