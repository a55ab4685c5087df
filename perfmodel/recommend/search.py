"""The catalog search: every VM type × node count × layout, predicted, priced, ranked.

Each point becomes a `ClusterConfig` (the replay's language: executors, cores, heap,
hosts, host cores, relative CPU speed, per-host bandwidths) and is predicted by the
library facade. Two things keep a 5 000-point search to a few hundred replays on a
100k-task log, with the exhaustive search's answers:

* points with the same replay configuration are replayed once (VM types of one family
  and size class often differ only in price), and every point of a replayed
  configuration is priced;
* a point is replayed only when its lower bound (`perfmodel.simulate.bounds`) leaves it a
  chance to be on the time/cost front or among the ``top`` cheapest meeting the deadline:
  points are visited cheapest-bound first, and one whose (time, cost) bounds are
  dominated by a replayed point, strictly in at least one of the two, is skipped
  (``exhaustive=True`` replays everything); where replays are slow (the pure-Python
  placement loop, ~55 ms a replay of a 230k-task log), a point that survives gets the
  tighter bound of its own configuration (`perfmodel.simulate.bounds.refined_bound_s`,
  ~3.5 ms) and is checked again before it is replayed. With the C placement loop a
  replay costs only ~2.5 refined bounds, and the refined bound spared 71 of 443 replays
  there (16 %), so it cost more than it saved: survivors are replayed directly
  (``Request.refine`` overrides; the answers are the same either way).

Skipping never changes the answers (``tolerance`` 0, the default): a skipped point's true
time and cost are at least its bounds, so the replayed point that dominates the bounds
dominates the point, strictly in one coordinate, so it is not on the exhaustive search's
front either (`pareto_front` keeps the first of exactly equal points, which is why equal
bounds are not skipped). Visiting cheapest-bound first replays the fewest points any
bound-driven order can: a front point that dominates a point's bounds costs no more than
them, so its own bound was visited first. With ``tolerance`` t > 0 (an approximation the
user asks for), a point is skipped already when a replayed point is within (1 + t) of its
bounds in both time and cost, and when its cost bound × (1 + t) exceeds the ``top``-th
cheapest cost found; then the recommended point still meets the deadline (it was
replayed), and costs at most (1 + t) × the cheapest point that does.

The exactness above is of the points with the profiled run's settings. Spark settings are
then tuned on the few configurations that can still change the answer (`tune_settings`,
`perfmodel.recommend.tuning`): their bounds are of the run's own partitions, so nothing is
skipped there, and which configurations they are depends only on the front and the
``top`` cheapest meeting the deadline, which skipping leaves exact.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from perfmodel.analysis import Engine, Prediction
from perfmodel.errors import PerfmodelError
from perfmodel.recommend.catalog import MachineType
from perfmodel.recommend.layouts import Layout, layouts_for, spark_conf, spark_memory
from perfmodel.recommend.pareto import Front, pareto_front
from perfmodel.recommend.pricing import run_cost
from perfmodel.recommend.tuning import MAX_TUNED_POINTS, MIN_GAIN, Tuning, candidate_settings
from perfmodel.recommend.uncertainty import Band, interval_band, prediction_band
from perfmodel.simulate.config import ClusterConfig

DEFAULT_TOLERANCE = 0.0
"""Exact: the answers are the exhaustive search's. A positive tolerance (``--tolerance``)
trades that for fewer replays (see module doc)."""


class RecommendError(PerfmodelError):
    """A request no configuration of the catalog satisfies; the message says the closest."""


@dataclass(frozen=True, slots=True)
class Request:
    """What the user asked for; ``None`` deadline or budget: no such limit."""

    max_nodes: int = 10
    deadline_s: float | None = None
    budget_usd: float | None = None
    top: int = 5
    driver_node: bool = False
    local: bool = False
    """Each machine is one host running ``local[vCPUs]`` (no cluster, one node)."""
    reference_cpu_speed: float = 1.0
    """The catalog ``cpu_speed`` of the profiled machine (new speed = row ÷ this)."""
    calibration: float = 1.0
    """Multiplies every predicted runtime (fitted on stored runs, else 1)."""
    calibration_loo_error: float | None = None
    exhaustive: bool = False
    tolerance: float = DEFAULT_TOLERANCE
    """Skip points whose bounds come within this fraction of a replayed point (see module)."""
    refine: bool | None = None
    """Check a surviving point's refined bound before replaying it; None: only where
    replays are slow (no C placement loop; see module)."""


@dataclass(slots=True)
class Point:
    """One candidate: a VM type, a node count and a layout, with what it would take."""

    machine: MachineType
    nodes: int
    layout: Layout
    config: ClusterConfig
    lower_bound_s: float
    evaluated: bool = False
    predicted_s: float = math.nan
    """Calibrated prediction (× ``Request.calibration``)."""
    raw_predicted_s: float = math.nan
    upper_s: float = math.nan
    bottleneck: str = ""
    cost: float = math.nan
    """USD at the predicted runtime, billed per the type's granularity and minimum."""
    cost_upper: float = math.nan
    meets_deadline: bool = False
    within_budget: bool = True
    driver_node: bool = False
    """One more node of the same type runs the driver (``--driver-node``)."""
    settings: dict[str, str] = field(default_factory=dict)
    """Spark settings this point was predicted with beyond the profiled run's (empty: the
    run's own; `perfmodel.recommend.tuning`)."""

    @property
    def billed_nodes(self) -> int:
        return self.nodes + (1 if self.driver_node else 0)

    @property
    def executors(self) -> int:
        return self.layout.executors_per_node * self.nodes

    def spark_conf(self) -> dict[str, str]:
        """The Spark settings to run this point with: its executors and the settings it was
        predicted with (the profiled run's others are kept, as the prediction kept them)."""
        return spark_conf(self.layout, self.nodes, self.settings)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "vm_type": self.machine.vm_type,
            "provider": self.machine.provider,
            "nodes": self.nodes,
            "billed_nodes": self.billed_nodes,
            "executors": self.executors,
            "executor_cores": self.layout.executor_cores,
            "executor_memory": spark_memory(self.layout.heap_bytes),
            "executor_memory_bytes": self.layout.heap_bytes,
            "executor_memory_overhead_bytes": self.layout.overhead_bytes,
            "local": self.layout.local,
            "spark_settings": dict(self.settings),
            "lower_bound_s": self.lower_bound_s,
            "evaluated": self.evaluated,
        }
        if self.evaluated:
            out |= {
                "predicted_s": self.predicted_s,
                "upper_s": self.upper_s,
                "bottleneck": self.bottleneck,
                "cost": self.cost,
                "cost_upper": self.cost_upper,
                "meets_deadline": self.meets_deadline,
                "within_budget": self.within_budget,
            }
        else:
            out |= {"predicted_s": None, "cost": None, "meets_deadline": None}
        return out


@dataclass(slots=True)
class SearchResult:
    """Every point, the front and the answers; ``replays`` counts the replays actually run."""

    points: list[Point]
    pareto: list[Point]
    top: list[Point]
    """The ``top`` cheapest points that meet the deadline (all points when there is none)."""
    cheapest_meeting_deadline: Point | None
    fastest_within_budget: Point | None
    recommended: Point
    band: Band
    request: Request
    replays: int
    unique_configs: int
    notes: list[str] = field(default_factory=list)
    tuning: Tuning | None = None
    """The settings search (None: not run, e.g. a caller's engine without settings)."""

    def as_run(self, point: Point) -> Point | None:
        """The same configuration predicted with the profiled run's settings, where
        ``point`` was predicted with others (None: it was not, or that was not replayed)."""
        if not point.settings:
            return None
        for p in self.points:
            if (
                not p.settings
                and p.evaluated
                and p.machine == point.machine
                and p.nodes == point.nodes
                and p.layout == point.layout
            ):
                return p
        return None


def candidate_points(
    base: ClusterConfig, machines: Sequence[MachineType], request: Request
) -> list[Point]:
    """Every VM type × node count × layout that fits, as unpriced points."""
    points: list[Point] = []
    counts = [1] if request.local else range(1, request.max_nodes + 1)
    for machine in machines:
        for layout in layouts_for(machine, local=request.local):
            for nodes in counts:
                config = target_config(base, machine, layout, nodes, request.reference_cpu_speed)
                points.append(
                    Point(machine, nodes, layout, config, 0.0, driver_node=request.driver_node)
                )
    return points


def target_config(
    base: ClusterConfig, machine: MachineType, layout: Layout, nodes: int, reference_speed: float
) -> ClusterConfig:
    """The replay configuration of a point: ``nodes`` hosts of ``machine`` split by ``layout``.

    Host cores are the VM's vCPUs (what tasks, Python workers and JVM threads share);
    bandwidths are the VM's own, per host; the CPU speed is relative to the profiled machine.
    """
    sources = {"point": f"{nodes} × {machine.vm_type} as {layout.label}"}
    return ClusterConfig(
        executors=layout.executors_per_node * nodes,
        executor_cores=layout.executor_cores,
        memory_bytes=layout.heap_bytes,
        hosts=nodes,
        host_cores=machine.vcpu,
        host_cores_assumed=False,
        cpu_speed=machine.cpu_speed / reference_speed,
        disk_bw=machine.disk_bw,
        net_bw=machine.net_bw,
        task_cpus=base.task_cpus,
        local_mode=layout.local,
        executors_exchange_data=base.executors_exchange_data,
        sources=sources,
        memory_fraction=base.memory_fraction,
    )


def search(
    predictor: Engine,
    machines: Sequence[MachineType],
    request: Request,
    progress: Callable[[int, int], None] | None = None,
) -> SearchResult:
    """Predict and price the catalog's points; the answers and the front (see module doc)."""
    if request.max_nodes < 1:
        raise RecommendError("--max-nodes must be at least 1")
    if request.top < 1:
        raise RecommendError("--top must be at least 1")
    base = predictor.baseline
    points = candidate_points(base, machines, request)
    if not points:
        raise RecommendError(
            "no catalog type can hold an executor (each needs a 450 MiB heap plus overhead "
            "after the OS share; see docs/recommend.md, Layouts)"
        )
    baseline = predictor.predict()
    band = prediction_band(baseline.model_error, request.calibration_loo_error, prediction=baseline)
    scale = request.calibration
    lower = predictor.lower_bounds_s([p.config for p in points])
    for point, lb in zip(points, lower, strict=True):
        point.lower_bound_s = float(lb) * scale
    deadline = request.deadline_s if request.deadline_s is not None else math.inf
    if request.tolerance < 0:
        raise RecommendError("--tolerance must be at least 0")
    cache: dict[ClusterConfig, Prediction] = {}
    refined: dict[ClusterConfig, float] = {}
    refine = request.refine if request.refine is not None else not predictor.fast_replays
    front = Front()
    feasible_costs: list[float] = []
    order = sorted(
        points,
        key=lambda p: (_cost(p, p.lower_bound_s), p.lower_bound_s),
    )
    for done, point in enumerate(order):
        if progress is not None and done % 64 == 0:
            progress(done, len(order))
        cached = point.config in cache
        if not (cached or request.exhaustive):
            if _skippable(point, front, feasible_costs, band, deadline, request):
                continue
            if refine:  # before a slow replay, the tighter bound of this configuration
                if point.config not in refined:
                    refined[point.config] = predictor.refined_bound_s(point.config) * scale
                point.lower_bound_s = max(point.lower_bound_s, refined[point.config])
                if _skippable(point, front, feasible_costs, band, deadline, request):
                    continue
        if not cached:
            cache[point.config] = predictor.predict(point.config)
        _price(point, cache[point.config], scale, band, request)
        front.add(point.predicted_s, point.cost)
        if point.meets_deadline:
            bisect.insort(feasible_costs, point.cost)
    # A point skipped before its configuration was replayed for another is priced too.
    for point in points:
        if not point.evaluated and point.config in cache:
            _price(point, cache[point.config], scale, band, request)
    tuning = Tuning(predictor.partition_knob())
    if tuning.knob is not None:
        points = points + tune_settings(predictor, points, band, request, tuning)
    if progress is not None:
        progress(len(order), len(order))
    answer = _answer(points, band, request, len(cache))
    answer.tuning = tuning
    answer.notes.append(tuning.note())
    for settings, why in tuning.refused.items():
        answer.notes.append(f"settings not predicted ({settings}): {why}")
    return answer


def tune_settings(
    predictor: Engine, points: list[Point], band: Band, r: Request, tuning: Tuning
) -> list[Point]:
    """The points whose settings can still change the answer (`points_to_tune`), each
    predicted again under the candidate values of the knob in control
    (`perfmodel.recommend.tuning`): one new point per (configuration, value) predicted at
    least `MIN_GAIN` faster than the configuration with the run's settings."""
    assert tuning.knob is not None
    cache: dict[tuple[ClusterConfig, tuple[tuple[str, str], ...]], Prediction] = {}
    out: list[Point] = []
    chosen = points_to_tune(points, r)
    tuning.tuned_points = len(chosen)
    for point in chosen:
        for settings in candidate_settings(tuning.knob, point.config.slots):
            key = (point.config, tuple(sorted(settings.items())))
            if key not in cache:
                try:
                    cache[key] = predictor.predict_settings(settings, point.config)
                except PerfmodelError as exc:
                    text = ",".join(f"{k}={v}" for k, v in settings.items())
                    tuning.refused[text] = str(exc)
                    continue
            # Bounds are of the run's own partitions: a re-split point has none but 0.
            variant = replace(point, settings=settings, evaluated=False, lower_bound_s=0.0)
            _price(variant, cache[key], r.calibration, band, r)
            if variant.predicted_s > (1.0 - MIN_GAIN) * point.predicted_s:
                tuning.below_gain += 1
                continue
            out.append(variant)
    tuning.replays = len(cache)
    return out


def points_to_tune(points: Sequence[Point], r: Request) -> list[Point]:
    """Replayed points whose settings can still change the answer, at most
    `MAX_TUNED_POINTS`: the fastest within the budget (a budget alone), the cheapest
    meeting the deadline, the cheaper points of the time/cost front that missed it
    (nearest the deadline first), the next cheapest meeting it, then the rest of the
    front by cost."""
    evaluated = [p for p in points if p.evaluated]
    by_cost = sorted(evaluated, key=lambda p: (p.cost, p.predicted_s))
    meeting = [p for p in by_cost if p.meets_deadline and p.within_budget]
    front = pareto_front(evaluated, lambda p: p.predicted_s, lambda p: p.cost)
    order: list[Point] = []
    if r.budget_usd is not None and r.deadline_s is None:
        within = sorted((p for p in evaluated if p.within_budget), key=lambda p: p.predicted_s)
        order += within[:1]
    order += meeting[:1]
    order += sorted((p for p in front if not p.meets_deadline), key=lambda p: -p.cost)
    order += meeting[1 : r.top]
    order += sorted(front, key=lambda p: p.cost)
    out: list[Point] = []
    seen: set[int] = set()
    for p in order:
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out[:MAX_TUNED_POINTS]


def _skippable(
    point: Point,
    front: Front,
    feasible_costs: list[float],
    band: Band,
    deadline: float,
    r: Request,
) -> bool:
    """Whether the point's bounds rule it out of the front and of the ``top`` list."""
    slack = 1.0 + r.tolerance
    t_lb, c_lb = point.lower_bound_s, _cost(point, point.lower_bound_s)
    c_near = c_lb * slack
    could_rank = band.upper(t_lb) <= deadline and (
        len(feasible_costs) < r.top or c_near <= feasible_costs[r.top - 1]
    )
    return not could_rank and _dominated(front, t_lb * slack, c_near, r.tolerance)


def _dominated(front: Front, time: float, cost: float, tolerance: float) -> bool:
    """Whether a replayed point is at least as good as (time, cost) and, when skipping must
    be exact (``tolerance`` 0), strictly better in one of the two."""
    if tolerance > 0:
        return front.dominates(time, cost)
    faster = front.dominates(math.nextafter(time, -math.inf), cost)
    return faster or front.dominates(time, math.nextafter(cost, -math.inf))


def _cost(point: Point, runtime_s: float) -> float:
    return run_cost(runtime_s, point.machine, point.billed_nodes)


def _price(point: Point, prediction: Prediction, scale: float, band: Band, r: Request) -> None:
    """The point's time, cost and limits. Its upper end is its own prediction's interval
    where that is wider than ``band`` (the baseline's): a far change is less certain, and
    `predict` on the same configuration says so. Never narrower than ``band``, so the
    search's bounds, which use ``band``, skip only points that could not meet a deadline."""
    point.evaluated = True
    point.raw_predicted_s = prediction.predicted_s
    point.predicted_s = prediction.predicted_s * scale
    own = interval_band(prediction)
    upper = band if own is None or own.relative <= band.relative else own
    point.upper_s = upper.upper(point.predicted_s)
    point.bottleneck = prediction.bottleneck
    point.cost = _cost(point, point.predicted_s)
    point.cost_upper = _cost(point, point.upper_s)
    point.meets_deadline = r.deadline_s is None or point.upper_s <= r.deadline_s
    point.within_budget = r.budget_usd is None or point.cost <= r.budget_usd


def _answer(points: list[Point], band: Band, r: Request, replays: int) -> SearchResult:
    evaluated = [p for p in points if p.evaluated]
    pareto = pareto_front(evaluated, lambda p: p.predicted_s, lambda p: p.cost)
    by_cost = sorted(evaluated, key=lambda p: (p.cost, p.predicted_s))
    by_time = sorted(evaluated, key=lambda p: (p.predicted_s, p.cost))
    meeting = [p for p in by_cost if p.meets_deadline]
    within = [p for p in by_time if p.within_budget]
    cheapest = meeting[0] if meeting else None
    fastest_within = within[0] if within else None
    fastest = by_time[0]
    notes: list[str] = []
    if r.deadline_s is not None and cheapest is None:
        # More nodes can help only where the fastest point already uses all it may.
        if fastest.nodes < r.max_nodes:
            hint = (
                f"more nodes would not be faster (the fastest uses {fastest.nodes} of the "
                f"{r.max_nodes} allowed): allow a later deadline"
            )
        else:
            hint = "allow more nodes (--max-nodes) or a later deadline"
        raise RecommendError(
            f"no configuration meets the deadline of {_dur(r.deadline_s)} at the upper bound "
            f"(at least +{band.relative:.0%}, {band.source}): the fastest is {_name(fastest)}, "
            f"predicted {_dur(fastest.predicted_s)} (upper {_dur(fastest.upper_s)}); {hint}"
        )
    if r.budget_usd is not None and fastest_within is None:
        cheapest_all = by_cost[0]
        raise RecommendError(
            f"no configuration costs at most ${r.budget_usd:g}: the cheapest is "
            f"{_name(cheapest_all)} at ${cheapest_all.cost:.4f} "
            f"(predicted {_dur(cheapest_all.predicted_s)})"
        )
    if r.deadline_s is not None:
        assert cheapest is not None
        recommended = cheapest
        if r.budget_usd is not None and not cheapest.within_budget:
            raise RecommendError(
                f"no configuration meets both the deadline of {_dur(r.deadline_s)} and the "
                f"budget of ${r.budget_usd:g}: the cheapest meeting the deadline is "
                f"{_name(cheapest)} at ${cheapest.cost:.4f}"
            )
    elif r.budget_usd is not None:
        assert fastest_within is not None
        recommended = fastest_within
    else:
        recommended = by_cost[0]
        notes.append("no --deadline or --budget: the cheapest configuration is recommended")
    return SearchResult(
        points=points,
        pareto=pareto,
        top=meeting[: r.top] if r.deadline_s is not None else by_cost[: r.top],
        cheapest_meeting_deadline=cheapest if r.deadline_s is not None else None,
        fastest_within_budget=fastest_within if r.budget_usd is not None else None,
        recommended=recommended,
        band=band,
        request=r,
        replays=replays,
        unique_configs=len({p.config for p in points}),
        notes=notes,
    )


def _name(p: Point) -> str:
    return f"{p.nodes} × {p.machine.vm_type} ({p.layout.label})"


def _dur(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.2f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}min"
    return f"{seconds:.1f}s"
