"""The two JVM samplers compared on identical runs (``jvm_sampler = "both"`` in a spec).

Two studies recorded with different samplers differ in their runs as well as in their
samples, and the runs' noise (a few percent) is as large as any difference between the
samplers. A "both" run keeps JFR's samples and the plugin's of the same executions; each pair
is then predicted from either, and only the samples differ.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from perfmodel.experiment.results import AccuracyReport, PairResult


@dataclass(frozen=True, slots=True)
class SamplerComparison:
    """One workload's pairs (or one side of the split's, ``total``) predicted from either
    sampler's samples of the same runs."""

    workload: str
    """The workload; for a total, the side of the split (empty without a split)."""
    role: str
    pairs: int
    jfr_mean_error: float
    plugin_mean_error: float
    plugin_minus_jfr: float
    """Mean over the pairs of the plugin's error minus JFR's (a fraction)."""
    largest_move: float
    """The largest change of a prediction between the two readings, relative to JFR's."""
    total: bool = False


def _compare(workload: str, role: str, pairs: list[PairResult], total: bool) -> SamplerComparison:
    diffs = [p.plugin_samples_error - p.error for p in pairs]
    moved = [abs(p.plugin_samples_s - p.predicted_s) / p.predicted_s for p in pairs]
    return SamplerComparison(
        workload=workload,
        role=role,
        pairs=len(pairs),
        jfr_mean_error=statistics.fmean(p.error for p in pairs),
        plugin_mean_error=statistics.fmean(p.plugin_samples_error for p in pairs),
        plugin_minus_jfr=statistics.fmean(diffs),
        largest_move=max(moved),
        total=total,
    )


def compare_samplers(report: AccuracyReport) -> list[SamplerComparison]:
    """Per workload (by name), then per side of the split, the bundle's mean error read from
    JFR's samples and from the plugin's, on the same pairs; nothing where no run kept both."""
    both = [p for p in report.pairs if not math.isnan(p.plugin_samples_error)]
    if not both:
        return []
    role = {w.workload: w.role for w in report.workloads}
    by_workload: dict[str, list[PairResult]] = defaultdict(list)
    for p in both:
        by_workload[p.workload].append(p)
    out = [
        _compare(name, role.get(name, ""), pairs, False)
        for name, pairs in sorted(by_workload.items())
    ]
    for side in sorted({role.get(p.workload, "") for p in both}):
        pairs = [p for p in both if role.get(p.workload, "") == side]
        out.append(_compare(side, side, pairs, True))
    return out
