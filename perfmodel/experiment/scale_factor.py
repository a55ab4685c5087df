"""Worker-count pairs grouped by scale factor and direction: 2 → 8 apart from 8 → 2.

A what-if on the executor count is asked both ways (a small cluster profiled, a big one
asked about, and back), and the error of each way and each size of change is its own
figure: a model that is right at 1.5× may be far off at 4×, and one that is right scaling
out may be biased scaling in. The worker-count kind's one mean (`what_if_kind`) would hide
both. So the scale-out study's report gives each factor and direction (4× out: 2 → 8;
4× in: 8 → 2; 2× out: 2 → 4 and 4 → 8...) and each step on its own, from the bundles and
the bare logs, with slot-only replay beside them, as plain and as signed means (the bias).

Only pairs of the worker-count kind are grouped: a pair that changed the memory or the
link too would blur the factor's figure. A cluster configuration's task slots are its
one-core workers, one executor each (`RunConfig.cores`), so the ratio of the two slot
counts is the ratio of executors.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable

from perfmodel.experiment.held_out import describe_pair
from perfmodel.experiment.results import PairResult, ScaleAccuracy, nanmean
from perfmodel.experiment.what_if_kind import WORKERS

OUT = "out"
"""More executors at the target than at the baseline."""
IN = "in"
"""Fewer executors at the target."""


def scale_of(pair: PairResult) -> tuple[str, float] | None:
    """(direction, factor) of a worker-count pair; None for a pair of another kind, one
    whose slot counts are not known, or one with as many executors on both sides."""
    base, target = pair.baseline_slots, pair.target_slots
    if pair.kind != WORKERS or not base or not target or base == target:
        return None
    if target > base:
        return OUT, target / base
    return IN, base / target


def _signed(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured


def _summary(direction: str, factor: float, pairs: list[PairResult]) -> ScaleAccuracy:
    steps = sorted(
        {(p.baseline_slots or 0, p.target_slots or 0) for p in pairs},
        key=lambda s: (s[0], s[1]) if direction == OUT else (-s[0], -s[1]),
    )
    worst = max(pairs, key=lambda p: p.error)
    return ScaleAccuracy(
        direction=direction,
        factor=factor,
        steps=[f"{a} → {b}" for a, b in steps],
        pairs=len(pairs),
        workloads=sorted({p.workload for p in pairs}),
        mean_error=nanmean([p.error for p in pairs]),
        signed_mean_error=nanmean([_signed(p.predicted_s, p.measured_s) for p in pairs]),
        bare_log_mean_error=nanmean([p.bare_log_error for p in pairs]),
        bare_log_signed_mean_error=nanmean([_signed(p.bare_log_s, p.measured_s) for p in pairs]),
        slot_only_mean_error=nanmean([p.slot_only_error for p in pairs]),
        slot_only_signed_mean_error=nanmean([_signed(p.slot_only_s, p.measured_s) for p in pairs]),
        worst_error=worst.error,
        worst_pair=describe_pair(worst),
    )


def _grouped(
    pairs: list[PairResult], key: Callable[[PairResult, str, float], Hashable]
) -> list[ScaleAccuracy]:
    groups: dict[Hashable, list[PairResult]] = defaultdict(list)
    scale: dict[Hashable, tuple[str, float]] = {}
    for p in pairs:
        found = scale_of(p)
        if found is None:
            continue
        k = key(p, *found)
        groups[k].append(p)
        scale[k] = found
    # Scale-out first, then scale-in; within each the largest factor first, then the
    # smallest baseline.
    order = sorted(
        groups,
        key=lambda k: (
            scale[k][0] != OUT,
            -scale[k][1],
            min(p.baseline_slots or 0 for p in groups[k]),
        ),
    )
    return [_summary(*scale[k], groups[k]) for k in order]


def summarise_scales(pairs: list[PairResult]) -> list[ScaleAccuracy]:
    """One summary per scale factor and direction among the worker-count pairs of
    ``pairs`` (2 → 4 and 4 → 8 together, as 2× out), scale-out first, largest factor first."""
    # Factors as exact ratios of small integers: round away float noise (8/4 == 4/2).
    return _grouped(pairs, lambda _p, direction, factor: (direction, round(factor, 6)))


def summarise_steps(pairs: list[PairResult]) -> list[ScaleAccuracy]:
    """One summary per step of executor counts (2 → 8, 8 → 2, 4 → 8...), in the order of
    `summarise_scales`, then by the baseline's count."""
    return _grouped(pairs, lambda p, _d, _f: (p.baseline_slots, p.target_slots))


__all__ = ["IN", "OUT", "scale_of", "summarise_scales", "summarise_steps"]
