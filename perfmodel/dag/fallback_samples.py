"""The CPU a stage's tasks spent because an aggregation ran out of memory, read from its
stack samples.

Spilling costs CPU in the task's thread, which the event log counts as CPU time, so a what-if
that gives a stage enough memory must take it away. For a sorter that spills (a sort, a
sort-merge join, a shuffle's sort) the cost is small and even: the fit workloads' stages spent
a median 1.2 ns of CPU per byte spilled (`perfmodel.simulate.laws.SPILL_CPU_NS_PER_BYTE`).
Their samples overstate it: on the cluster's sort (2026-11-25, 512m executors) a quarter of
the spilling stage's on-CPU samples wrote, read and merged spilled runs, yet its CPU time was
within 8% of the 2g run's, which did none of it (sorting a larger buffer in memory costs more
per record). A hash aggregation that runs out of memory is different: it falls back to
sorting what its map held and every record after, work it does not do at all with enough
memory. A bigram count's aggregation spent 30% of its CPU samples there, and its CPU time
was 39% higher at 512m than at 2g: 10 ns per byte spilled, not 1.2 (held-out study,
2026-11-25).

So a bundle's JVM samples are read for that fallback only: the share of a stage's on-CPU
samples (JFR's ``java`` kind) whose stack passes through the aggregation's switch to sorting
is the share of its CPU time it would not spend with enough memory, on top of the constant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perfmodel.dag.model import StageKey
from perfmodel.dag.samples import CallProfile, SampleProfile


def _frames(*names: str) -> re.Pattern[str]:
    """Any of ``names`` (``Class.method`` or ``Class``, a regex each) as a frame's tail."""
    return re.compile(r"(?:^|[.$])(?:" + "|".join(names) + r")(?:$|[.$(])")


FALLBACK_FRAMES = _frames(
    r"UnsafeKVExternalSorter",
    r"UnsafeFixedWidthAggregationMap\.destructAndCreateExternalSorter",
    r"HashAggregateExec\$?\.spillHashMapToSorter",
    r"TungstenAggregationIterator\.switchToSortBasedAggregation",
    r"SortBasedAggregator",
    r"ExternalAppendOnlyMap\.spill",
)
"""An aggregation that ran out of memory: it sorts what its hash map held, and every record
after, which it would not have done with enough memory; all of it is spilling's work."""


def is_fallback_stack(frames: tuple[str, ...]) -> bool:
    """Whether a sample's stack is in an aggregation's fallback to sorting."""
    return any(FALLBACK_FRAMES.search(f) for f in frames)


MIN_CPU_SAMPLES = 20
"""On-CPU samples a stage needs before its share is read (fewer: too noisy to use)."""


@dataclass(frozen=True, slots=True)
class FallbackShare:
    """Of a stage's on-CPU JVM samples, how many were in an aggregation's fallback."""

    fallback_samples: int
    cpu_samples: int

    @property
    def share(self) -> float:
        return self.fallback_samples / self.cpu_samples if self.cpu_samples else 0.0


def stage_fallback_share(profile: CallProfile) -> FallbackShare:
    fallback = cpu = 0
    for (kind, frames), count in profile.kind_stacks.items():
        if kind != "java":
            continue
        cpu += count
        if is_fallback_stack(frames):
            fallback += count
    return FallbackShare(fallback, cpu)


def fallback_shares(samples: SampleProfile) -> dict[StageKey, FallbackShare]:
    """Stages with at least `MIN_CPU_SAMPLES` on-CPU samples, and their fallback share."""
    out: dict[StageKey, FallbackShare] = {}
    for key, profile in samples.stages.items():
        share = stage_fallback_share(profile)
        if share.cpu_samples >= MIN_CPU_SAMPLES:
            out[key] = share
    return out
