"""Measure how much a task's CPU time grows while other tasks run on the host's other cores.

Why: per-thread CPU (`perfmodel.profile.thread_cpu`) tells a task's CPU time from its wait
for a core, so a bundle sees when tasks queued for cores. It cannot see tasks running side
by side on their own cores and each taking longer on CPU: they share the memory bus and the
caches (and, on a cloud VM, whatever the hypervisor's cores share). The fit workloads of the
local study show it: the same stages used 5–37% more task CPU time at ``local[2]`` than at
``local[1]`` on the 2-core study machine. `laws.co_running_factor` scales CPU work by it;
this module measures the constant it needs, ``γ``, the CPU time one more co-running task
adds, from a store's runs of the split's *fit* workloads only.

Per pair of runs of one workload that differ in cores and nothing else, with total task CPU
``W`` and CPU-weighted mean co-running tasks ``k̄`` (`laws.co_running_load`: on up to two
cores, tasks on the host at once, at most its cores) in each:
``W_hi / W_lo = (1 + γ(k̄_hi − 1)) / (1 + γ(k̄_lo − 1))``, solved for ``γ``; the median over
pairs is the estimate (pairs of one workload share its noise, so the median of workload
medians is reported beside it).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from perfmodel.experiment.split import FIT, Split
from perfmodel.runs.rows import RunRow
from perfmodel.runs.store import RunStore
from perfmodel.simulate import jit_load


@dataclass(frozen=True, slots=True)
class RunCpu:
    """One run's task CPU and how many tasks ran beside each other while it was spent."""

    workload: str
    cores: int
    memory_bytes: int | None
    cpu_s: float
    co_running: float
    """CPU-weighted mean of the tasks side by side on the host (`laws.co_running_load`:
    min(tasks running on the host, its cores) on up to two cores)."""
    same_as: tuple[str, ...] = ()
    """What else must match for two runs to differ in cores only: the experiment's
    parameters (data size), the host, the config without its master and name."""
    stages: dict[int, tuple[float, float]] = field(default_factory=dict)
    """Per stage id: task CPU seconds and memory spilled (Spark's ``memoryBytesSpilled``,
    the in-memory size), summed over the stage's attempts."""
    same_but_memory: tuple[str, ...] = ()
    """What must match for two runs to differ in memory only: parameters, host, cores and
    the config without its name and memory sizes."""
    jit_ratio: float | None = None
    """The JIT's CPU per unit of the tasks' CPU over the run (`jit_load.jit_ratio`); None
    where per-thread CPU was not recorded."""


@dataclass(slots=True)
class CoRunning:
    gamma: float
    pairs: int
    by_workload: dict[str, float] = field(default_factory=dict)

    @property
    def workload_median(self) -> float:
        return statistics.median(self.by_workload.values()) if self.by_workload else 0.0


def run_cpu(run: RunRow) -> RunCpu | None:
    """A run's `RunCpu` from its bundle (None where it has none or no task CPU)."""
    from perfmodel.analysis import read
    from perfmodel.dag.concurrency import task_concurrency

    if not run.bundle_path or not run.cores:
        return None
    profile = read(run.bundle_path).profile
    table = profile.task_table()
    ended = np.asarray(table.ended, dtype=bool)
    cpu = np.nan_to_num(np.asarray(table.cpu_ms, dtype=np.float64))[ended]
    if cpu.sum() <= 0:
        return None
    # Tasks run side by side on at most the host's cores (more slots than cores wait).
    host_cores = profile.extra.get("host_cores") or run.cores
    co_running = jit_load.mean_co_running(
        cpu, task_concurrency(table)[ended], float(min(run.cores, host_cores))
    )
    ratio = None
    if profile.thread_cpu is not None and profile.start_ms is not None and profile.end_ms:
        ratio = jit_load.jit_ratio(profile.thread_cpu, profile.start_ms, profile.end_ms)
    params = json.dumps(run.params, sort_keys=True)
    same_as = (params, run.host, _settings_without(run, ("name", "master", "cores")))
    but_memory = (
        params,
        run.host,
        _settings_without(run, ("name", "driver_memory", "executor_memory")),
    )
    stages: dict[int, tuple[float, float]] = {}
    for stage in profile.stages.values():
        t = stage.table
        done = np.asarray(t.ended, dtype=bool)
        stage_cpu = float(np.nan_to_num(np.asarray(t.cpu_ms, dtype=np.float64))[done].sum())
        spilled = float(
            np.nan_to_num(np.asarray(t.memory_spill_bytes, dtype=np.float64))[done].sum()
        )
        cpu_before, spilled_before = stages.get(stage.stage_id, (0.0, 0.0))
        stages[stage.stage_id] = (cpu_before + stage_cpu / 1000.0, spilled_before + spilled)
    return RunCpu(
        run.workload,
        int(run.cores),
        run.memory_bytes,
        float(cpu.sum()) / 1000.0,
        co_running,
        same_as,
        stages,
        but_memory,
        ratio,
    )


def _settings_without(run: RunRow, left_out: tuple[str, ...]) -> str:
    """The run's config settings without ``left_out``, as one comparable string."""
    kept = {k: v for k, v in run.config_settings.items() if k not in left_out}
    return json.dumps(kept, sort_keys=True, default=str)


def pair_gamma(lo: RunCpu, hi: RunCpu) -> float | None:
    """``γ`` from two runs of one workload at different co-running (None where the runs
    hardly differ in it)."""
    r = hi.cpu_s / lo.cpu_s
    denominator = (hi.co_running - 1.0) - r * (lo.co_running - 1.0)
    if abs(hi.co_running - lo.co_running) < 0.2 or denominator <= 0:
        return None
    return (r - 1.0) / denominator


def fit_runs(store: RunStore, split: Split) -> list[RunCpu]:
    """`RunCpu` of the store's ok runs of the split's fit workloads (held-out ones unread)."""
    runs = [r for r in store.runs(status="ok") if split.role(r.workload) == FIT and not r.warmup]
    return [m for m in (run_cpu(r) for r in runs) if m is not None]


def core_pairs(measured: list[RunCpu]) -> Iterator[tuple[RunCpu, float]]:
    """Per pair of runs of one workload that differ in cores and nothing else, with a
    ``γ`` (`pair_gamma`): the run with fewer tasks side by side and that ``γ``."""
    for i, a in enumerate(measured):
        for b in measured[i + 1 :]:
            if (a.workload, a.memory_bytes, a.same_as) != (b.workload, b.memory_bytes, b.same_as):
                continue
            if a.cores == b.cores:
                continue
            lo, hi = (a, b) if a.co_running < b.co_running else (b, a)
            gamma = pair_gamma(lo, hi)
            if gamma is not None:
                yield lo, gamma


def measure(measured: list[RunCpu]) -> CoRunning:
    """``γ`` from runs' `RunCpu` (`fit_runs`: the fit workloads' only)."""
    per_workload: dict[str, list[float]] = {}
    for lo, gamma in core_pairs(measured):
        per_workload.setdefault(lo.workload, []).append(gamma)
    return CoRunning(*medians(per_workload))


def jit_slope(measured: list[RunCpu]) -> tuple[float, int]:
    """`jit_load.JIT_CO_RUNNING`: ``γ`` per unit of the JIT ratio a run with one task at a
    time would show, least squares through the origin over `core_pairs` (each pair's ratio
    from its run with fewer tasks side by side, taken back to tasks alone); (slope, pairs),
    (0, 0) without any."""
    xy = xx = 0.0
    pairs = 0
    for lo, gamma in core_pairs(measured):
        if lo.jit_ratio is None:
            continue
        r = lo.jit_ratio * (1.0 + gamma * (lo.co_running - 1.0))
        xy += r * gamma
        xx += r * r
        pairs += 1
    return (xy / xx if xx > 0 else 0.0), pairs


def medians(per_workload: dict[str, list[float]]) -> tuple[float, int, dict[str, float]]:
    """(median over every value, how many, median per workload); (0, 0, {}) without any."""
    values = [v for vs in per_workload.values() for v in vs]
    if not values:
        return 0.0, 0, {}
    by_workload = {w: statistics.median(vs) for w, vs in sorted(per_workload.items())}
    return statistics.median(values), len(values), by_workload
