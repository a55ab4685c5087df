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

from perfmodel.experiment.results import AccuracyReport, PairResult
from perfmodel.simulate.units import format_share as pct


def _row(label: str, role: str, pairs: list[PairResult]) -> str:
    diffs = [p.plugin_samples_error - p.error for p in pairs]
    moved = [abs(p.plugin_samples_s - p.predicted_s) / p.predicted_s for p in pairs]
    return (
        f"| {label} | {role} | {len(pairs)} | {pct(statistics.fmean(p.error for p in pairs))} | "
        f"{pct(statistics.fmean(p.plugin_samples_error for p in pairs))} | "
        f"{100 * statistics.fmean(diffs):+.1f} | {100 * max(moved):.1f}% |"
    )


def render_sampler_comparison(report: AccuracyReport) -> list[str]:
    """Markdown lines: per workload, the bundle's mean error read from JFR's samples and from
    the plugin's, on the same pairs; nothing where no run kept both."""
    both = [p for p in report.pairs if not math.isnan(p.plugin_samples_error)]
    if not both:
        return []
    role = {w.workload: w.role for w in report.workloads}
    by_workload: dict[str, list[PairResult]] = defaultdict(list)
    for p in both:
        by_workload[p.workload].append(p)
    lines = [
        "",
        '### JVM samplers on the same runs (`jvm_sampler = "both"`)',
        "",
        "Each pair predicted from its baseline's bundle read from JFR's samples (the bundle as "
        "recorded) and from the plugin sampler's samples of the same run; the runs, event logs, "
        "per-thread CPU and Python samples are the same, so the difference is the samplers'. "
        "*Largest move*: the largest change of a prediction between the two readings.",
        "",
        "| workload | set | pairs | JFR samples | plugin samples | plugin − JFR, points "
        "| largest move |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, pairs in sorted(by_workload.items()):
        lines.append(_row(name, role.get(name, ""), pairs))
    sides = sorted({role.get(p.workload, "") for p in both})
    for side in sides:
        pairs = [p for p in both if role.get(p.workload, "") == side]
        lines.append(_row(f"**all{' ' + side if side else ''}**", side, pairs))
    return lines
