"""A stage's CPU demand per task from measured per-thread CPU (`perfmodel.profile.thread_cpu`).

Why: on a saturated host a task's observed cores (its CPU over its run time) is what it got,
not what it wanted, so a local[2] run on two busy cores says little about local[1]. A bundle
recorded with per-thread CPU holds, per executor and over time, the CPU of its task threads,
of its PySpark Python workers and of the JVM's other threads, and how long each sat runnable
waiting for a core (run-queue delay). From them, per stage:

* a task's thread CPU is its own executorCpuTime (task metrics, exact per task);
* the Python workers' CPU in each interval goes to the tasks running then on that executor,
  in proportion to how much of each task's run time its thread did not account for (a task
  whose thread waits on its worker is what a busy worker serves; a JVM-only task gets next to
  none while such tasks run, all of it alone); the workers' run-queue delay likewise;
* the task threads' run-queue delay is shared equally among the running tasks;
* the JVM's GC, JIT and other threads (not the recorders') are background load: their CPU
  while the stage's tasks ran, shared equally.

A task alone would not have waited for cores: its run time alone is taken as the observed
run time less the larger of its two lanes' waits (the thread's and the worker's run in
parallel, so the lane that waited longer set the pace), and never below its busier lane's
CPU. Demand = (thread CPU + worker CPU) / that time. Without delays (no ``schedstat``) the
observed run time is used. Everything is numpy over fixed time bins per executor: one sort
of the tasks, nothing quadratic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.dag.decomposition import TaskDecompositions
from perfmodel.dag.model import StageKey
from perfmodel.dag.tasks import TaskTable
from perfmodel.profile.thread_cpu import GC, JIT, OTHER, PY_WORKER, TASK, CpuSeries, ThreadCpu
from perfmodel.simulate.host_usage import BIN_MS, cumulative_task_ms, integrate

BACKGROUND_KINDS = (GC, JIT, OTHER)
"""JVM threads whose CPU is background load (the recorders' own are recording cost)."""
MIN_COVERAGE = 0.9
"""Share of a stage's run time that must lie on measured executors for its demand to count."""
UNSERVED_WEIGHT = 1e-3
"""Weight of a task whose thread accounts for all its run time: it gets a Python worker's
CPU only when no task that waits on a worker runs beside it."""


@dataclass(slots=True)
class TaskColumns:
    """The ended task attempts the replay uses, one entry each, grouped into stages."""

    launch_ms: np.ndarray
    finish_ms: np.ndarray
    executor: np.ndarray
    """Per task, its executor as an index into ``executor_ids``."""
    executor_ids: Sequence[str]
    group: np.ndarray
    """Index of the task's stage in the caller's list."""
    thread_cpu_ms: np.ndarray
    run_ms: np.ndarray
    """Run time (launch overheads excluded)."""
    unattributed_ms: np.ndarray
    """Run time no task metric covers (what a Python worker's work looks like)."""


@dataclass(frozen=True, slots=True)
class StageThreadCpu:
    """What one stage's tasks used, measured per thread (milliseconds, summed over tasks)."""

    thread_cpu_ms: float
    python_cpu_ms: float
    run_ms: float
    thread_wait_ms: float
    python_wait_ms: float
    background_ms: float
    """JVM non-task CPU (GC, JIT, other) while the stage's tasks ran, their share."""
    higher_ms: float = 0.0
    """Cores × ms of the host's load of a higher priority than the application's, over each
    task's run, summed (`ThreadCpu.higher_priority`): cores it took rather than shared."""

    @property
    def alone_ms(self) -> float:
        """Run time the tasks would have taken without waiting for cores."""
        busiest = max(self.thread_cpu_ms, self.python_cpu_ms)
        waited = max(self.thread_wait_ms, self.python_wait_ms)
        return min(self.run_ms, max(busiest, self.run_ms - waited))

    @property
    def demand(self) -> float:
        """Cores one task keeps busy when it has the host to itself."""
        alone = self.alone_ms
        cpu = self.thread_cpu_ms + self.python_cpu_ms
        return cpu / alone if alone > 0 else 0.0

    @property
    def slowdown(self) -> float:
        """Observed run time over the time alone (1: the tasks never waited for a core)."""
        alone = self.alone_ms
        return self.run_ms / alone if alone > 0 else 1.0

    @property
    def higher_cores(self) -> float:
        """Mean cores taken by load of a higher priority while the stage's tasks ran."""
        return self.higher_ms / self.run_ms if self.run_ms > 0 else 0.0

    @property
    def background_cores(self) -> float:
        return self.background_ms / self.run_ms if self.run_ms > 0 else 0.0


TAKEN = 0.9
"""At most this share of the host is taken to be held by load of a higher priority."""
WAITED = 1.05
"""A stage whose tasks ran this much longer than they would have without waiting for cores
(measured run-queue delay) shared the host with other load: how much, its slowdown says."""


def other_load(
    m: StageThreadCpu, concurrency: float, host_cores: float
) -> tuple[float, float, float]:
    """(cores other load asked for beside the stage's tasks, cores load of a higher priority
    took, how many of the first the JVM's own threads used), from their measured slowdown.

    The law's baseline slowdown, ``(k·d + other) / (C − taken)``, is then the measured one.
    Where the tasks did not wait for cores, the JVM's own threads (GC, JIT, the rest) had
    cores of their own; a target with more tasks on the host must share with them, so what
    they used while the tasks ran is the other load, as far as the baseline had room for it
    (its slowdown stays 1). What the JVM's threads used is work of a fixed amount, not a rate
    (`laws.other_load_on_target`); the rest of what the tasks waited for is a rate.
    """
    jvm = m.background_cores * concurrency
    if m.slowdown <= WAITED:
        # `background_cores` is each task's share of it (split among the tasks running).
        room = max(0.0, host_cores - concurrency * m.demand)
        other = min(jvm, room)
        return other, 0.0, other
    taken = min(m.higher_cores, host_cores * TAKEN)
    asked = m.slowdown * (host_cores - taken)
    other = max(0.0, asked - concurrency * m.demand)
    return other, taken, min(jvm, other)


def stage_basis(m: StageThreadCpu) -> str:
    """What a stage's CPU share was made of, for the advice's "of which" line."""
    return (
        f"measured per-thread CPU: Python workers {m.python_cpu_ms / 1000:.1f} s and task "
        f"threads {m.thread_cpu_ms / 1000:.1f} s over {m.run_ms / 1000:.1f} s of task run time, "
        f"{m.demand:.2f} cores per task alone; {1 - 1 / m.slowdown:.0%} of the run time was spent "
        "waiting for a core"
    )


def application_basis(measured: Mapping[StageKey, StageThreadCpu]) -> str:
    """The same over every measured stage (empty when none was measured)."""
    if not measured:
        return ""
    total = StageThreadCpu(*(sum(getattr(m, name) for m in measured.values()) for name in _SUMMED))
    return f"{stage_basis(total)} ({len(measured)} stage(s))"


def stage_thread_cpu(
    measured: ThreadCpu, tasks: TaskColumns, n_groups: int
) -> list[StageThreadCpu | None]:
    """Per stage (``group`` index), its measured CPU; None where too little of its run time
    lay on executors that were measured."""
    n = len(tasks.launch_ms)
    python = np.zeros(n)
    thread_wait = np.zeros(n)
    python_wait = np.zeros(n)
    background = np.zeros(n)
    higher = np.zeros(n)
    covered = np.zeros(n, dtype=bool)
    run = np.maximum(tasks.run_ms, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        served = np.where(run > 0, np.clip(tasks.unattributed_ms / run, 0.0, 1.0), 0.0)
    weight = served + UNSERVED_WEIGHT
    ok = np.isfinite(tasks.launch_ms) & np.isfinite(tasks.finish_ms)
    ok &= tasks.finish_ms > tasks.launch_ms
    by_executor = np.argsort(tasks.executor, kind="stable")
    counts = np.bincount(tasks.executor, minlength=len(tasks.executor_ids))
    starts = np.concatenate([[0], np.cumsum(counts)])
    code_of = {name: i for i, name in enumerate(tasks.executor_ids)}
    for executor in sorted(measured.executors()):
        code = code_of.get(executor)
        if code is None:
            continue
        rows = by_executor[starts[code] : starts[code + 1]]
        rows = rows[ok[rows]]
        if rows.size == 0:
            continue
        covered[rows] = True
        at = _Executor(measured, executor, tasks.launch_ms[rows], tasks.finish_ms[rows])
        python[rows] = at.share(PY_WORKER, weight[rows])
        python_wait[rows] = at.share(PY_WORKER, weight[rows], waits=True)
        thread_wait[rows] = at.share(TASK, None, waits=True)
        background[rows] = sum(at.share(kind, None) for kind in BACKGROUND_KINDS)
        higher[rows] = at.over_each_task(measured.higher_priority())
    return _per_stage(
        tasks, n_groups, covered, python, thread_wait, python_wait, background, higher
    )


class _Executor:
    """One executor's tasks on a grid of bins over their run."""

    def __init__(
        self, measured: ThreadCpu, executor: str, launch: np.ndarray, finish: np.ndarray
    ) -> None:
        self.measured, self.executor = measured, executor
        self.launch, self.finish = launch, finish
        self.edges = np.arange(float(launch.min()), float(finish.max()) + BIN_MS, BIN_MS)

    def over_each_task(self, series: CpuSeries | None) -> np.ndarray:
        """Per task, ∫ the series' cores over its run (not shared: each task saw all of it)."""
        if series is None:
            return np.zeros(self.launch.size)
        cores = _per_bin(series, self.edges, False) / np.diff(self.edges)
        return integrate(self.edges, cores, self.launch, self.finish)

    def share(self, kind: str, weights: np.ndarray | None, waits: bool = False) -> np.ndarray:
        """Per task, its share of what the executor's threads of ``kind`` used (or waited)."""
        series = self.measured.series.get((self.executor, kind))
        if series is None:
            return np.zeros(self.launch.size)
        amount = _per_bin(series, self.edges, waits)
        return share_by_overlap(self.edges, amount, self.launch, self.finish, weights)


_SUMMED = (
    "thread_cpu_ms",
    "python_cpu_ms",
    "run_ms",
    "thread_wait_ms",
    "python_wait_ms",
    "background_ms",
    "higher_ms",
)


def _per_stage(
    tasks: TaskColumns,
    n_groups: int,
    covered: np.ndarray,
    python: np.ndarray,
    thread_wait: np.ndarray,
    python_wait: np.ndarray,
    background: np.ndarray,
    higher: np.ndarray,
) -> list[StageThreadCpu | None]:
    def sums(values: np.ndarray) -> list[float]:
        return np.bincount(tasks.group, weights=values, minlength=n_groups).tolist()

    run = np.maximum(tasks.run_ms, 0.0)
    run_all = sums(run)
    run_covered = sums(np.where(covered, run, 0.0))
    columns = [sums(np.where(covered, v, 0.0)) for v in (tasks.thread_cpu_ms, python, run)]
    waits = [sums(v) for v in (thread_wait, python_wait, background, higher)]
    out: list[StageThreadCpu | None] = []
    for g in range(n_groups):
        if run_all[g] <= 0 or run_covered[g] < MIN_COVERAGE * run_all[g]:
            out.append(None)
            continue
        out.append(
            StageThreadCpu(
                thread_cpu_ms=columns[0][g],
                python_cpu_ms=columns[1][g],
                run_ms=columns[2][g],
                thread_wait_ms=waits[0][g],
                python_wait_ms=waits[1][g],
                background_ms=waits[2][g],
                higher_ms=waits[3][g],
            )
        )
    return out


def _per_bin(series: CpuSeries, edges: np.ndarray, waits: bool) -> np.ndarray:
    """Milliseconds used (or waited) in each bin, spread evenly over each poll interval; the
    first poll's amount over the interval before it (a poll period, the median gap)."""
    t = series.t_ms
    cumulative = series.wait_ms if waits else series.cpu_ms
    gap = float(np.median(np.diff(t))) if t.size > 1 else BIN_MS
    t_ext = np.concatenate([[t[0] - gap], t])
    c_ext = np.concatenate([[0.0], cumulative])
    return np.diff(np.interp(edges, t_ext, c_ext))


def share_by_overlap(
    edges: np.ndarray,
    amount: np.ndarray,
    launch: np.ndarray,
    finish: np.ndarray,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Each bin's ``amount`` shared among the tasks running in it, in proportion to their
    ``weights`` (equal without) and to how much of the bin they ran; per task, the sum.
    What falls in bins where nothing runs goes to no task."""
    running = np.diff(cumulative_task_ms(launch, finish, edges, weights))  # weighted task-ms
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(running > 0, amount / running, 0.0)
    shared = integrate(edges, rate, launch, finish)
    return shared if weights is None else shared * weights


def measure_stages(
    measured: ThreadCpu,
    table: TaskTable,
    parts: TaskDecompositions,
    stage_rows: Sequence[np.ndarray],
) -> list[StageThreadCpu | None]:
    """`stage_thread_cpu` of the replay's stages, each given by its rows of the application's
    task table (its ended attempts)."""
    counts = np.array([len(r) for r in stage_rows], dtype=np.int64)
    rows = np.concatenate(stage_rows).astype(np.int64) if len(stage_rows) else np.zeros(0, int)
    tasks = TaskColumns(
        launch_ms=table.col("launch_ms")[rows].astype(np.float64),
        finish_ms=table.col("finish_ms")[rows].astype(np.float64),
        executor=table.col("executor")[rows].astype(np.int64),
        executor_ids=table.columns.strings["executor"],
        group=np.repeat(np.arange(len(stage_rows)), counts),
        thread_cpu_ms=parts.cpu[rows],
        run_ms=(parts.cpu + parts.gc + parts.network + parts.disk + parts.unattributed)[rows],
        unattributed_ms=parts.unattributed[rows],
    )
    return stage_thread_cpu(measured, tasks, len(stage_rows))


def runtime_threads(jvm: bool) -> str:
    """How the notes name the executor process's own threads: a JVM's GC, JIT compilers and
    the rest, or (a Dask worker) the worker's threads that run no task."""
    return "JVM GC, JIT and other threads" if jvm else "the workers' threads that run no task"


def waited_note(
    other_cores: Sequence[float],
    taken_cores: Sequence[float],
    jvm_cores: Sequence[float],
    jvm: bool = True,
) -> list[str]:
    """What other load asked for beside the tasks (and how much of it was the executor
    process's own threads), and what load of a higher priority took; per stage, 0 where not
    measured. ``jvm``: whether those threads are a JVM's (`runtime_threads`)."""
    asked = [c for c in other_cores if c > 0]
    taken = [c for c in taken_cores if c > 0]
    own = sum(jvm_cores)
    notes = []
    if asked:
        share = own / sum(asked)
        notes.append(
            f"other load beside the tasks of {len(asked)} stage(s) (measured per-thread CPU and "
            f"run-queue delay): {min(asked):.2f}–{max(asked):.2f} cores, {share:.0%} of it "
            f"{runtime_threads(jvm)}: work of a fixed amount, which a target keeping "
            "fewer cores busy with the tasks spreads over their longer run (one keeping more "
            "keeps its rate); the rest (other processes) is kept as it is"
        )
    if taken:
        notes.append(
            f"the application ran niced: processes of a higher priority took {min(taken):.2f}–"
            f"{max(taken):.2f} of the host's cores while {len(taken)} stage(s) ran (the host's "
            "CPU at nice ≤ 0), which the prediction keeps"
        )
    return notes


def thread_cpu_note(threaded: Mapping[StageKey, StageThreadCpu], jvm: bool = True) -> str:
    """What the replay took from measured per-thread CPU, for the prediction's notes."""
    thread = sum(m.thread_cpu_ms for m in threaded.values())
    python = sum(m.python_cpu_ms for m in threaded.values())
    run = sum(m.run_ms for m in threaded.values())
    alone = sum(m.alone_ms for m in threaded.values())
    background = sum(m.background_ms for m in threaded.values())
    waited = (
        f"; without waiting for cores they would have run {alone / run:.0%} as long" if run else ""
    )
    # A Dask worker runs its tasks' Python in the task thread: no worker processes beside it.
    python_part = f", Python workers {python / 1000:.1f} s" if jvm or python else ""
    return (
        f"CPU demand per task from measured per-thread CPU for {len(threaded)} stage(s): "
        f"task threads {thread / 1000:.1f} s{python_part} of CPU over "
        f"{run / 1000:.1f} s of task run time{waited}; {runtime_threads(jvm)} "
        f"{background / 1000:.1f} s beside them (background)"
    )
