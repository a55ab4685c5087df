"""Spark settings as a search dimension: the shuffle-partition count, or AQE's advisory size.

The catalog search (`perfmodel.recommend.search`) predicts every configuration with the
profiled run's settings. Then, where the log shows a setting in control of its shuffle
stages' task counts (`perfmodel.analysis.PartitionKnob`: ``spark.sql.shuffle.partitions``,
or AQE's ``advisoryPartitionSizeInBytes`` where AQE coalesced the shuffles), the
configurations that can still decide the answer are predicted again under a handful of
values of that setting, by the facade's settings what-if, and each (configuration,
value) is one more point of the search: the recommended configuration, the cheaper ones
on the time/cost front that missed the deadline (a better setting may bring them in),
then the next cheapest meeting it, at most `MAX_TUNED_POINTS`.

The values are derived from the data, never read from input: partition counts that cut
the largest shuffle the setting controls into partitions of `TARGET_PARTITION_BYTES`
each, and counts of one, two and three tasks per slot of the configuration (Spark's
tuning guide's 2–3 tasks per core, and one wave). Under AQE they become the advisory
size that cuts that shuffle into as many partitions, with ``parallelismFirst`` off (with
it on, Spark's default since 3.2, AQE ignores the advisory size). At most
`MAX_CANDIDATES` values per configuration, each within Spark's own range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the renderers read the labels below without the analysis stack
    from perfmodel.analysis import PartitionKnob

MIB = 1 << 20
TARGET_PARTITION_BYTES: tuple[int, ...] = (16 * MIB, 64 * MIB, 128 * MIB, 256 * MIB)
"""Partition sizes the candidate counts aim at: Spark's default advisory size (64 MiB),
the 100–200 MB per partition of common tuning advice, and one step either side."""
TASKS_PER_SLOT: tuple[int, ...] = (1, 2, 3)
MAX_CANDIDATES = 7
MAX_TUNED_POINTS = 8
"""Configurations predicted again under each candidate value (see the module's doc)."""
MAX_PARTITION_COUNT = 100_000
"""Spark's own limit on a shuffle's partitions (``spark.sql.shuffle.partitions``)."""
MIN_GAIN = 0.05
"""A tuned value becomes a point of the search only where it is predicted at least this
much faster than the same configuration with the run's own settings. A threshold chosen,
not fitted: a smaller predicted gain is small beside the 80% interval every prediction
carries (±22% on the example log), so not worth changing a setting for."""
MIN_ADVISORY_BYTES = 1 << 10
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
ADVISORY_SIZE = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
PARALLELISM_FIRST = "spark.sql.adaptive.coalescePartitions.parallelismFirst"


@dataclass(slots=True)
class Tuning:
    """What the settings search did, for the answer's notes and ``--json``."""

    knob: PartitionKnob | None
    tuned_points: int = 0
    replays: int = 0
    below_gain: int = 0
    """Tuned predictions left out for gaining less than `MIN_GAIN` over the run's settings."""
    refused: dict[str, str] = field(default_factory=dict)
    """Candidate settings a prediction refused (value → the error), said, not dropped."""

    def as_dict(self) -> dict[str, object]:
        return {
            "knob": self.knob.as_dict() if self.knob else None,
            "tuned_configurations": self.tuned_points,
            "replays": self.replays,
            "below_min_gain": self.below_gain,
            "min_gain": MIN_GAIN,
            "refused": dict(self.refused),
        }

    def note(self) -> str:
        if self.knob is None:
            return (
                "Spark settings not tuned: no stage of this log has its task count set by a "
                "setting (the plan shows the code, the input or no SQL plan in control); "
                "every prediction keeps the profiled run's settings"
            )
        return (
            f"{self.knob.key} tuned on {self.tuned_points} configuration(s) "
            f"({self.replays} settings replays; it sets the task count of "
            f"{self.knob.stages} stage(s), the largest reading "
            f"{self.knob.largest_shuffle_bytes / MIB:.1f} MiB); a value is a point of the "
            f"search where it is predicted at least {MIN_GAIN:.0%} faster than the run's "
            f"own ({self.below_gain} were not); other points keep the profiled run's "
            "settings, as do settings not printed"
        )


def candidate_counts(largest_bytes: int, slots: int) -> list[int]:
    """Partition counts to try (see the module's doc): by target size, then by slots."""
    by_size = [max(1, math.ceil(largest_bytes / size)) for size in TARGET_PARTITION_BYTES]
    by_slots = [max(1, k * slots) for k in TASKS_PER_SLOT]
    out: list[int] = []
    for n in (*by_size, *by_slots):
        n = min(n, MAX_PARTITION_COUNT)
        if n not in out:
            out.append(n)
    return out[:MAX_CANDIDATES]


def candidate_settings(knob: PartitionKnob, slots: int) -> list[dict[str, str]]:
    """The settings to try on a configuration of ``slots`` task slots, the run's own left
    out (the search has predicted it already)."""
    counts = candidate_counts(knob.largest_shuffle_bytes, slots)
    out: list[dict[str, str]] = []
    if knob.key == ADVISORY_SIZE:
        sizes: list[int] = []
        for n in counts:
            size = _whole_kib(knob.largest_shuffle_bytes / n)
            if size not in sizes and not (size == knob.value and not knob.parallelism_first):
                sizes.append(size)
        for size in sizes:
            out.append({ADVISORY_SIZE: byte_text(size), PARALLELISM_FIRST: "false"})
        return out
    return [{SHUFFLE_PARTITIONS: str(n)} for n in counts if n != knob.value]


def _whole_kib(n_bytes: float) -> int:
    """Bytes rounded up to a whole KiB (at least `MIN_ADVISORY_BYTES`): a size a person can
    read and Spark's ``k``/``m`` notation can write exactly."""
    kib = max(MIN_ADVISORY_BYTES, math.ceil(n_bytes / 1024) * 1024)
    return int(kib)


def byte_text(n_bytes: int) -> str:
    """Spark's byte notation: whole MiB as ``Nm``, else whole KiB as ``Nk``."""
    if n_bytes % MIB == 0:
        return f"{n_bytes // MIB}m"
    return f"{n_bytes // 1024}k"


def settings_label(settings: dict[str, str]) -> str:
    """A point's tuned settings in short, for a table cell: ``partitions 64``,
    ``advisory 8105k``; ``as run`` where it has none."""
    if not settings:
        return "as run"
    if SHUFFLE_PARTITIONS in settings:
        return f"partitions {settings[SHUFFLE_PARTITIONS]}"
    if ADVISORY_SIZE in settings:
        return f"advisory {settings[ADVISORY_SIZE]}"
    return ", ".join(f"{k}={v}" for k, v in settings.items())
