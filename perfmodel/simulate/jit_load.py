"""How much a task's CPU grows beside another task, from how much the JVM compiles.

Why: a task running beside another uses more CPU than alone (`laws.co_running_factor`'s
``γ``), and how much more is a property of the workload, not only of the host. On the
2-core study machine the fit workloads' ``γ`` ranged from about 0 (word count, PageRank) to
0.26–0.39 (the SQL join), and the held-out ALS recommender's was 0.29–0.41: its C2 compiler
thread alone used 17 core-s of a 28 s run. With one task the compiler has the second core
to itself; with two it waits for a core (C2's run-queue delay went from 3.6 s to 8.0 s), so
the tasks run longer in interpreted and C1 code, which costs CPU. The JVM's JIT CPU per unit
of task CPU (``r``) tells how much compiling there is to be delayed; across the fit
workloads' pairs of runs ``γ`` grows with it (`perfmodel.experiment.co_running`), and
``γ = JIT_CO_RUNNING · r`` replaces the constant where a bundle measured per-thread CPU.

``r`` is measured over the application's run from per-thread CPU
(`perfmodel.profile.thread_cpu`): the JIT threads' CPU over the task threads' and Python
workers' (the work the tasks do). A baseline that already ran tasks side by side measured
their CPU grown by ``1 + γ(k̄ − 1)``; ``r`` is taken back to what one task alone would
have shown, so ``γ = x / (1 − x(k̄ − 1))`` with ``x = JIT_CO_RUNNING · J / T``.
"""

from __future__ import annotations

import numpy as np

from perfmodel.profile.thread_cpu import JIT, PY_WORKER, TASK, ThreadCpu
from perfmodel.simulate import cpu_floor, laws

JIT_CO_RUNNING = 0.211
"""``γ`` per unit of ``r`` (JIT CPU per unit of task CPU, tasks alone): least squares
through the origin over the fit workloads' pairs of runs that differ only in cores, 40
pairs of the 2026-11-25 08:12 and 12:58 fit stores (`perfmodel experiment calibrate`
prints it). A property of the study machine and its JVM: another may differ."""

R_MAX = 3.0
"""``r`` is held at this: the fit workloads' ran to 1.3, and the law is not known far beyond
that (so ``γ`` is at most 0.63)."""


def jit_ratio(measured: ThreadCpu, start_ms: float, end_ms: float) -> float | None:
    """JIT CPU per unit of the tasks' CPU (task threads and Python workers) over the run, as
    measured (None where the tasks used no measured CPU)."""
    by_kind = cpu_floor.cpu_by_kind(measured, start_ms, end_ms)
    work = by_kind.get(TASK, 0.0) + by_kind.get(PY_WORKER, 0.0)
    if work <= 0:
        return None
    return by_kind.get(JIT, 0.0) / work


def co_running_gamma(ratio: float | None, co_running: float) -> float:
    """``γ`` for a workload whose JIT CPU per unit of task CPU was ``ratio`` at a mean of
    ``co_running`` tasks side by side (CPU-weighted, at most the host's cores); the
    constant `laws.CO_RUNNING_CPU` where nothing was measured."""
    if ratio is None:
        return laws.CO_RUNNING_CPU
    cap = JIT_CO_RUNNING * R_MAX
    x = JIT_CO_RUNNING * max(ratio, 0.0)
    denominator = 1.0 - x * max(co_running - 1.0, 0.0)
    if denominator <= x / cap:
        return cap
    return min(x / denominator, cap)


def mean_co_running(cpu_ms: np.ndarray, concurrency: np.ndarray, host_cores: float) -> float:
    """CPU-weighted mean of the tasks side by side on the host (`laws.co_running_load`:
    ``min(tasks running at once, host cores)`` on up to two cores) over tasks (1 where they
    used no CPU): how many ran side by side while the CPU was spent. More slots than cores
    wait for a core instead."""
    cpu = np.nan_to_num(np.asarray(cpu_ms, dtype=np.float64))
    total = float(cpu.sum())
    if total <= 0:
        return 1.0
    k = laws.co_running_load(np.asarray(concurrency, dtype=np.float64), float(host_cores))
    return float((k * cpu).sum() / total)


def gamma_note(ratio: float | None, gamma: float, jvm: bool = True) -> str:
    """What the co-running law assumed, for the prediction's notes. ``jvm``: whether the
    executors are JVMs (`ThreadCpu.jvm_runtime`); a Dask worker has no JIT compiler."""
    if not jvm:
        return (
            f"a task's CPU is taken to grow by {gamma:.0%} per task running beside it: no JIT "
            "compiler runs beside the tasks"
        )
    if ratio is None:
        return (
            f"a task's CPU is taken to grow by {gamma:.0%} per task running beside it (the "
            "study machine's constant: per-thread CPU showed no CPU of the tasks to set it by)"
        )
    return (
        f"a task's CPU is taken to grow by {gamma:.0%} per task running beside it: the JVM's "
        f"JIT used {ratio:.2f} core-s per core-s of the tasks' CPU, and a compiler kept "
        "waiting for a core leaves tasks longer in slower code (docs/predict.md)"
    )


def estimated_gamma_note(gamma: float, stages: int) -> str:
    """What the co-running law assumed for stages whose demand a bare log estimated."""
    return (
        f"in {stages} stage(s) a task's CPU is taken to grow by {gamma:.0%} while other tasks "
        "keep the host's other cores busy (the study machine's constant): a run at one "
        "concurrency cannot show that growth, and no per-thread CPU was recorded to set it by"
    )
