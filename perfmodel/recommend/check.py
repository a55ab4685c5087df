"""Checking a recommendation against measured runs of its points and their neighbours.

The end-to-end question is not "was the prediction close" (docs/accuracy.md asks that) but
"was the decision right": did the recommended configuration meet the deadline when it
really ran, and was it the cheapest of the measured configurations that did? Costs of the
measured runs are computed from their measured runtimes with the same billing rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.recommend.pricing import run_cost
from perfmodel.recommend.search import Point, SearchResult


@dataclass(slots=True)
class MeasuredPoint:
    vm_type: str
    nodes: int
    predicted_s: float
    measured_s: float
    measured_cost: float
    meets_deadline: bool
    recommended: bool

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class DecisionCheck:
    """The measured points and the verdict on the recommendation."""

    deadline_s: float | None
    points: list[MeasuredPoint]
    recommended_met_deadline: bool
    recommended_was_cheapest: bool
    cheapest_measured: str | None
    """The vm_type of the cheapest measured point that met the deadline (None: none did)."""

    def verdict(self) -> str:
        met = "met" if self.recommended_met_deadline else "missed"
        cheapest = (
            "and was the cheapest measured point that met it"
            if self.recommended_was_cheapest
            else f"but the cheapest measured point that met it was {self.cheapest_measured}"
        )
        return f"the recommendation {met} the deadline when run, {cheapest}"

    def as_dict(self) -> dict[str, object]:
        return {
            "deadline_s": self.deadline_s,
            "points": [p.as_dict() for p in self.points],
            "recommended_met_deadline": self.recommended_met_deadline,
            "recommended_was_cheapest": self.recommended_was_cheapest,
            "cheapest_measured": self.cheapest_measured,
            "verdict": self.verdict(),
        }


def check_decision(result: SearchResult, measured_s: Mapping[str, float]) -> DecisionCheck:
    """Compare with measured runtimes keyed by vm_type (one node each: local machines)."""
    rec = result.recommended
    deadline = result.request.deadline_s
    chosen: dict[str, Point] = {}
    for p in result.points:
        if p.evaluated and p.machine.vm_type in measured_s and p.nodes == 1:
            best = chosen.get(p.machine.vm_type)
            if best is None or p is rec or (best is not rec and p.cost < best.cost):
                chosen[p.machine.vm_type] = p
    points = [
        MeasuredPoint(
            vm_type=name,
            nodes=p.nodes,
            predicted_s=p.predicted_s,
            measured_s=measured_s[name],
            measured_cost=run_cost(measured_s[name], p.machine, p.billed_nodes),
            meets_deadline=deadline is None or measured_s[name] <= deadline,
            recommended=p is rec,
        )
        for name, p in sorted(chosen.items())
    ]
    mine = next((p for p in points if p.recommended), None)
    if mine is None:
        raise ValueError(f"the recommended {rec.machine.vm_type} was not measured")
    meeting = sorted((p for p in points if p.meets_deadline), key=lambda p: p.measured_cost)
    cheapest = meeting[0] if meeting else None
    return DecisionCheck(
        deadline_s=deadline,
        points=points,
        recommended_met_deadline=mine.meets_deadline,
        recommended_was_cheapest=cheapest is not None and cheapest is mine,
        cheapest_measured=cheapest.vm_type if cheapest else None,
    )
