"""Fit the prediction intervals on the fit workloads of a held-out split.

`perfmodel experiment calibrate --store S --split experiments/splits/default.toml --out
perfmodel/data/intervals.json` replays every pair of the store's runs of *fit* workloads
only (bundle and bare log; ``--store`` again pools more studies), turns each into a
residual ``log(measured / predicted)`` with its own widening taken out, and writes the
quantiles per input and workload class, and the range of scale factors (task slots,
executors, heap, bandwidth...) the pairs spanned, beyond which a prediction's interval is
widened (`perfmodel.simulate.intervals`). Held-out workloads are never read, so the coverage the
study reports on them is a real test of the intervals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

from perfmodel.experiment.accuracy import evaluate
from perfmodel.experiment.results import PairResult
from perfmodel.experiment.split import FIT, Split
from perfmodel.runs.store import RunStore
from perfmodel.simulate.intervals import (
    BARE_LOG,
    BUNDLE,
    INPUTS,
    LEVEL,
    CalibrationError,
    IntervalModel,
    Residual,
    cluster_kind,
    fit_intervals,
)


def residuals_of(pairs: Sequence[PairResult]) -> list[Residual]:
    """One residual per pair and input (its bundle's prediction, and its bare log's where
    the variants were replayed); a pair whose baseline ran on a cluster is a residual of
    the input's cluster calibration (`cluster_kind`)."""
    out: list[Residual] = []
    for p in pairs:
        if p.measured_s <= 0:
            continue
        cls = p.workload_class or "unknown"
        bundle, bare = (cluster_kind(BUNDLE), cluster_kind(BARE_LOG)) if p.cluster else INPUTS
        if p.predicted_s > 0:
            widen = 0.0 if math.isnan(p.widening) else p.widening
            ratio = math.log(p.measured_s / p.predicted_s)
            out.append(Residual(p.workload, cls, bundle, ratio, widen, dict(p.scale)))
        if not math.isnan(p.bare_log_s) and p.bare_log_s > 0:
            widen = 0.0 if math.isnan(p.bare_log_widening) else p.bare_log_widening
            ratio = math.log(p.measured_s / p.bare_log_s)
            out.append(Residual(p.workload, cls, bare, ratio, widen, dict(p.bare_log_scale)))
    return out


def calibrate(
    stores: RunStore | Sequence[RunStore],
    split: Split,
    level: float = LEVEL,
    variants: bool = True,
) -> IntervalModel:
    """Intervals fitted on the split's fit workloads in ``stores`` (held-out runs unread).

    Several stores (studies of the fit workloads on different days) pool their pairs per
    workload: a workload's band then holds the noise between studies too, which a new
    workload's prediction meets as well. Pairs are made within a store only."""
    stores = [stores] if isinstance(stores, RunStore) else list(stores)
    residuals: list[Residual] = []
    for store in stores:
        runs = [r for r in store.runs() if split.role(r.workload) == FIT]
        if runs:
            report = evaluate(store, runs, save=False, variants=variants)
            residuals += residuals_of(report.pairs)
    if not residuals:
        names = ", ".join(str(s.path) for s in stores)
        raise CalibrationError(
            f"{names}: no runs of the fit workloads ({', '.join(sorted(split.fit))})"
        )
    source = (
        f"perfmodel experiment calibrate, {', '.join(Path(s.path).name for s in stores)}, "
        f"split {split.path}, {time.strftime('%Y-%m-%d')}"
    )
    return fit_intervals(residuals, level, source)
