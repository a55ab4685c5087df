"""Predicted runtime over a grid of configurations (``--sweep cores=1,2,4 mem=2g,4g``).

The profile is compiled once and only rescaled and rescheduled per point, so a grid of a
few dozen points costs little more than one replay each.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf, apply_what_if
from perfmodel.simulate.replay import Prediction, replay_baseline, replay_workload
from perfmodel.simulate.units import parse_bandwidth, parse_factor, parse_size
from perfmodel.simulate.workload import Workload

AXES: tuple[str, ...] = (
    "cores",
    "executors",
    "executor-cores",
    "mem",
    "cpu-speed",
    "disk-bw",
    "net-bw",
    "host-cores",
)
"""Sweepable settings, named as the ``predict`` options are."""

MAX_SWEEP_POINTS = 10_000
"""Most grid points one sweep may have: each is a full replay, and the product of a few
long axes grows fast enough to run for hours or exhaust memory."""


_MAX_SPEC_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class SweepAxis:
    name: str
    values: tuple[str, ...]


@dataclass(slots=True)
class SweepPoint:
    """One grid point: the setting values as the user wrote them, and the prediction."""

    settings: dict[str, str]
    prediction: Prediction

    def summary(self) -> SweepPoint:
        """The point without its per-stage predictions (what a table of the grid shows):
        on a log of thousands of stages they are most of a point's memory."""
        return SweepPoint(self.settings, replace(self.prediction, stages=[]))


def is_axis_spec(text: str) -> bool:
    """True for ``name=v1,v2`` with a known axis name."""
    name, sep, _ = text.partition("=")
    return bool(sep) and name.strip().lower().replace("_", "-") in AXES


def parse_axes(specs: Sequence[str]) -> list[SweepAxis]:
    """``["cores=1,2,4", "mem=2g,4g"]`` → axes; each value is checked now, not mid-sweep."""
    axes: list[SweepAxis] = []
    seen: set[str] = set()
    for spec in specs:
        if len(spec) > _MAX_SPEC_CHARS:
            raise ConfigError(f"--sweep axis {spec[:40]!r}… is over {_MAX_SPEC_CHARS:,} characters")
        name, sep, values = spec.partition("=")
        key = name.strip().lower().replace("_", "-")
        if not sep or key not in AXES:
            raise ConfigError(
                f"cannot read sweep axis {spec!r}: write NAME=V1,V2,... with NAME one of "
                + ", ".join(AXES)
            )
        if key in seen:
            raise ConfigError(f"sweep axis {key!r} given twice")
        seen.add(key)
        vals = tuple(v.strip() for v in values.split(",") if v.strip())
        if not vals:
            raise ConfigError(f"sweep axis {key!r} has no values")
        if len(vals) > MAX_SWEEP_POINTS:
            raise ConfigError(
                f"sweep axis {key!r} has {len(vals):,} values; a sweep may have at most "
                f"{MAX_SWEEP_POINTS:,} points"
            )
        for v in vals:
            what_if_for({key: v})
        axes.append(SweepAxis(key, vals))
    if not axes:
        raise ConfigError("--sweep needs at least one axis, e.g. --sweep cores=1,2,4,8")
    _check_size(axes)
    return axes


def _check_size(axes: Sequence[SweepAxis]) -> None:
    points = math.prod(len(axis.values) for axis in axes)
    if points > MAX_SWEEP_POINTS:
        sizes = " × ".join(f"{len(a.values)} {a.name}" for a in axes)
        raise ConfigError(
            f"--sweep has {points:,} points ({sizes}); a sweep may have at most "
            f"{MAX_SWEEP_POINTS:,}: use fewer values per axis"
        )


def what_if_for(settings: dict[str, str], base: WhatIf | None = None) -> WhatIf:
    """The change a set of ``axis → value`` settings describes (on top of ``base``)."""
    fields: dict[str, object] = {}
    if base is not None:
        fields = {name: getattr(base, name) for name in WhatIf.__slots__}
    for key, value in settings.items():
        if key in ("cores", "executors", "executor-cores", "host-cores"):
            fields[key.replace("-", "_")] = _int(key, value)
        elif key == "mem":
            fields["memory_bytes"] = parse_size(value)
        elif key == "cpu-speed":
            fields["cpu_speed"] = _float(key, value)
        elif key in ("disk-bw", "net-bw"):
            prefix = key.split("-")[0]
            factor = parse_factor(value)
            if factor is not None:
                fields[f"{prefix}_factor"] = factor
                fields[f"{prefix}_bw"] = None
            else:
                fields[f"{prefix}_bw"] = parse_bandwidth(value)
                fields[f"{prefix}_factor"] = None
    return WhatIf(**fields)  # type: ignore[arg-type]


def sweep_points(
    axes: Sequence[SweepAxis], fixed: WhatIf | None = None
) -> list[tuple[dict[str, str], WhatIf]]:
    """Every point of the grid (the product of the axes) as settings and the change they make."""
    _check_size(axes)
    points: list[tuple[dict[str, str], WhatIf]] = []
    for combo in itertools.product(*(axis.values for axis in axes)):
        settings = {axis.name: value for axis, value in zip(axes, combo, strict=True)}
        points.append((settings, what_if_for(settings, fixed)))
    return points


def run_sweep(
    workload: Workload,
    base: ClusterConfig,
    axes: Sequence[SweepAxis],
    fixed: WhatIf | None = None,
) -> list[SweepPoint]:
    """Predict every point of the grid on a compiled workload (the facade's `sweep` is the
    usual way in; this serves code that holds a workload but no profile)."""
    baseline = replay_baseline(workload, base)
    return [
        SweepPoint(settings, replay_workload(workload, base, apply_what_if(base, change), baseline))
        for settings, change in sweep_points(axes, fixed)
    ]


def _int(key: str, value: str) -> int:
    if len(value) > 30 or not value.strip().lstrip("+-").isdigit():
        raise ConfigError(f"--sweep {key}: {value[:40]!r} is not a whole number")
    return int(value)


def _float(key: str, value: str) -> float:
    try:
        return float(value.rstrip("x×"))
    except ValueError:
        raise ConfigError(f"--sweep {key}: {value[:40]!r} is not a number") from None
