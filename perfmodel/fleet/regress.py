"""Regressions: an application that got slower than its own history says it should.

For every application name with at least `MIN_RUNS` complete runs, the latest run (by
start time) is compared with the runs before it (at most `WINDOW` of them):

    regression  ⇔  latest > median(earlier) + max(K × 1.4826 × MAD(earlier),
                                               MIN_GROWTH × median(earlier),
                                               MIN_SECONDS)

MAD is the median absolute deviation (× 1.4826 it estimates the standard deviation of
normal noise, robust to an earlier outlier). The two floors keep identical earlier runs
(MAD = 0) and sub-second jobs from flagging noise. The same test runs on each stage's time
(per stage id, attempts summed), so a regression names the stage that grew. Incomplete
runs (still running, cut off) are left out: their durations are not run times, and so
are the names Spark gives interactive sessions (`SHELL_NAMES`): every ``spark-shell`` is
called "Spark shell", and unrelated sessions are not runs of one job.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from perfmodel.fleet.schema import REGRESSIONS, Table, table_from_rows

MIN_RUNS = 3
WINDOW = 20
K = 3.0
MAD_TO_SIGMA = 1.4826
MIN_GROWTH = 0.2
MIN_SECONDS = 1.0
SHELL_NAMES = frozenset({"Spark shell", "PySparkShell", "SparkR", "sparklyr", "Spark Connect"})


def threshold(earlier: list[float]) -> tuple[float, float, float]:
    """``(median, MAD, threshold)`` of earlier run times."""
    median = statistics.median(earlier)
    mad = statistics.median(abs(x - median) for x in earlier)
    margin = max(K * MAD_TO_SIGMA * mad, MIN_GROWTH * median, MIN_SECONDS)
    return median, mad, median + margin


def _check(series: list[tuple[Any, str, str, float]]) -> dict[str, Any] | None:
    """``series``: (start, log_path, app_id, seconds) in run order; the latest is tested."""
    if len(series) < MIN_RUNS:
        return None
    *earlier, latest = series
    earlier = earlier[-WINDOW:]
    median, mad, limit = threshold([s for *_, s in earlier])
    if latest[3] <= limit:
        return None
    return {
        "runs": len(earlier) + 1,
        "latest_log": latest[1],
        "latest_app_id": latest[2],
        "latest_s": latest[3],
        "baseline_median_s": median,
        "baseline_mad_s": mad,
        "threshold_s": limit,
        "growth": latest[3] / median if median > 0 else None,
        "earlier_app_ids": [app_id for _, _, app_id, _ in earlier],
    }


def find_regressions(apps: Table, stages: Table) -> Table:
    """Every regression in the fleet's tables (whole runs and stages)."""
    runs: dict[str, list[tuple[Any, str, str, float]]] = defaultdict(list)
    order: dict[str, tuple[Any, str]] = {}
    for r in apps.rows(["log_path", "app_id", "app_name", "start", "duration_s", "complete"]):
        if r["app_name"] in SHELL_NAMES:
            continue
        if not r["complete"] or not r["app_name"] or r["start"] is None or r["duration_s"] is None:
            continue
        runs[r["app_name"]].append((r["start"], r["log_path"], r["app_id"], r["duration_s"]))
        order[r["log_path"]] = (r["start"], r["app_name"])
    rows: list[dict[str, Any]] = []
    for name, series in runs.items():
        series.sort(key=lambda s: (s[0], s[1]))
        found = _check(series)
        if found:
            rows.append({"app_name": name, "scope": "app", **found})
    stage_time: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    stage_name: dict[tuple[str, int], str] = {}
    cols = ["log_path", "stage_id", "name", "duration_s"]
    for r in stages.rows(cols):
        where = order.get(r["log_path"])
        if where is None:
            continue
        key = (where[1], r["stage_id"])
        stage_time[key][r["log_path"]] += r["duration_s"] or 0.0
        stage_name.setdefault(key, r["name"] or "")
    by_path = {s[1]: s for series in runs.values() for s in series}
    for (app_name, stage_id), per_log in stage_time.items():
        series = sorted(
            ((by_path[p][0], p, by_path[p][2], t) for p, t in per_log.items()),
            key=lambda s: (s[0], s[1]),
        )
        if series and series[-1][1] != runs[app_name][-1][1]:
            continue  # the latest run does not have this stage: nothing to compare
        found = _check(series)
        if found:
            rows.append(
                {
                    "app_name": app_name,
                    "scope": "stage",
                    "stage_id": stage_id,
                    "stage_name": stage_name[(app_name, stage_id)],
                    **found,
                }
            )
    return table_from_rows(rows, REGRESSIONS)
