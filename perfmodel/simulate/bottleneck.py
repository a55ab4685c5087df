"""Naming the bottleneck: the resource that takes the most time (paper §2.4).

Per stage it is the resource with the most predicted task-time; overall, each stage's
resource shares are weighted by the stage's own wall time, because a resource that
dominates a long stage holds the application back more than one dominating a short one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

RESOURCE_OF: dict[str, str] = {
    "cpu": "cpu",
    "cpu_other": "cpu",
    "gc": "memory",
    "network": "network",
    "disk": "disk",
    "spill": "memory",
    "scheduling": "scheduling",
    "other": "other",
}
"""The resource each time component counts towards."""


class _StageLike(Protocol):
    @property
    def predicted_s(self) -> float: ...

    @property
    def component_s(self) -> dict[str, float]: ...

    @property
    def vector(self) -> dict[str, float]: ...  # `resource_shares` of ``component_s``


def resource_totals(component_s: Mapping[str, float]) -> dict[str, float]:
    """Seconds per resource, from seconds per time component."""
    totals: dict[str, float] = {}
    for name, value in component_s.items():
        res = RESOURCE_OF.get(name, "other")
        totals[res] = totals.get(res, 0.0) + value
    return totals


def resource_shares(component_s: Mapping[str, float]) -> dict[str, float]:
    """Share of time per resource, largest first, zero shares left out."""
    totals = resource_totals(component_s)
    whole = sum(totals.values())
    if whole <= 0:
        return {}
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    return {k: v / whole for k, v in ranked if v > 0}


def stage_bottleneck(component_s: Mapping[str, float]) -> str:
    """The resource with the most time in this stage ("none" for a stage without tasks)."""
    shares = resource_shares(component_s)
    return next(iter(shares), "none")


def overall_bottleneck(
    stages: Iterable[_StageLike], shares: Iterable[Mapping[str, float]] | None = None
) -> str:
    """The resource with the most stage-wall-time-weighted share over all stages.

    ``shares``: each stage's `resource_shares`, when the caller has them already."""
    weight: dict[str, float] = {}
    stage_list = list(stages)
    share_list = list(shares) if shares is not None else [s.vector for s in stage_list]
    for stage, vector in zip(stage_list, share_list, strict=True):
        for res, share in vector.items():
            weight[res] = weight.get(res, 0.0) + share * stage.predicted_s
    if not weight:
        return "none"
    return max(weight.items(), key=lambda kv: kv[1])[0]
