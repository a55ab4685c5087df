"""The prediction interval a deadline is checked against.

Every prediction carries an 80% interval (`perfmodel.simulate.intervals`: calibration
residuals by workload class, widened by the self-check error and unknown time). This
module turns it into a relative band around the estimate, and the search treats a point as
meeting a deadline only when the band's **upper** end does:

* given the baseline's `Prediction` (``prediction=``), the band is its interval: the upper
  end's relative distance above the estimate, and the lower end's below;
* without one, the half-width is `DEFAULT_BAND` (15 %), widened to the model's self-check
  error on this profile, ``|model_error|``, when that is larger;
* with history (`perfmodel.recommend.history`), it widens to the calibrated model's
  leave-one-out error on the stored runs, when that is larger.

That band is a floor: each replayed point's upper end is its own prediction's interval
where that is wider (a change far from the profiled run widens it), as `predict` reports
for the same configuration (`perfmodel.recommend.search`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfmodel.analysis import Prediction

DEFAULT_BAND = 0.15


@dataclass(frozen=True, slots=True)
class Band:
    """A relative half-width and where it came from."""

    relative: float
    source: str
    low_relative: float | None = None
    """Relative distance of the lower end below the estimate, where it differs from
    ``relative`` (intervals are not symmetric)."""

    def upper(self, predicted_s: float) -> float:
        return predicted_s * (1.0 + self.relative)

    def lower(self, predicted_s: float) -> float:
        below = self.relative if self.low_relative is None else self.low_relative
        return predicted_s * max(0.0, 1.0 - below)


def prediction_band(
    model_error: float,
    loo_error: float | None = None,
    default: float = DEFAULT_BAND,
    *,
    prediction: Prediction | None = None,
) -> Band:
    """The relative band used for every point of one recommendation."""
    if prediction is not None:
        band = interval_band(prediction)
        if band is not None:
            if loo_error is not None and loo_error > band.relative:
                source = f"leave-one-out error on stored runs ({loo_error:.1%})"
                return Band(loo_error, source, band.low_relative)
            return band
    width, source = default, f"default ±{default:.0%}"
    if abs(model_error) > width:
        width, source = abs(model_error), f"the model's self-check error ({model_error:+.1%})"
    if loo_error is not None and loo_error > width:
        width, source = loo_error, f"leave-one-out error on stored runs ({loo_error:.1%})"
    return Band(width, source)


def interval_band(prediction: Prediction) -> Band | None:
    """The prediction's own interval as a relative band; None when it carries none."""
    low, high, mid = prediction.predicted_low_s, prediction.predicted_high_s, prediction.predicted_s
    if math.isnan(low) or math.isnan(high) or mid <= 0:
        return None
    return Band(
        max(0.0, high / mid - 1.0),
        prediction.interval_source or "the prediction's interval",
        max(0.0, 1.0 - low / mid),
    )
