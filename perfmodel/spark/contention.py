"""Cores a task really keeps busy, read off how much tasks slowed down beside each other.

Evidence. Tasks of one stage do the same work per record (or per byte), but they do not
all run at the same concurrency: the last tasks of a stage run alone or nearly so (the
stage's tail), skewed partitions outlast their neighbours, executors come and go. When
``k`` tasks run on a host of ``C`` cores and each keeps ``d`` cores busy (its task thread
plus what it causes outside it: a PySpark task's Python worker, GC and JIT threads),
processor sharing stretches each one's time by ``max(1, k·d/C)`` — the replay's own
contention law (`perfmodel.simulate.laws.contention_factor`). So, normalised by the work
each task did, time per record against concurrency rises with a slope set by ``d``; where
it stays flat the host was not short of cores and ``d ≤ C/k_max``.

The fit: per task, ``log(run time / work) = log a_stage + log max(1, k·d/C)``, one ``a``
per stage (each stage its own work per record), one ``d`` for all the stages pooled,
``d`` picked on a grid by least squares. It is believed only when stages hold tasks at
different concurrencies and the slowdown explains a real part of the variation
(`MIN_GAIN`); otherwise the answer says that nothing was seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.decomposition import decompose_table
from perfmodel.dag.model import ApplicationProfile, StageKey

DEMAND_GRID = np.round(np.arange(0.25, 4.0001, 0.05), 4)
"""Cores per task tried; 4 is past anything a task and its Python worker use."""
MIN_TASKS = 6
"""Fewest usable tasks (in stages with spread in concurrency) for a fit to be read."""
MIN_SPREAD = 0.3
"""A stage whose tasks' concurrencies span less than this says nothing about slowdown."""
MIN_GAIN = 0.05
"""Share of the residual variation the slowdown must explain to be believed."""
MIN_RUN_MS = 20.0
"""Shorter tasks are mostly fixed overhead, not work per record."""


@dataclass(frozen=True, slots=True)
class ContentionFit:
    """What the tasks' slowdown with concurrency says about their core demand."""

    demand: float | None
    """Cores one task keeps busy, where a slowdown was seen; None otherwise."""
    demand_at_most: float | None
    """Where tasks ran at several concurrencies without slowing: demand ≤ C/k_max."""
    tasks: int
    stages: int
    k_low: float
    k_high: float
    gain: float
    """Share of the variation of log(time per record) the slowdown explains."""

    @property
    def seen(self) -> bool:
        return self.demand is not None

    @property
    def evidence(self) -> str:
        if self.tasks == 0:
            return "no stage ran its tasks at different concurrencies"
        where = (
            f"{self.tasks} tasks of {self.stages} stage(s) ran at {self.k_low:.1f}–"
            f"{self.k_high:.1f} concurrent tasks"
        )
        if self.demand is not None:
            return (
                f"{where}; per record they slowed as {self.demand:.2f} cores per task would "
                f"({self.gain:.0%} of the variation explained)"
            )
        if self.demand_at_most is not None:
            return f"{where} without slowing down (≤ {self.demand_at_most:.2f} cores per task)"
        return f"{where}; the slowdown is too weak to read"


NOTHING = ContentionFit(None, None, 0, 0, 1.0, 1.0, 0.0)


def fit_contention(
    stage: np.ndarray,
    run_ms: np.ndarray,
    work: np.ndarray,
    concurrency: np.ndarray,
    host_cores: float,
) -> ContentionFit:
    """Fit one demand to tasks given as arrays (one element per task): ``stage`` labels
    (any ints), run time, work done (records or bytes, > 0) and mean concurrency."""
    stage = np.asarray(stage)
    y_all = np.asarray(run_ms, dtype=np.float64)
    w_all = np.asarray(work, dtype=np.float64)
    k_all = np.asarray(concurrency, dtype=np.float64)
    ok = (w_all > 0) & (y_all >= MIN_RUN_MS) & np.isfinite(y_all) & (k_all >= 1.0)
    if not ok.any():
        return NOTHING
    labels, codes = np.unique(stage[ok], return_inverse=True)
    y = np.log(y_all[ok] / w_all[ok])
    k = k_all[ok]
    n_groups = len(labels)
    counts = np.bincount(codes, minlength=n_groups)
    kmin = np.full(n_groups, np.inf)
    kmax = np.full(n_groups, -np.inf)
    np.minimum.at(kmin, codes, k)
    np.maximum.at(kmax, codes, k)
    useful = (counts >= 2) & (kmax - kmin >= MIN_SPREAD)
    keep = useful[codes]
    if int(keep.sum()) < MIN_TASKS:
        return NOTHING
    _, codes = np.unique(codes[keep], return_inverse=True)
    y, k = y[keep], k[keep]
    n_groups = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    cores = max(float(host_cores), 1e-9)

    def sse(d: float) -> float:
        r = y - np.log(np.maximum(1.0, k * d / cores))
        mean = np.bincount(codes, weights=r, minlength=n_groups) / counts
        return float(((r - mean[codes]) ** 2).sum())

    flat = sse(0.0)
    errors = np.array([sse(float(d)) for d in DEMAND_GRID])
    # Once every task is slowed (d ≥ C/k_min) larger demands fit exactly as well (the
    # per-stage constant absorbs them): the smallest demand of the best fit is the reading.
    best = int(np.flatnonzero(errors <= errors.min() + 1e-9 * max(flat, 1.0))[0])
    k_low, k_high = float(k.min()), float(k.max())
    gain = (flat - float(errors[best])) / flat if flat > 0 else 0.0
    demand = float(DEMAND_GRID[best])
    tasks = int(keep.sum())
    if demand * k_high / cores <= 1.0 + 1e-9:
        # No slowdown: any demand that keeps k_max tasks within the cores fits as well.
        return ContentionFit(None, cores / k_high, tasks, n_groups, k_low, k_high, gain)
    if gain < MIN_GAIN:
        return ContentionFit(None, None, tasks, n_groups, k_low, k_high, gain)
    return ContentionFit(demand, None, tasks, n_groups, k_low, k_high, gain)


def task_work(profile: ApplicationProfile, key: StageKey) -> np.ndarray:
    """Per task attempt of a stage: the records it read (input + shuffle), or its bytes
    where it read no records."""
    t = profile.stages[key].table
    records = (t.col("input_records") + t.col("shuffle_read_records")).astype(np.float64)
    data = (t.col("input_bytes") + t.col("shuffle_read_bytes")).astype(np.float64)
    use_records = bool(len(t)) and bool((records > 0).all())
    return records if use_records else data


def estimate_contention(
    profile: ApplicationProfile,
    host_cores: float,
    groups: dict[StageKey, str],
    concurrency: np.ndarray | None = None,
) -> dict[str, ContentionFit]:
    """One fit per group of stages (e.g. Python and JVM stages), pooled over the group's
    stage attempts; stages not in ``groups`` are left out. ``concurrency``: the app task
    table's `task_concurrency`, where the caller has it. Array operations over the whole
    task table, none per stage."""
    table = profile.task_table()
    k = task_concurrency(table) if concurrency is None else concurrency
    parts = decompose_table(table)
    run = parts.cpu + parts.gc + parts.network + parts.disk + parts.unattributed
    keys = list(profile.stages)
    sizes = np.array([len(profile.stages[key].table) for key in keys], dtype=np.int64)
    stage = np.repeat(np.arange(len(keys)), sizes)
    records = (table.col("input_records") + table.col("shuffle_read_records")).astype(np.float64)
    data = (table.col("input_bytes") + table.col("shuffle_read_bytes")).astype(np.float64)
    # A stage is measured in records only where every one of its tasks read some.
    no_records = np.bincount(stage, weights=(records <= 0).astype(np.float64), minlength=len(keys))
    work = np.where(no_records[stage] == 0, records, data)
    names = sorted(set(groups.values()))
    group_of_stage = np.array([names.index(groups[key]) if key in groups else -1 for key in keys])
    group = group_of_stage[stage] if len(stage) else np.zeros(0, dtype=np.int64)
    out: dict[str, ContentionFit] = {}
    for gi, name in enumerate(names):
        rows = (group == gi) & parts.ended
        out[name] = fit_contention(stage[rows], run[rows], work[rows], k[rows], host_cores)
    return out
