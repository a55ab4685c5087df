"""Per stage, the cores a task keeps busy and what its unattributed time was, from a bare log.

A bare event log times only the task thread. Capping a task's demand at that thread's one
core makes every stage scale like slots (what Sparklens does), which is wrong exactly where
it matters: a PySpark task keeps its thread *and* its Python worker busy, so at local[2]
two tasks and two workers share two cores, and at local[1] the lone task has both. This
module combines the estimators that read the log, each with its evidence:

* `perfmodel.spark.pyspark_work` — which stages run Python code (RDD names, plan operators);
  their unattributed time is taken to be the Python worker's, which runs beside the task
  thread: as two lanes side by side, a task alone keeps ``(jvm + python) / longest lane``
  cores busy (the lower bound without further evidence);
* `perfmodel.spark.contention` — how much the tasks slowed down when more of them ran at
  once, per record: the demand that explains the slowdown (pooled separately over Python
  and JVM stages, which differ);
* the host's cores (`host_cores`, from the environment and executor events via the
  baseline configuration) that the slowdown is read against.

`DemandEstimate.assumption` is the sentence the report shows: the share of unattributed
time, the resource it was taken to be, and the evidence; or that the time is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.decomposition import decompose_table
from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.spark.contention import ContentionFit, estimate_contention
from perfmodel.spark.pyspark_work import PythonWork, python_work, stage_sums

PYTHON_GROUP = "python"
JVM_GROUP = "jvm"
MAX_DEMAND = {PYTHON_GROUP: 3.0, JVM_GROUP: 2.0}
"""Most cores a task is believed to keep busy: a Python task's thread, its writer thread
and its worker; a JVM task's thread plus its share of GC and JIT threads. A slowdown that
reads higher is taken to be something else too (skew, a noisy neighbour) and capped."""
JVM_OTHER_THREADS = 1.5
"""Cores a JVM task keeps busy per core of its own thread, without slowdown evidence (GC
and JIT threads, and in local mode the driver in the same JVM). Fitted on the fit workloads
of experiments/splits/default.toml only (store fit-20261125-041202: bare-log MAPE over their
60 pairs for 1.0, 1.25, 1.5, 1.75, 2.0 was 15.6, 12.5, 10.7, 10.8, 12.1%)."""
PYTHON_MIN_DEMAND = 1.3
"""Fewest cores a Python task is taken to keep busy without slowdown evidence: its thread,
the writer thread feeding the worker (whose CPU no metric counts) and the worker. Fitted
with `JVM_OTHER_THREADS` on the same fit pairs (1.0, 1.3, 1.6 at 1.5: 10.7, 8.6, 10.2%)."""
SMALL_UNKNOWN = 0.10
"""Unattributed shares below this are not worth a caveat."""

PYTHON_WORKER_CPU = "Python-worker CPU"
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class DemandEstimate:
    """One stage attempt's estimated core demand and what its unattributed time was."""

    demand: float | None
    """Cores one task keeps busy when alone; None: leave the replay's default."""
    resource: str
    """What the unattributed time was taken to be (`PYTHON_WORKER_CPU` or `UNKNOWN`)."""
    unattributed_share: float
    """Unattributed share of the stage's run time (launch overheads excluded): the model's."""
    evidence: str
    from_stretch: bool = False
    """A JVM stage whose tasks ran beside each other: the demand is its own stretch's."""
    from_slowdown: bool = False
    """The demand was read off how the tasks' run times grew with more of them running (a
    pooled contention fit). Those run times include the CPU time a task gains beside other
    tasks (shared caches and memory bus, a JIT compiler waiting for a core), so the demand
    already carries it. A stretch (time off CPU) or a prior does not: the replay adds that
    growth to such stages (`BareLogEstimates.growth_unseen`)."""
    task_share: float | None = None
    """Unattributed share of the stage's whole task time, launch overheads included: what
    the diagnosis' stage table shows, so the sentence the user reads matches it (None: the
    run-time share, for an estimate made without the task times)."""

    @property
    def unknown_share(self) -> float:
        """Share of the stage's run time that no metric and no evidence explains."""
        return self.unattributed_share if self.resource == UNKNOWN else 0.0

    @property
    def assumption(self) -> str:
        shown = self.unattributed_share if self.task_share is None else self.task_share
        share = f"{shown:.0%} of its task time is unattributed"
        if self.resource == UNKNOWN:
            return f"{share} and unknown (counted as CPU; {self.evidence})"
        return f"{share}, taken to be {self.resource} because {self.evidence}"


@dataclass(frozen=True, slots=True)
class BareLogEstimates:
    """Every stage's estimate, the fits behind them, and the application's unknown share."""

    stages: dict[StageKey, DemandEstimate]
    fits: dict[str, ContentionFit]
    unknown_share: float
    """Share of task run time (launch overheads excluded) that stays unknown: the model's."""
    python_share: float
    """Share of task run time taken to be Python-worker CPU."""
    unknown_task_share: float | None = None
    python_task_share: float | None = None
    """The two shares above over all task time, launch overheads included, as the diagnosis'
    time split counts it: the shares the sentences show, so that their parts never add to
    more than the unattributed share beside them (None: the run-time shares)."""

    @property
    def shown_unknown_share(self) -> float:
        return self.unknown_share if self.unknown_task_share is None else self.unknown_task_share

    @property
    def shown_python_share(self) -> float:
        return self.python_share if self.python_task_share is None else self.python_task_share

    def host_cores_at_least(self) -> int:
        """Cores an unknown host must have had for the estimates to hold: a Python task's
        thread and worker run side by side (the lanes model) only on two cores, and a JVM
        task's other threads need room too, so a host whose size was only guessed from its
        slots is taken to have at least ceil(demand) of the most demanding stage. 0 where a
        slowdown was read (the contention fit read the demand against the assumed cores)."""
        for fit in self.fits.values():
            if fit.demand is not None or fit.demand_at_most is not None:
                return 0
        python = [e.demand for e in self.stages.values() if e.demand is not None]
        return int(np.ceil(max(python) - 1e-9)) if python else 0

    def demands(self) -> dict[StageKey, float]:
        return {k: e.demand for k, e in self.stages.items() if e.demand is not None}

    def growth_unseen(self) -> frozenset[StageKey]:
        """Stages with an estimated demand that does not carry the CPU time a task gains
        beside other tasks on its host (not read off a slowdown: `from_slowdown`). A run at
        one concurrency cannot show that growth, so the replay takes it from the host's
        law (`perfmodel.simulate.laws.co_running_factor`)."""
        return frozenset(
            k for k, e in self.stages.items() if e.demand is not None and not e.from_slowdown
        )


def lanes_demand(jvm_ms: float, python_ms: float) -> float:
    """Cores a task keeps busy when its thread (``jvm_ms``) and Python worker
    (``python_ms``) run side by side: total work over the longer lane (1 to 2)."""
    longest = max(jvm_ms, python_ms)
    return (jvm_ms + python_ms) / longest if longest > 0 else 1.0


def estimate_bare_log(profile: ApplicationProfile, host_cores: float) -> BareLogEstimates:
    """Estimate every stage attempt's demand from what the log holds (see module doc)."""
    sums = stage_sums(profile)
    work = python_work(profile, sums)
    groups = {k: PYTHON_GROUP if w.is_python else JVM_GROUP for k, w in work.items()}
    concurrency = task_concurrency(profile.task_table())
    fits = estimate_contention(profile, host_cores, groups, concurrency)
    # Run-time-weighted mean concurrency per stage, from cumulative sums over the app table.
    parts_run, parts_scheduling = _run_per_task(profile)
    cum_kr = np.concatenate([[0.0], np.cumsum(concurrency * parts_run)])
    cum_scheduling = np.concatenate([[0.0], np.cumsum(parts_scheduling)])
    b = sums.bounds
    kr = cum_kr[b[1:]] - cum_kr[b[:-1]]
    task_time = sums.run + cum_scheduling[b[1:]] - cum_scheduling[b[:-1]]
    out: dict[StageKey, DemandEstimate] = {}
    weights = {"unknown": 0.0, "python": 0.0, "all": 0.0}
    # The same unattributed time over all task time, for the sentences (see `task_share`).
    shown = {"unknown": 0.0, "python": 0.0, "all": 0.0}
    rows = zip(
        sums.keys,
        sums.thread.tolist(),
        sums.unattributed.tolist(),
        sums.run.tolist(),
        kr.tolist(),
        task_time.tolist(),
        strict=True,
    )
    for key, jvm, unattributed, run, k_run, task in rows:
        k_stage = k_run / run if run > 0 else 1.0
        # The demand at which the contention law explains the whole of the tasks' stretch
        # (their thread's run time over its CPU time, k·d/C = run/thread), for tasks that ran
        # beside others on their host; a task alone (k ≈ 1) competes only with its own
        # threads, which says nothing about d.
        stretch = host_cores * run / (k_stage * jvm) if jvm > 0 and k_stage > 1.05 else np.inf
        w = work[key]
        fit = fits.get(groups[key])
        estimate = (
            _python_stage(w, fit, jvm, unattributed)
            if w.is_python
            else _jvm_stage(w, fit, run, jvm + unattributed, stretch)
        )
        estimate = replace(estimate, task_share=unattributed / task if task > 0 else 0.0)
        out[key] = estimate
        weights["all"] += run
        weights["unknown"] += run * estimate.unknown_share
        shown["all"] += task
        if estimate.resource == UNKNOWN:
            shown["unknown"] += unattributed
        if estimate.resource == PYTHON_WORKER_CPU:
            weights["python"] += run * estimate.unattributed_share
            shown["python"] += unattributed
    total, all_task = weights["all"], shown["all"]
    return BareLogEstimates(
        stages=out,
        fits=fits,
        unknown_share=weights["unknown"] / total if total > 0 else 0.0,
        python_share=weights["python"] / total if total > 0 else 0.0,
        unknown_task_share=shown["unknown"] / all_task if all_task > 0 else 0.0,
        python_task_share=shown["python"] / all_task if all_task > 0 else 0.0,
    )


def _run_per_task(profile: ApplicationProfile) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the app task table: run time and launch overheads (scheduling) of an
    ended attempt (0 otherwise)."""
    parts = decompose_table(profile.task_table())
    run = parts.cpu + parts.gc + parts.unattributed + parts.network + parts.disk
    return np.where(parts.ended, run, 0.0), np.where(parts.ended, parts.scheduling, 0.0)


def _python_stage(
    w: PythonWork, fit: ContentionFit | None, jvm: float, unattributed: float
) -> DemandEstimate:
    prior = lanes_demand(jvm, unattributed)
    evidence = w.evidence
    demand = prior
    slowdown = False
    if fit is not None and fit.demand is not None:
        demand = max(prior, min(fit.demand, MAX_DEMAND[PYTHON_GROUP]))
        evidence += f"; {fit.evidence}"
        slowdown = True
    elif fit is not None and fit.demand_at_most is not None:
        demand = max(1.0, min(prior, fit.demand_at_most))
        evidence += f"; {fit.evidence}"
        slowdown = True
    else:
        demand = max(prior, PYTHON_MIN_DEMAND)
        how = (
            f"{demand:.2f} cores per task"
            if prior >= PYTHON_MIN_DEMAND
            else f"{demand:.2f} cores per task, the least a Python task is taken to use "
            "(fitted on the fit workloads)"
        )
        evidence += (
            f"; its thread and Python worker taken to run side by side ({how}; no slowdown "
            "with concurrency to confirm it)"
        )
    return DemandEstimate(
        demand, PYTHON_WORKER_CPU, w.unattributed_share, evidence, from_slowdown=slowdown
    )


def _jvm_stage(
    w: PythonWork, fit: ContentionFit | None, run: float, cpu_like: float, stretch: float
) -> DemandEstimate:
    """A JVM stage's demand. Where its tasks ran side by side (``stretch`` finite), their
    thread's time off CPU, with no metric naming it, is read as waiting for a core: the
    demand is the one at which the contention law explains all of it, what the stage itself
    shows. On held-out TPC-DS runs at ``local[2]`` on 2 cores the task threads were on CPU
    half their time, a demand of 2.0 per task, and at ``local[1]`` they ran in about half
    the time; the pooled slowdown fit read 1.5 and the prior gives 1.5, which left a
    ``local[1]`` prediction 20% too slow (docs/accuracy.md). Where the tasks ran alone,
    the pooled slowdown fit, else the prior (`JVM_OTHER_THREADS`)."""
    resource = UNKNOWN if w.unattributed_share >= SMALL_UNKNOWN else "CPU"
    base = cpu_like / run if run > 0 else 0.0
    if np.isfinite(stretch):
        own = float(np.clip(stretch, base, MAX_DEMAND[JVM_GROUP]))
        evidence = (
            f"{w.evidence}; its tasks ran beside each other and their threads' time off CPU is "
            f"taken to be waiting for a core ({own:.2f} cores per task)"
        )
        return DemandEstimate(own, resource, w.unattributed_share, evidence, from_stretch=True)
    if fit is not None and fit.demand is not None:
        # The slowdown counts every thread a task keeps busy (GC, JIT, shuffle), which the
        # thread's CPU time misses; never below what the metrics already show.
        fitted = float(np.clip(max(base, fit.demand), 0.0, MAX_DEMAND[JVM_GROUP]))
        evidence = f"{w.evidence}; {fit.evidence}"
        return DemandEstimate(fitted, resource, w.unattributed_share, evidence, from_slowdown=True)
    evidence = w.evidence
    if fit is not None and fit.tasks:
        evidence += f"; {fit.evidence}"
    demand: float | None = None
    if JVM_OTHER_THREADS > 1.0 and base > 0:
        demand = float(max(base, min(base * JVM_OTHER_THREADS, MAX_DEMAND[JVM_GROUP])))
        evidence += (
            f"; the JVM's other threads (GC, JIT, the driver in local mode) taken to add "
            f"{JVM_OTHER_THREADS - 1:.0%} to the task thread's cores (fitted on the fit workloads)"
        )
    return DemandEstimate(demand, resource, w.unattributed_share, evidence)


def assumption_notes(estimates: BareLogEstimates) -> list[str]:
    """What a bare-log prediction assumed about unattributed time, for its notes."""
    notes: list[str] = []
    python = [e for e in estimates.stages.values() if e.resource == PYTHON_WORKER_CPU]
    if python:
        fit = estimates.fits.get(PYTHON_GROUP)
        how = (
            f"cores per task read from the slowdown: {fit.evidence}"
            if fit is not None and fit.demand is not None
            else "cores per task from its thread and worker side by side, at least "
            f"{PYTHON_MIN_DEMAND:g} (no slowdown with concurrency to read them from)"
        )
        notes.append(
            f"{estimates.shown_python_share:.0%} of task time is unattributed time taken to be "
            f"Python-worker CPU in {len(python)} stage(s) whose RDD names or plan show Python "
            f"work; {how}"
        )
    if estimates.unknown_share >= SMALL_UNKNOWN:
        notes.append(
            f"{estimates.shown_unknown_share:.0%} of task time is unattributed with no evidence of "
            "what it was (counted as CPU); the prediction's range widens to match"
        )
    jvm_stages = [
        e
        for e in estimates.stages.values()
        if e.resource != PYTHON_WORKER_CPU and e.demand is not None
    ]
    stretched = sum(e.from_stretch for e in jvm_stages)
    if stretched:
        notes.append(
            f"JVM stages: {stretched} stage(s) whose tasks ran beside each other take the cores "
            "per task their own stretch shows (their threads' time off CPU taken to be waiting "
            "for a core)"
        )
    jvm = estimates.fits.get(JVM_GROUP)
    if jvm is not None and jvm.demand is not None:
        notes.append(f"JVM stages: {jvm.evidence}")
    elif len(jvm_stages) > stretched:
        notes.append(
            f"JVM stages: a task taken to keep {JVM_OTHER_THREADS:g}× its thread's cores busy "
            "(GC, JIT, the driver in local mode; fitted on the fit workloads), where its CPU "
            "time leaves room for that"
        )
    return notes


def _python_markers(estimates: BareLogEstimates) -> str:
    names = sorted(
        {
            m
            for e in estimates.stages.values()
            if e.resource == PYTHON_WORKER_CPU
            for m in e.evidence.split(";")[0].removeprefix("the log names ").split(", ")
        }
    )
    return ", ".join(names)


def application_assumption(estimates: BareLogEstimates) -> str:
    """One sentence on what the application's unattributed time was taken to be."""
    parts: list[str] = []
    if estimates.python_share >= 0.05:
        fit = estimates.fits.get(PYTHON_GROUP)
        how = (
            fit.evidence
            if fit is not None and fit.tasks
            else "no slowdown with concurrency to measure its cores"
        )
        parts.append(
            f"{estimates.shown_python_share:.0%} of task time is unattributed time taken to be "
            f"{PYTHON_WORKER_CPU} (the log names {_python_markers(estimates)}; {how})"
        )
    if estimates.unknown_share >= 0.05:
        parts.append(
            f"{estimates.shown_unknown_share:.0%} of task time is unattributed with no evidence of "
            "what it was, counted as CPU (no Python operator in the log; record a bundle to "
            "measure it)"
        )
    return "; ".join(parts)


def advice_assumptions(
    estimates: BareLogEstimates, skip: set[StageKey] | frozenset[StageKey] = frozenset()
) -> dict[StageKey | None, str]:
    """Per stage attempt (None: the application), what its unattributed time was taken to
    be, for the advice; stages in ``skip`` (split by code vectors) are left out."""
    out: dict[StageKey | None, str] = {}
    for key, e in estimates.stages.items():
        if key in skip or e.unattributed_share < SMALL_UNKNOWN:
            continue
        if e.resource in (PYTHON_WORKER_CPU, UNKNOWN):
            out[key] = e.assumption
    overall = application_assumption(estimates)
    if overall:
        out[None] = overall
    return out
