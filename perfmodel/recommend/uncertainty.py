"""The prediction interval a deadline is checked against.

The replay gives a point estimate; the model has no intervals of its own yet. Until it
does, this one function turns what is known about the model's error into a relative band
around the estimate, and the search treats a point as meeting a deadline only when the
band's **upper** end does:

* the default half-width is `DEFAULT_BAND` (15 %);
* it widens to the model's self-check error on this profile, ``|model_error|`` (the
  baseline replay against the observed runtime), when that is larger;
* with history (`perfmodel.recommend.history`), it widens to the calibrated model's
  leave-one-out error on the stored runs, when that is larger.

Real intervals replace `prediction_band` alone.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_BAND = 0.15


@dataclass(frozen=True, slots=True)
class Band:
    """A relative half-width and where it came from."""

    relative: float
    source: str

    def upper(self, predicted_s: float) -> float:
        return predicted_s * (1.0 + self.relative)

    def lower(self, predicted_s: float) -> float:
        return predicted_s * max(0.0, 1.0 - self.relative)


def prediction_band(
    model_error: float, loo_error: float | None = None, default: float = DEFAULT_BAND
) -> Band:
    """The relative band used for every point of one recommendation."""
    width, source = default, f"default ±{default:.0%}"
    if abs(model_error) > width:
        width, source = abs(model_error), f"the model's self-check error ({model_error:+.1%})"
    if loo_error is not None and loo_error > width:
        width, source = loo_error, f"leave-one-out error on stored runs ({loo_error:.1%})"
    return Band(width, source)
