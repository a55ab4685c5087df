"""Fit the 80% interval of Dask predictions on Dask studies: `perfmodel/data/intervals-dask.json`.

    python experiments/dask/calibrate.py build/dask-held-out-5 build/dask-held-out-6 \\
        --out perfmodel/data/intervals-dask.json

Each argument is a study's output directory (`experiments/dask/study.py`), whose
``study.json`` keeps every pair's prediction with its own widening and scale factors. A
pair is one residual, ``log(measured / predicted)`` with its widening taken out, of the
``bundle`` input and the ``dask`` class; a workload script's pairs from several studies are
one workload's (its runs on other days hold the noise between them too, as Spark's
calibration pools its stores). The quantiles are those of the workloads' residuals pooled
with equal weight per workload (`perfmodel.simulate.intervals.MIXTURE`, which says why not
Spark's envelope), with the range of scale factors the pairs spanned, beyond which a
prediction is widened. Studies written before the pairs kept their widening are refused by
name: re-report them first (``study.py --report-only``). The studies read here must not be
the ones the calibration is then judged on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from perfmodel.simulate.intervals import BUNDLE, MIXTURE, Residual, fit_intervals

CLASS = "dask"
"""The Dask front end's one workload class (`Analysis.workload_class`)."""


def residuals(study: Path) -> list[Residual]:
    """One residual per pair of ``study``'s report."""
    data = json.loads((study / "study.json").read_text())
    out = []
    for pair in data["pairs"]:
        if "widening" not in pair or "scale" not in pair:
            raise SystemExit(
                f"{study}: its pairs have no widening (written before it was kept); "
                f"re-report it: experiments/dask/study.py --out {study} --report-only"
            )
        if pair["measured_s"] <= 0 or pair["predicted_s"] <= 0:
            continue
        out.append(
            Residual(
                workload=pair["workload"],
                workload_class=CLASS,
                input=BUNDLE,
                log_ratio=math.log(pair["measured_s"] / pair["predicted_s"]),
                widening=float(pair["widening"]),
                scale={k: float(v) for k, v in pair["scale"].items()},
            )
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="+", type=Path, help="study output directories")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    fitted = [r for study in args.studies for r in residuals(study)]
    source = (
        f"experiments/dask/calibrate.py, {', '.join(s.name for s in args.studies)}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    model = fit_intervals(fitted, source=source, across=MIXTURE)
    args.out.write_text(json.dumps(model.as_dict(), indent=1) + "\n")
    pooled = model.quantiles[BUNDLE]["all"]
    print(
        f"{len(fitted)} pairs of {pooled.workloads} workloads: "
        f"{math.exp(pooled.low):.2f}× to {math.exp(pooled.high):.2f}× the prediction",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
