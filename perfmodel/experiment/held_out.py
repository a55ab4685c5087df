"""The accuracy report under a held-out split: each workload labelled, each side summarised.

Only the held-out side's figures say how the model does on work it has never seen; the fit
side is kept beside it to show how much of the headline error is memory.
"""

from __future__ import annotations

import math

from perfmodel.experiment.results import (
    AccuracyReport,
    GroupAccuracy,
    PairResult,
    interval_coverage,
    nanmean,
)
from perfmodel.experiment.split import FIT, HELD_OUT, Split


def describe_pair(pair: PairResult) -> str:
    signed = (pair.predicted_s - pair.measured_s) / pair.measured_s
    return (
        f"{pair.workload}: {pair.baseline_config} (run {pair.baseline_run}) → "
        f"{pair.target_config}, {100 * signed:+.1f}%"
    )


def summarise_group(role: str, workloads: list[str], pairs: list[PairResult]) -> GroupAccuracy:
    worst = max(pairs, key=lambda p: p.error, default=None)
    return GroupAccuracy(
        role=role,
        workloads=workloads,
        pairs=len(pairs),
        mean_error=nanmean([p.error for p in pairs]),
        worst_error=worst.error if worst else math.nan,
        worst_pair=describe_pair(worst) if worst else "",
        slot_only_mean_error=nanmean([p.slot_only_error for p in pairs]),
        bare_log_mean_error=nanmean([p.bare_log_error for p in pairs]),
        no_code_vectors_mean_error=nanmean([p.no_code_vectors_error for p in pairs]),
        plugin_samples_mean_error=nanmean([p.plugin_samples_error for p in pairs]),
        interval_coverage=interval_coverage(pairs),
        bare_log_interval_coverage=interval_coverage(pairs, bare_log=True),
    )


def apply_split(report: AccuracyReport, split: Split) -> AccuracyReport:
    """Label every workload of ``report`` with its side and add one summary per side
    (held-out first). A side with no measured workload is still listed, with no pairs, so a
    missing held-out run shows as such instead of vanishing."""
    report.split = split.path
    report.split_rule = split.rule
    for w in report.workloads:
        w.role = split.role(w.workload)
    report.groups = []
    for role in (HELD_OUT, FIT):
        names = sorted(w.workload for w in report.workloads if w.role == role)
        pairs = [p for p in report.pairs if p.workload in names]
        group = summarise_group(role, names, pairs)
        side = split.held_out if role == HELD_OUT else split.fit
        group.missing = sorted(side - set(names))
        report.groups.append(group)
    return report
