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
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from perfmodel.errors import PerfmodelError

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
POOLED = "all"
PACKAGE_FILE = "intervals.json"


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
        return {
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
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CalibrationError(f"malformed interval calibration: {exc}") from exc


def load_intervals(path: str | Path | None = None) -> IntervalModel:
    """The calibration at ``path``, else the one shipped in the package, else uncalibrated."""
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CalibrationError(f"cannot read {path}: {exc}") from exc
    else:
        shipped = resources.files("perfmodel.data").joinpath(PACKAGE_FILE)
        if not shipped.is_file():
            return IntervalModel()
        text = shipped.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"interval calibration is not JSON: {exc}") from exc
    return IntervalModel.from_dict(data)


@functools.cache
def shipped_intervals() -> IntervalModel:
    """The package's calibration, read once per process."""
    return load_intervals()


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


def interval(
    model: IntervalModel,
    input_kind: str,
    workload_class: str,
    predicted_s: float,
    widen: float,
) -> tuple[float, float, str]:
    """(low, high, source) seconds around ``predicted_s``."""
    q, phrase = model.for_class(input_kind, workload_class)
    low = predicted_s * math.exp(min(q.low, 0.0) - widen)
    high = predicted_s * math.exp(max(q.high, 0.0) + widen)
    source = f"{model.level:.0%} interval, {phrase}"
    if widen > 0:
        source += f", widened ×{math.exp(widen):.2f} by self-check error and unknown time"
    return low, high, source


def _quantile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated quantile (numpy's default), without numpy for a few values."""
    xs = sorted(values)
    pos = p * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def fit_intervals(
    residuals: Sequence[Residual], level: float = LEVEL, source: str = ""
) -> IntervalModel:
    """Per input and class (and pooled per input): the envelope of each fit workload's own
    quantiles of its residual cores (see the module's docstring for why)."""
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
        i: {c: _envelope(by_workload, tail) for c, by_workload in sorted(cs.items())}
        for i, cs in sorted(groups.items())
    }
    return IntervalModel(
        level=level,
        quantiles=quantiles,
        fitted_on=sorted({r.workload for r in residuals}),
        source=source,
    )


def _envelope(by_workload: dict[str, list[float]], tail: float) -> Quantiles:
    lows = [_quantile(v, tail) for v in by_workload.values()]
    highs = [_quantile(v, 1.0 - tail) for v in by_workload.values()]
    pairs = sum(len(v) for v in by_workload.values())
    return Quantiles(min(lows), max(highs), pairs, len(by_workload))
