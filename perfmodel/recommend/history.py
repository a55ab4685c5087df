"""History as provenance: stored runs of the same application calibrate its predictions.

The replay predicts from one profiled run. When the run store (`perfmodel experiment`)
holds several runs of the same application (one experiment name, one set of parameters)
under different configurations, their measured runtimes say how far this model is off
*for this application*. The correction is one multiplicative factor, the geometric mean
of measured ÷ predicted over those runs (each predicted from the profiled run, on the
run's own cores and heap), because the model's errors are mostly proportional (a missed
per-task cost, JVM warm-up). Its effect is shown by leave-one-out: each run is predicted
with the factor fitted on the others, and the mean error with and without the factor is
reported. The leave-one-out error also widens the deadline band
(`perfmodel.recommend.uncertainty`).

Stored runs are local-mode runs (what `perfmodel experiment` measures), so calibration
needs a local-mode profiled run; on a cluster profile it is refused.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perfmodel.errors import PerfmodelError
from perfmodel.runs.rows import RunRow
from perfmodel.runs.store import RunStore
from perfmodel.simulate.config import DEFAULT_MEMORY_BYTES, WhatIf

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis

MIN_RUNS = 2
"""Leave-one-out needs at least two runs."""


class HistoryError(PerfmodelError):
    """Stored runs that cannot calibrate this profile; the message says why."""


@dataclass(slots=True)
class CalibrationRun:
    run_id: int
    config: str
    cores: int
    memory_bytes: int
    measured_s: float
    predicted_s: float
    """Uncalibrated prediction from the profiled run."""
    loo_factor: float = math.nan
    """The factor fitted on every other run."""

    @property
    def error(self) -> float:
        return abs(self.predicted_s - self.measured_s) / self.measured_s

    @property
    def loo_error(self) -> float:
        return abs(self.predicted_s * self.loo_factor - self.measured_s) / self.measured_s

    def as_dict(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "config": self.config,
            "cores": self.cores,
            "memory_bytes": self.memory_bytes,
            "measured_s": self.measured_s,
            "predicted_s": self.predicted_s,
            "error": self.error,
            "loo_factor": self.loo_factor,
            "loo_error": self.loo_error,
        }


@dataclass(slots=True)
class Calibration:
    """The fitted factor, the runs behind it and its leave-one-out effect."""

    experiment: str
    factor: float
    runs: list[CalibrationRun] = field(default_factory=list)

    @property
    def mean_error(self) -> float:
        """Mean |predicted − measured| ÷ measured without calibration."""
        return statistics.fmean(r.error for r in self.runs)

    @property
    def mean_loo_error(self) -> float:
        """The same with each run's leave-one-out factor applied."""
        return statistics.fmean(r.loo_error for r in self.runs)

    @property
    def rms_loo_error(self) -> float:
        return math.sqrt(statistics.fmean(r.loo_error**2 for r in self.runs))

    def as_dict(self) -> dict[str, object]:
        return {
            "experiment": self.experiment,
            "factor": self.factor,
            "runs": [r.as_dict() for r in self.runs],
            "mean_error": self.mean_error,
            "mean_loo_error": self.mean_loo_error,
            "rms_loo_error": self.rms_loo_error,
        }


def calibrate(analysis: Analysis, store_path: str | Path | None, experiment: str) -> Calibration:
    """Fit the application's factor on the experiment's stored runs (see module doc)."""
    baseline = analysis.baseline
    if not baseline.local_mode:
        raise HistoryError(
            "--history calibrates with stored local-mode runs; the profiled run is a cluster "
            "run, so its predictions cannot be checked against them"
        )
    with RunStore(store_path, create=False) as store:
        rows = store.runs(experiment=experiment, status="ok")
    usable = [r for r in rows if not r.warmup and r.app_s and r.cores]
    if not usable:
        raise HistoryError(
            f"the run store holds no finished run of experiment {experiment!r} "
            "(see `perfmodel runs list`)"
        )
    usable = _same_parameters(usable, analysis)
    runs = [
        CalibrationRun(
            run_id=r.id,
            config=r.config,
            cores=int(r.cores or 1),
            memory_bytes=int(r.memory_bytes or DEFAULT_MEMORY_BYTES),
            measured_s=float(r.app_s or 0.0),
            predicted_s=analysis.predict(
                WhatIf(cores=r.cores, memory_bytes=r.memory_bytes or DEFAULT_MEMORY_BYTES)
            ).predicted_s,
        )
        for r in usable
    ]
    runs = [r for r in runs if r.predicted_s > 0 and r.measured_s > 0]
    if len(runs) < MIN_RUNS:
        raise HistoryError(
            f"experiment {experiment!r} has {len(runs)} usable run(s) with the profiled run's "
            f"parameters; calibration needs at least {MIN_RUNS}"
        )
    for i, run in enumerate(runs):
        run.loo_factor = _factor([r for j, r in enumerate(runs) if j != i])
    return Calibration(experiment=experiment, factor=_factor(runs), runs=runs)


def _factor(runs: list[CalibrationRun]) -> float:
    return math.exp(statistics.fmean(math.log(r.measured_s / r.predicted_s) for r in runs))


def _same_parameters(rows: list[RunRow], analysis: Analysis) -> list[RunRow]:
    """The runs with the profiled run's parameters (data size...): found by its bundle path
    among the runs, else the parameters most runs share."""
    source = Path(analysis.source).resolve()
    key_of = {r.id: json.dumps(r.params, sort_keys=True) for r in rows}
    mine = [key_of[r.id] for r in rows if r.bundle_path and _contains(Path(r.bundle_path), source)]
    if mine:
        key = mine[0]
    else:
        counts: dict[str, int] = {}
        for k in key_of.values():
            counts[k] = counts.get(k, 0) + 1
        key = max(counts.items(), key=lambda kv: kv[1])[0]
    return [r for r in rows if key_of[r.id] == key]


def _contains(bundle: Path, source: Path) -> bool:
    try:
        b = bundle.resolve()
    except OSError:
        return False
    return source == b or b in source.parents
