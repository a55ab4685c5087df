"""The time/cost Pareto front, and an incremental form of it that answers "dominated?".

A point is on the front when no other point is both at least as fast and at least as
cheap (and better in one). The incremental front lets the search skip a point whose
lower bounds are already dominated by points it has replayed.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def pareto_front(
    items: Sequence[T], time_of: Callable[[T], float], cost_of: Callable[[T], float]
) -> list[T]:
    """The non-dominated items, fastest first (ties: the cheaper one)."""
    ranked = sorted(items, key=lambda x: (time_of(x), cost_of(x)))
    front: list[T] = []
    best_cost = float("inf")
    for item in ranked:
        if cost_of(item) < best_cost:
            front.append(item)
            best_cost = cost_of(item)
    return front


class Front:
    """Non-dominated (time, cost) pairs, sorted by time; costs fall as time grows."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.costs: list[float] = []

    def dominates(self, time: float, cost: float) -> bool:
        """True when some point is at least as fast and at least as cheap as (time, cost)."""
        i = bisect.bisect_right(self.times, time) - 1
        return i >= 0 and self.costs[i] <= cost

    def add(self, time: float, cost: float) -> None:
        if self.dominates(time, cost):
            return
        i = bisect.bisect_left(self.times, time)
        j = i
        while j < len(self.times) and self.costs[j] >= cost:
            j += 1
        self.times[i:j] = [time]
        self.costs[i:j] = [cost]
