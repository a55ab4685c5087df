"""Shared builders for the recommend tests: synthetic profiles behind the facade's protocol,
and the comparison of the pruned search with the exhaustive one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfmodel.analysis import Analysis, PartitionKnob, Prediction, analyse_profile
from perfmodel.dag.model import ApplicationProfile
from perfmodel.recommend.catalog import COLUMNS, MachineType, parse_catalog_text
from perfmodel.recommend.search import Point, RecommendError, Request, SearchResult, search
from perfmodel.simulate.config import BaselineOverrides, ClusterConfig
from perfmodel.simulate.workload import Workload

HEADER = ",".join(COLUMNS)


class SyntheticAnalysis:
    """The facade's engine (`perfmodel.analysis.Engine`) on a hand-built profile, counting
    the replays a search asks for."""

    def __init__(self, profile: ApplicationProfile, overrides: BaselineOverrides | None = None):
        self.analysis: Analysis = analyse_profile(profile, overrides=overrides)
        self.profile = profile
        self.source = "synthetic"
        self.notes: list[str] = []
        self.calls = 0

    @property
    def baseline(self) -> ClusterConfig:
        return self.analysis.baseline

    @property
    def workload(self) -> Workload:
        return self.analysis.workload

    def predict(self, change: object = None) -> Prediction:
        self.calls += 1
        return self.analysis.predict(change)  # type: ignore[arg-type]

    def slot_only_s(self, change: object = None) -> float:
        return self.analysis.slot_only_s(change)  # type: ignore[arg-type]

    def lower_bounds_s(self, targets: Sequence[ClusterConfig]) -> np.ndarray:
        return self.analysis.lower_bounds_s(targets)

    def refined_bound_s(self, target: ClusterConfig) -> float:
        return self.analysis.refined_bound_s(target)

    @property
    def fast_replays(self) -> bool:
        return self.analysis.fast_replays

    def predict_settings(
        self, settings: Mapping[str, str], change: object = None, *, strict: bool = True
    ) -> Prediction:
        self.calls += 1
        return self.analysis.predict_settings(settings, change, strict=strict)  # type: ignore[arg-type]

    def partition_knob(self) -> PartitionKnob | None:
        return self.analysis.partition_knob()


def row(
    vm_type: str,
    vcpu: int,
    memory_gib: float,
    price: float,
    *,
    disk_mbps: float = 250,
    network_gbps: float = 10,
    cpu_speed: float = 1.0,
    granularity: int = 1,
    minimum: int = 0,
) -> str:
    return (
        f"{vm_type},test,{vcpu},{memory_gib},{network_gbps},{disk_mbps},{cpu_speed},{price},"
        f"{granularity},{minimum},nowhere,hand-written for a test,2026-01-01"
    )


def catalog(*rows: str) -> list[MachineType]:
    return parse_catalog_text("\n".join([HEADER, *rows]), "test.csv")


def point_key(p: Point) -> tuple[object, ...]:
    """A point's identity: machine type, node count, executor layout."""
    return (p.machine.vm_type, p.nodes, p.layout)


def point_figures(p: Point) -> tuple[object, ...]:
    """What a search answers about a point, compared figure for figure."""
    return (point_key(p), p.predicted_s, p.upper_s, p.cost, p.cost_upper, p.bottleneck)


def search_or_error(
    analysis: object, machines: list[MachineType], request: Request
) -> SearchResult | str:
    """The search's answer, or its error's message (the same error must come from both
    searches)."""
    try:
        return search(analysis, machines, request)  # type: ignore[arg-type]
    except RecommendError as e:
        return str(e)


def assert_same_answers(
    analysis: object, machines: list[MachineType], request: Request
) -> tuple[int, int]:
    """Pruned vs exhaustive on one request; returns (pruned, exhaustive) replays."""
    fast = search_or_error(analysis, machines, request)
    full = search_or_error(
        analysis, machines, Request(**{**request_fields(request), "exhaustive": True})
    )
    if isinstance(full, str) or isinstance(fast, str):
        assert fast == full  # the same error, naming the same closest point
        return 0, 0
    assert point_figures(fast.recommended) == point_figures(full.recommended)
    assert [point_figures(p) for p in fast.pareto] == [point_figures(p) for p in full.pareto]
    assert [point_figures(p) for p in fast.top] == [point_figures(p) for p in full.top]
    for a, b in (
        (fast.cheapest_meeting_deadline, full.cheapest_meeting_deadline),
        (fast.fastest_within_budget, full.fastest_within_budget),
    ):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert point_figures(a) == point_figures(b)
    exhaustive = {point_key(p): point_figures(p) for p in full.points}
    priced = [p for p in fast.points if p.evaluated]
    assert all(point_figures(p) == exhaustive[point_key(p)] for p in priced)
    # Every point of a replayed configuration is priced, however it was reached.
    replayed = {p.config for p in priced}
    assert all(p.evaluated for p in fast.points if p.config in replayed)
    assert fast.replays <= full.replays
    return fast.replays, full.replays


def request_fields(req: Request) -> dict[str, object]:
    """A request's fields, to copy it with one changed."""
    return {name: getattr(req, name) for name in req.__slots__}  # type: ignore[attr-defined]


def requests_for(full: SearchResult, max_nodes: int) -> list[Request]:
    """No limit, a deadline a third of the way up the upper bounds, a median budget, both."""
    uppers = sorted(p.upper_s for p in full.points)
    costs = sorted(p.cost for p in full.points)
    deadline, budget = uppers[len(uppers) // 3], costs[len(costs) // 2]
    return [
        Request(max_nodes=max_nodes),
        Request(max_nodes=max_nodes, top=1),
        Request(max_nodes=max_nodes, deadline_s=deadline, top=3),
        Request(max_nodes=max_nodes, budget_usd=budget),
        Request(max_nodes=max_nodes, deadline_s=deadline, budget_usd=costs[-1]),
        Request(max_nodes=max_nodes, deadline_s=uppers[0] * 0.5),  # nobody meets it
        Request(max_nodes=max_nodes, driver_node=True, top=2),
    ]
