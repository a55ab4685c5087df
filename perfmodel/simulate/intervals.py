"""The 80% prediction interval every prediction carries.

Built from three things, each visible in ``interval_source``:

* **calibration residuals by workload class** — ``log(measured / predicted)`` of the
  validation study's pairs, fitted *only* on the fit workloads of the held-out split
  (`perfmodel experiment calibrate`), per input (a bundle, or a bare event log) and per
  workload class (`perfmodel.spark.pyspark_work.WORKLOAD_CLASSES`). Each fit workload gives
  its own 10th and 90th percentiles; the interval's ends (log scale) are the lowest and the
  highest of them: the band that held 80% of the pairs of *every* fit workload. Pairs of
  one workload share its errors, so pooling them as if independent gave a band as narrow
  as the typical workload's, and the first held-out study found 73% inside it; a new
  workload is one more draw of a workload, and the envelope is the conformal choice for
  that with a handful of them. A class with fewer than `MIN_WORKLOADS` workloads or
  `MIN_PAIRS` pairs uses all classes of its input pooled;
* **the profile's self-check error** — the baseline replay against the observed runtime:
  a model that cannot reproduce the run it was built from is trusted less elsewhere;
* **unknown time** — the share of task time nothing explained (no metric, no evidence):
  it may scale with the change or not at all, so its share of the predicted change is
  added to both sides.

Residuals are stored with each pair's own widening taken out (`residual_core`), so the
widenings added back at prediction time are not counted twice. Without a calibration file
the interval is the uncalibrated `DEFAULT_HALF_WIDTH`, and says so.

**Clusters.** A run on a cluster (executors apart from the driver, links between hosts)
is predicted with more that can go wrong than a local one: executors that start and
register, links, a machine its executors may share. Its predictions take the calibration of
cluster runs where the file has one: pairs whose baseline ran on a cluster are residuals of
their own input kind (`cluster_kind`: ``cluster bundle``, ``cluster bare-log``), fitted
apart from the local pairs, with their own range of scale factors. A prediction from a
cluster run takes the cluster calibration for the kinds of change its pairs made (the
dimensions its range varied: executors and task slots); another change of a cluster run,
and any cluster run where the file has no cluster calibration, uses the local one.

**Front ends.** Each front end has its own calibration file, fitted on its own studies: a
Dask run's pairs (threads and worker processes of one machine, the interpreter lock) are
nothing like a Spark run's, and a Spark calibration would vouch for changes it never saw.
A front end with no file gets the uncalibrated interval, and says so (`shipped_intervals`).

**Extrapolation.** The residuals vouch only for changes like the ones they came from. The
calibration therefore keeps, per input, the range of each scale factor (target ÷ baseline
of task slots, executors, heap, network and disk bandwidth, CPU speed: `scale_factors`) its
pairs spanned (`IntervalModel.scale_range`). A prediction whose change goes beyond that
range in some dimension by the factor ``e`` (on the log scale: ``log(ratio) − log(high)``
above the range, ``log(low) − log(ratio)`` below it) is calibrated for only the part of its
change inside the range; the part beyond, the share ``e / |log(ratio)|`` of the change in
that dimension, is treated as unknown time is: its effect may be all there or none of it,
so that share of the predicted change (``|log(predicted / baseline replay)|``) is added to
both sides (`extrapolation`). The widening grows with how far beyond the range the change
goes, is zero inside it, and has no constant fitted to any study. A dimension the
calibration never varied has the range ×1–×1, so any change in it is wholly beyond. A
calibration file written before the range was kept has none, and then nothing is widened
for extrapolation (the interval's wording does not mention it).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.config import ClusterConfig

LEVEL = 0.8
"""Nominal coverage of the interval."""
MIN_PAIRS = 5
"""Fewest residuals for a class to get its own quantiles."""
MIN_WORKLOADS = 3
"""Fewest fit workloads for a class to get its own quantiles: the envelope of one or two
workloads says little about the next one."""
DEFAULT_HALF_WIDTH = math.log(1.25)
"""Uncalibrated interval: ±25% on the log scale (about the bare-log error of issue 21)."""
BUNDLE = "bundle"
BARE_LOG = "bare-log"
INPUTS = (BUNDLE, BARE_LOG)
CLUSTER = "cluster"
POOLED = "all"
PACKAGE_FILE = "intervals.json"
SLOTS = "task slots"
EXECUTORS = "executors"
MEMORY = "memory"
NETWORK = "network bandwidth"
DISK = "disk bandwidth"
CPU_SPEED = "CPU speed"
SCALE_DIMENSIONS = (SLOTS, EXECUTORS, MEMORY, NETWORK, DISK, CPU_SPEED)
"""The scale factors a calibration records the range of (`scale_factors`)."""


def cluster_kind(input_kind: str) -> str:
    """The calibration key of ``input_kind``'s predictions from a cluster run."""
    return f"{CLUSTER} {input_kind}"


class CalibrationError(PerfmodelError):
    """A calibration file that cannot be read, or residuals that cannot be fitted."""


@dataclass(frozen=True, slots=True)
class Residual:
    """One validation pair, as the calibration sees it."""

    workload: str
    workload_class: str
    input: str
    log_ratio: float
    """log(measured / predicted)."""
    widening: float
    """The pair's own widening (`widening`), taken out before fitting."""
    scale: Mapping[str, float] = field(default_factory=dict)
    """Target ÷ baseline per dimension of the pair's change (`scale_factors`); empty when
    not known (then the pair adds nothing to the calibrated range)."""


@dataclass(frozen=True, slots=True)
class ScaleRange:
    """The smallest and largest scale factor (target ÷ baseline) of one dimension among a
    calibration's pairs; ×1 (no change) is always inside."""

    low: float
    high: float

    @property
    def varied(self) -> bool:
        """Whether the calibration's pairs changed this dimension at all (×1–×1: never)."""
        return not self.low == self.high == 1.0


@dataclass(frozen=True, slots=True)
class Extrapolation:
    """How far a prediction's change goes beyond the calibrated range, and what it adds."""

    dimension: str
    ratio: float
    """The change's target ÷ baseline in ``dimension``."""
    calibrated: ScaleRange
    share: float
    """The share of the change in ``dimension`` that lies beyond the range (0–1]."""
    widening: float
    """Extra half-width on the log scale: ``share × |log(predicted / baseline replay)|``."""

    def describe(self) -> str:
        """The extrapolation and the widening it got, in a user's words."""
        low, high = self.calibrated.low, self.calibrated.high
        if not self.calibrated.varied:
            where = f"{self.dimension} ×{_factor(self.ratio)}, a change the intervals' "
            where += "calibration never saw"
        else:
            where = f"{self.dimension} ×{_factor(self.ratio)}, beyond the ×{_factor(low)}–"
            where += f"×{_factor(high)} the intervals were calibrated on"
        part = (
            "the change"
            if self.share >= 1.0
            else f"the {self.share:.0%} of the change beyond that range"
        )
        return (
            f"{where}, so widened ×{math.exp(self.widening):.2f} ({part} may have all of its "
            "predicted effect or none)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "ratio": self.ratio,
            "calibrated_low": self.calibrated.low,
            "calibrated_high": self.calibrated.high,
            "share_beyond": self.share,
            "widening": math.exp(self.widening),
        }


def _factor(ratio: float) -> str:
    """A scale factor for people: ×0.25, ×2, ×1.5."""
    return f"{ratio:.2f}".rstrip("0").rstrip(".") if ratio < 10 else f"{ratio:.0f}"


def effective_slots(config: ClusterConfig) -> int:
    """Task slots the configuration can reach: under bounded dynamic allocation, those of
    ``maxExecutors`` executors (the policy's ceiling), else the static slots."""
    alloc = config.allocation
    if alloc.enabled and alloc.bounded:
        return max(1, alloc.max_executors * config.executor_cores // max(config.task_cpus, 1))
    return config.slots


def _executors(config: ClusterConfig) -> int:
    alloc = config.allocation
    if alloc.enabled and alloc.bounded:
        return max(1, alloc.max_executors)
    return max(1, config.executors)


def scale_factors(baseline: ClusterConfig, target: ClusterConfig) -> dict[str, float]:
    """Target ÷ baseline for each of `SCALE_DIMENSIONS`: the size of a what-if's change, in
    the terms the calibration's range is kept in. A dimension either side has no positive
    value for is left out."""
    pairs = {
        SLOTS: (effective_slots(baseline), effective_slots(target)),
        EXECUTORS: (_executors(baseline), _executors(target)),
        MEMORY: (baseline.memory_bytes, target.memory_bytes),
        NETWORK: (baseline.net_bw, target.net_bw),
        DISK: (baseline.disk_bw, target.disk_bw),
        CPU_SPEED: (baseline.cpu_speed, target.cpu_speed),
    }
    return {
        name: float(t) / float(b)
        for name, (b, t) in pairs.items()
        if b > 0 and t > 0 and math.isfinite(b) and math.isfinite(t)
    }


@dataclass(frozen=True, slots=True)
class Quantiles:
    low: float
    """Lower end on the log scale (log(measured/predicted) at (1 − level)/2)."""
    high: float
    pairs: int
    workloads: int = 0
    """Fit workloads the pairs came from (0 in files written before it was counted)."""


@dataclass(slots=True)
class IntervalModel:
    """Fitted quantiles per input and class, and where they came from."""

    level: float = LEVEL
    quantiles: dict[str, dict[str, Quantiles]] = field(default_factory=dict)
    """input → class (or `POOLED`) → quantiles."""
    fitted_on: list[str] = field(default_factory=list)
    source: str = "uncalibrated"
    scale_range: dict[str, dict[str, ScaleRange]] = field(default_factory=dict)
    """input → dimension → the scale factors the input's pairs spanned; empty in files
    written before it was kept (then no prediction is widened for extrapolating)."""

    def kind_for(
        self, input_kind: str, cluster: bool, scale: Mapping[str, float] | None = None
    ) -> str:
        """The calibration key a prediction from ``input_kind`` uses: its cluster
        calibration when the baseline ran on a cluster, the file has one, and the change
        moves some dimension (``scale``, `scale_factors`) and only dimensions the cluster
        pairs varied; else the input's own. The cluster pairs vouch for the changes
        they made (executors, on a machine the executors share): a change of another kind on
        a cluster (a link's bandwidth) is nothing like them, and keeps the calibration it had."""
        key = cluster_kind(input_kind)
        moved = {d: r for d, r in (scale or {}).items() if r != 1.0}
        if not cluster or key not in self.quantiles or not moved:
            return input_kind
        varied = self.scale_range.get(key, {})
        for dimension in moved:
            span = varied.get(dimension)
            if span is None or not span.varied:
                return input_kind
        return key

    def for_class(self, input_kind: str, workload_class: str) -> tuple[Quantiles, str]:
        """Quantiles for a prediction, and a short phrase naming them."""
        by_class = self.quantiles.get(input_kind, {})
        q = by_class.get(workload_class)
        if q is not None and q.pairs >= MIN_PAIRS and q.workloads >= MIN_WORKLOADS:
            return q, f"calibrated on {q.pairs} {workload_class} {input_kind} pairs"
        q = by_class.get(POOLED)
        if q is not None and q.pairs >= MIN_PAIRS:
            return q, f"calibrated on {q.pairs} {input_kind} pairs of all classes"
        h = DEFAULT_HALF_WIDTH
        return Quantiles(-h, h, 0), f"uncalibrated ±{math.expm1(h):.0%}"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "level": self.level,
            "source": self.source,
            "fitted_on": list(self.fitted_on),
            "quantiles": {
                i: {
                    c: {"low": q.low, "high": q.high, "pairs": q.pairs, "workloads": q.workloads}
                    for c, q in cs.items()
                }
                for i, cs in self.quantiles.items()
            },
        }
        if self.scale_range:
            out["scale_range"] = {
                i: {d: {"low": r.low, "high": r.high} for d, r in dims.items()}
                for i, dims in self.scale_range.items()
            }
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IntervalModel:
        try:
            return cls(
                level=float(data.get("level", LEVEL)),
                quantiles={
                    i: {
                        c: Quantiles(
                            float(q["low"]),
                            float(q["high"]),
                            int(q["pairs"]),
                            int(q.get("workloads", 0)),
                        )
                        for c, q in cs.items()
                    }
                    for i, cs in data.get("quantiles", {}).items()
                },
                fitted_on=[str(w) for w in data.get("fitted_on", [])],
                source=str(data.get("source", "")),
                scale_range={
                    i: {d: _scale_range(d, r) for d, r in dims.items()}
                    for i, dims in data.get("scale_range", {}).items()
                },
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CalibrationError(f"malformed interval calibration: {exc}") from exc


def _scale_range(dimension: str, data: dict[str, Any]) -> ScaleRange:
    low, high = float(data["low"]), float(data["high"])
    if not (0 < low <= 1 <= high < math.inf):
        raise ValueError(
            f"scale_range of {dimension}: low {low} and high {high} must hold 1 and be positive"
        )
    return ScaleRange(low, high)


def package_file(framework: str) -> str:
    """The name of ``framework``'s shipped calibration (`ApplicationProfile.framework`):
    ``intervals.json`` for Spark's runs, ``intervals-NAME.json`` for another front end's."""
    return PACKAGE_FILE if framework == "spark" else f"intervals-{framework}.json"


def load_intervals(path: str | Path | None = None, framework: str = "spark") -> IntervalModel:
    """The calibration at ``path``, else the one shipped in the package for ``framework``'s
    runs, else uncalibrated."""
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CalibrationError(f"cannot read {path}: {exc}") from exc
    else:
        shipped = resources.files("perfmodel.data").joinpath(package_file(framework))
        if not shipped.is_file():
            return IntervalModel()
        text = shipped.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"interval calibration is not JSON: {exc}") from exc
    return IntervalModel.from_dict(data)


@functools.cache
def shipped_intervals(framework: str = "spark") -> IntervalModel:
    """The package's calibration for ``framework``'s runs, read once per process."""
    return load_intervals(framework=framework)


def widening(
    model_error: float, unknown_share: float, predicted_s: float, baseline_replay_s: float
) -> float:
    """Extra half-width on the log scale: the self-check error, plus the unknown share of
    the predicted change (unknown time may follow the change or ignore it)."""
    self_check = abs(math.log1p(model_error)) if model_error > -1 else 1.0
    change = 0.0
    if predicted_s > 0 and baseline_replay_s > 0:
        change = abs(math.log(predicted_s / baseline_replay_s))
    return self_check + max(0.0, min(1.0, unknown_share)) * change


def residual_core(log_ratio: float, widen: float) -> float:
    """The residual with the pair's own widening taken out (towards 0, never past it)."""
    return math.copysign(max(0.0, abs(log_ratio) - widen), log_ratio)


def extrapolation(
    model: IntervalModel,
    input_kind: str,
    scale: Mapping[str, float],
    predicted_s: float,
    baseline_replay_s: float,
) -> Extrapolation | None:
    """The dimension in which ``scale`` (`scale_factors` of the prediction) goes furthest
    beyond the range ``model`` was calibrated on for ``input_kind``, as a share of its own
    change, and the widening that share of the predicted change gives; None when the change
    is inside the range, or the calibration kept no range (see the module's docstring)."""
    ranges = model.scale_range.get(input_kind)
    if not ranges:
        return None
    worst: tuple[float, str, float, ScaleRange] | None = None
    for dimension, ratio in scale.items():
        calibrated = ranges.get(dimension)
        if calibrated is None or ratio <= 0 or ratio == 1:
            continue
        x = math.log(ratio)
        beyond = max(0.0, x - math.log(calibrated.high), math.log(calibrated.low) - x)
        if beyond <= 0:
            continue
        share = min(1.0, beyond / abs(x))
        if worst is None or share > worst[0]:
            worst = (share, dimension, ratio, calibrated)
    if worst is None:
        return None
    share, dimension, ratio, calibrated = worst
    change = 0.0
    if predicted_s > 0 and baseline_replay_s > 0:
        change = abs(math.log(predicted_s / baseline_replay_s))
    return Extrapolation(dimension, ratio, calibrated, share, share * change)


def interval(
    model: IntervalModel,
    input_kind: str,
    workload_class: str,
    predicted_s: float,
    widen: float,
    beyond: Extrapolation | None = None,
) -> tuple[float, float, str]:
    """(low, high, source) seconds around ``predicted_s``; ``beyond``: the change goes
    beyond the calibrated range (`extrapolation`), which widens both sides and is said."""
    q, phrase = model.for_class(input_kind, workload_class)
    extra = beyond.widening if beyond is not None else 0.0
    low = predicted_s * math.exp(min(q.low, 0.0) - widen - extra)
    high = predicted_s * math.exp(max(q.high, 0.0) + widen + extra)
    source = f"{model.level:.0%} interval, {phrase}"
    if widen > 0:
        source += f", widened ×{math.exp(widen):.2f} by self-check error and unknown time"
    if beyond is not None:
        source += f"; extrapolated: {beyond.describe()}"
    return low, high, source


def _quantile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated quantile (numpy's default), without numpy for a few values."""
    xs = sorted(values)
    pos = p * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


ENVELOPE = "envelope"
"""Across fit workloads: the lowest and highest of their own quantiles (Spark's calibration,
a handful of workloads; see the module's docstring)."""
MIXTURE = "mixture"
"""Across fit workloads: the quantiles of their residuals pooled with equal weight per
workload, the distribution a new workload's pair is drawn from when the workload is a draw
too. Where the fit holds many workloads, a rare one whose runs the model cannot follow at
all would make the envelope its own band: the Dask fit's 15 workloads include two whose
runs on two workers were up to ten times slower than predicted, and their envelope is
0.30× to 12.9× the prediction."""


def fit_intervals(
    residuals: Sequence[Residual],
    level: float = LEVEL,
    source: str = "",
    across: str = ENVELOPE,
) -> IntervalModel:
    """Per input and class (and pooled per input): the quantiles of the residual cores
    across fit workloads, by their ``ENVELOPE`` (see the module's docstring for why) or
    their equal-weight ``MIXTURE``."""
    if across not in (ENVELOPE, MIXTURE):
        raise CalibrationError(f"across must be {ENVELOPE!r} or {MIXTURE!r}, not {across!r}")
    combine = _envelope if across == ENVELOPE else _mixture
    if not residuals:
        raise CalibrationError("no residuals to fit: the store has no pairs of fit workloads")
    tail = (1.0 - level) / 2.0
    groups: dict[str, dict[str, dict[str, list[float]]]] = {}
    for r in residuals:
        core = residual_core(r.log_ratio, r.widening)
        by_class = groups.setdefault(r.input, {})
        for cls in (r.workload_class, POOLED):
            by_class.setdefault(cls, {}).setdefault(r.workload, []).append(core)
    quantiles = {
        i: {c: combine(by_workload, tail) for c, by_workload in sorted(cs.items())}
        for i, cs in sorted(groups.items())
    }
    return IntervalModel(
        level=level,
        quantiles=quantiles,
        fitted_on=sorted({r.workload for r in residuals}),
        source=source,
        scale_range=calibrated_range(residuals),
    )


def calibrated_range(residuals: Sequence[Residual]) -> dict[str, dict[str, ScaleRange]]:
    """Per input, the range of each dimension's scale factor over the residuals that know
    theirs (×1 included); an input none of whose residuals does gets no range."""
    spans: dict[str, dict[str, list[float]]] = {}
    for r in residuals:
        if not r.scale:
            continue
        dims = spans.setdefault(r.input, {d: [1.0, 1.0] for d in SCALE_DIMENSIONS})
        for dimension, ratio in r.scale.items():
            if ratio > 0 and math.isfinite(ratio):
                span = dims.setdefault(dimension, [1.0, 1.0])
                span[0], span[1] = min(span[0], ratio), max(span[1], ratio)
    return {
        i: {d: ScaleRange(lo, hi) for d, (lo, hi) in sorted(dims.items())}
        for i, dims in sorted(spans.items())
    }


def _envelope(by_workload: dict[str, list[float]], tail: float) -> Quantiles:
    lows = [_quantile(v, tail) for v in by_workload.values()]
    highs = [_quantile(v, 1.0 - tail) for v in by_workload.values()]
    pairs = sum(len(v) for v in by_workload.values())
    return Quantiles(min(lows), max(highs), pairs, len(by_workload))


def _mixture(by_workload: dict[str, list[float]], tail: float) -> Quantiles:
    weighted = sorted(
        (x, 1.0 / (len(v) * len(by_workload))) for v in by_workload.values() for x in v
    )
    values = [x for x, _ in weighted]
    cumulative = list(itertools.accumulate(w for _, w in weighted))
    total = cumulative[-1]

    def at(p: float) -> float:
        i = bisect.bisect_left(cumulative, p * total)
        return values[min(i, len(values) - 1)]

    pairs = len(values)
    return Quantiles(at(tail), at(1.0 - tail), pairs, len(by_workload))
