"""What-if replay: a profile under another resource configuration → a `Prediction`.

Every prediction carries its own self-check: the same workload replayed on the baseline
configuration, compared with the observed runtime (``model_error``, as Sparklens prints
it), so a user sees how far the scheduler model reproduces what really happened before
trusting what it says about a change.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.partition_change import SettingsEffect
from perfmodel.dag.resources import ResourceVector
from perfmodel.simulate import cpu_floor
from perfmodel.simulate.allocation import ExecutorTimeline
from perfmodel.simulate.allocation_replay import (
    DynamicPlan,
    SlotPlan,
    allocation_note,
    run_plan,
    run_plan_with_executors,
    slot_plan_for,
)
from perfmodel.simulate.bottleneck import overall_bottleneck, resource_shares
from perfmodel.simulate.config import (
    BaselineOverrides,
    ClusterConfig,
    WhatIf,
    apply_what_if,
    baseline_config,
)
from perfmodel.simulate.intervals import Extrapolation
from perfmodel.simulate.laws import FloatArray
from perfmodel.simulate.rescale import StageTimes, StageTimesCache, all_stage_times
from perfmodel.simulate.scheduler import Timeline
from perfmodel.simulate.shared_machine import DriverStart, machine_factor
from perfmodel.simulate.stage_work import COMPONENTS
from perfmodel.simulate.workload import Workload, compile_workload


@dataclass(slots=True)
class StagePrediction:
    """One stage attempt: observed vs predicted submit-to-complete time and its bottleneck."""

    stage_id: int
    attempt: int
    name: str
    n_tasks: int
    observed_s: float
    baseline_s: float
    predicted_s: float
    bottleneck: str
    component_ms: FloatArray
    """Predicted task-time per component (ms, summed over the stage's tasks), in
    `COMPONENTS` order: an array, not a dict, because the advice holds a prediction of
    every stage for each of its changes at once (a dict per stage each was ~1 KB a stage)."""

    @property
    def component_s(self) -> dict[str, float]:
        """Predicted task-time per component, in seconds."""
        return dict(zip(COMPONENTS, (v / 1000.0 for v in self.component_ms.tolist()), strict=True))

    @property
    def vector(self) -> dict[str, float]:
        """Predicted share of task time per resource (cpu, memory, disk, network, ...),
        largest first."""
        return resource_shares(self.component_s)

    def as_dict(self) -> dict[str, object]:
        return {
            "stage_id": self.stage_id,
            "attempt": self.attempt,
            "name": self.name,
            "tasks": self.n_tasks,
            "observed_s": self.observed_s,
            "baseline_replay_s": self.baseline_s,
            "predicted_s": self.predicted_s,
            "bottleneck": self.bottleneck,
            "vector": self.vector,
            "components_s": self.component_s,
        }


@dataclass(slots=True)
class Prediction:
    """The answer to "what would this application take on that configuration?"."""

    app_id: str
    observed_s: float
    baseline_replay_s: float
    predicted_s: float
    config: ClusterConfig
    baseline_config: ClusterConfig
    bottleneck: str
    stages: list[StagePrediction]
    n_tasks: int
    notes: list[str] = field(default_factory=list)
    predicted_low_s: float = math.nan
    predicted_high_s: float = math.nan
    """The 80% prediction interval (`perfmodel.simulate.intervals`); NaN until attached."""
    interval_source: str = ""
    """What the interval was built from (calibration class, widenings)."""
    interval_extrapolation: Extrapolation | None = None
    """Set when the change goes beyond the scale factors the interval was calibrated on
    (`perfmodel.simulate.intervals.extrapolation`): which, how far, the widening it got."""
    conf: SettingsEffect | None = None
    """What framework settings the what-if gave changed (``predict --conf``); None when it
    gave none."""
    framework: str = "spark"
    """The front end whose words describe the configurations (``dask``: workers of
    threads); the facade sets it from the profile."""

    @property
    def model_error(self) -> float:
        """Baseline replay vs observed runtime, as a signed fraction of the observed."""
        if self.observed_s <= 0:
            return 0.0
        return (self.baseline_replay_s - self.observed_s) / self.observed_s

    @property
    def speedup(self) -> float:
        """Baseline replay ÷ prediction: both from the same model, so its error cancels."""
        return self.baseline_replay_s / self.predicted_s if self.predicted_s > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        """The documented ``--json`` object (see docs/predict.md)."""
        return {
            "app_id": self.app_id,
            "observed_s": self.observed_s,
            "baseline_replay_s": self.baseline_replay_s,
            "model_error": self.model_error,
            "predicted_s": self.predicted_s,
            "config": self.config.as_dict(),
            "baseline_config": self.baseline_config.as_dict(),
            "bottleneck": self.bottleneck,
            "tasks": self.n_tasks,
            "stages": [s.as_dict() for s in self.stages],
            "notes": list(self.notes),
            "predicted_low_s": None if math.isnan(self.predicted_low_s) else self.predicted_low_s,
            "predicted_high_s": (
                None if math.isnan(self.predicted_high_s) else self.predicted_high_s
            ),
            "interval_source": self.interval_source,
            "interval_extrapolation": (
                self.interval_extrapolation.as_dict()
                if self.interval_extrapolation is not None
                else None
            ),
        } | ({"conf": self.conf.as_dict()} if self.conf is not None else {})


def replay(
    profile: ApplicationProfile,
    config: ClusterConfig | WhatIf | None = None,
    vectors: Mapping[StageKey, ResourceVector] | None = None,
    *,
    baseline: ClusterConfig | None = None,
) -> Prediction:
    """Predict ``profile`` on ``config`` (a resolved config, a change, or None = baseline).

    ``vectors`` (code-inferred resource vectors per stage attempt) refine how each task's
    unattributed time is split; without them it is split by the byte-based estimates and
    CPU rest documented in `perfmodel.simulate.workload`.
    """
    base = baseline or baseline_config(profile, BaselineOverrides())
    workload = compile_workload(profile, base, vectors)
    if config is None:
        target = base
    elif isinstance(config, WhatIf):
        target = apply_what_if(base, config)
    else:
        target = config
    return replay_workload(workload, base, target)


@dataclass(slots=True)
class BaselineReplay:
    """The baseline self-check of a workload; computed once, shared by many predictions
    (with the stage times they have in common: `perfmodel.simulate.rescale.StageTimesCache`)."""

    times: list[StageTimes]
    line: Timeline
    stage_cache: StageTimesCache | None = None
    timelines: OrderedDict[tuple[object, ...], tuple[Timeline, ExecutorTimeline | None]] = field(
        default_factory=OrderedDict
    )
    """Timelines (and the allocation policy's executors) by their inputs (stage-time keys
    and slots); see `schedule`."""

    def schedule(
        self,
        workload: Workload,
        times: list[StageTimes],
        slots: SlotPlan,
        lags: tuple[float, ...] = (1.0, 1.0, 1.0),
    ) -> tuple[Timeline, ExecutorTimeline | None]:
        """`run_schedule` (or the allocation replay), once per distinct input:
        configurations that differ only where no stage's task times do (a bandwidth no stage
        uses) replay the same timeline. ``lags``: how ``workload``'s driver lags were
        stretched from the compiled workload's (`on_machine`)."""
        stage_keys = tuple(t.key for t in times)
        if self.stage_cache is None or any(k is None for k in stage_keys):
            return run_plan_with_executors(workload, [t.durations for t in times], slots)
        plan_key = slots if isinstance(slots, DynamicPlan) else tuple(slots)
        key = (self.stage_cache.generation, stage_keys, plan_key, lags)
        line = self.timelines.get(key)
        if line is None:
            line = run_plan_with_executors(workload, [t.durations for t in times], slots)
            self.timelines[key] = line
            if len(self.timelines) > TIMELINES_KEPT:
                self.timelines.popitem(last=False)
        else:
            self.timelines.move_to_end(key)
        return line


TIMELINES_KEPT = 256
"""`BaselineReplay.schedule` keeps this many timelines (each a few floats per stage)."""


def new_transfers_note(exchanged_bytes: float, base: ClusterConfig, target: ClusterConfig) -> str:
    """What a prediction for several peers from a run on one leaves out: the baseline fetched
    every input at home, so it measured no transfer to scale (`laws.remote_share_factor`),
    and the ``(p − 1)/p`` of the inputs that would cross between ``p`` peers add none of
    their time (on the fourth and fifth held-out Dask sets, two workers took 4–17 times as
    long as one where Python objects crossed; docs/dask.md). Empty where it does not apply."""
    if base.peers > 1 or target.peers <= 1 or exchanged_bytes <= 0:
        return ""
    crossing = exchanged_bytes * (target.peers - 1) / target.peers
    peer = "worker" if target.executors_exchange_data else "host"
    return (
        f"new transfers: the baseline ran on one {peer} and fetched no input from another; "
        f"on {target.peers} {peer}s about {crossing / 1e6:,.1f} MB of the tasks' inputs "
        "would cross between them, and the time those transfers take is not in this "
        "prediction"
    )


def replay_baseline(workload: Workload, base: ClusterConfig) -> BaselineReplay:
    times = all_stage_times(workload.stages, base, base)
    line = run_plan(workload, [t.durations for t in times], slot_plan(workload, base, base))
    return BaselineReplay(times, line, StageTimesCache.for_works(workload.stages))


def replay_workload(
    workload: Workload,
    base: ClusterConfig,
    target: ClusterConfig,
    baseline: BaselineReplay | None = None,
) -> Prediction:
    """Replay a compiled workload on ``target``, with the baseline self-check alongside.

    Pass ``baseline`` (from `replay_baseline`) when predicting many configurations of one
    workload, so the self-check is not replayed again for each.
    """
    done = baseline or replay_baseline(workload, base)
    base_times, base_line = done.times, done.line
    executors: ExecutorTimeline | None = None
    plan: SlotPlan | None = None
    lags = (1.0, 1.0, 1.0)
    if target == base:
        times, line = base_times, base_line
    else:
        times = all_stage_times(workload.stages, base, target, done.stage_cache)
        run_on, lags = on_machine(workload, base, target)
        plan = slot_plan(run_on, base, target)
        line, executors = done.schedule(run_on, times, plan, lags)
    stages: list[StagePrediction] = []
    all_shares: list[dict[str, float]] = []
    for i, (work, st) in enumerate(zip(workload.stages, times, strict=True)):
        comp = dict(zip(COMPONENTS, (v / 1000.0 for v in st.component_ms.tolist()), strict=True))
        shares = resource_shares(comp)
        all_shares.append(shares)  # for the overall bottleneck; not kept per stage
        stages.append(
            StagePrediction(
                stage_id=work.key[0],
                attempt=work.key[1],
                name=work.name,
                n_tasks=work.n_tasks,
                observed_s=work.observed_ms / 1000.0,
                baseline_s=_stage_span(base_line, i) / 1000.0,
                predicted_s=_stage_span(line, i) / 1000.0,
                bottleneck=next(iter(shares), "none"),
                component_ms=st.component_ms,
            )
        )
    notes = list(workload.notes)
    transfers = new_transfers_note(workload.exchanged_bytes, base, target)
    if transfers:
        notes.append(transfers)
    if workload.driver_start is not None and lags[2] != 1.0:
        notes.append(_driver_start_note(workload.driver_start, lags[2]))
    if isinstance(plan, DynamicPlan) and executors is not None:
        notes.append(allocation_note(executors, line.end_ms, plan))
    # The floor holds the CPU the target still does: less where it spills less.
    app_cpu = max(0.0, workload.app_cpu_ms + sum(t.cpu_work_change_ms for t in times))
    floor = cpu_floor.floor_ms(app_cpu, base, target)
    if floor > line.end_ms:
        notes.append(cpu_floor.floor_note(app_cpu, target, floor))
    return Prediction(
        app_id=workload.app_id,
        observed_s=workload.observed_ms / 1000.0,
        baseline_replay_s=max(base_line.end_ms, cpu_floor.floor_ms(workload.app_cpu_ms, base, base))
        / 1000.0,
        predicted_s=max(line.end_ms, floor) / 1000.0,
        config=target,
        baseline_config=base,
        bottleneck=overall_bottleneck(stages, all_shares),
        stages=stages,
        n_tasks=workload.n_tasks,
        notes=notes,
    )


def slot_plan(workload: Workload, base: ClusterConfig, target: ClusterConfig) -> SlotPlan:
    """Slots as (available from, gone at): the observed executors where the count is kept,
    or Spark's allocation policy where the target's dynamic allocation decides them
    (`perfmodel.simulate.allocation_replay.slot_plan_for`).

    With the baseline's executors the replay uses the executors the log shows, arriving
    and leaving when they did (containers starting late, executors lost or released by
    dynamic allocation). A changed executor count or size is replayed as a fixed set of
    executors that arrive as the observed ones did (extra ones with the last) and stay.
    Local mode and logs without executor events get all slots from the start.
    """
    decided = slot_plan_for(workload, base, target)
    if decided is not None:
        return decided
    per_task = max(target.task_cpus, 1)
    # No more tasks than the workload has can ever run at once: slots past that count are
    # never used, and the plan is bounded by the data, not by a slot count (a log's
    # ``local[2000000000]``, or ``--executors 100000 --executor-cores 10000``).
    most = max(1, workload.n_tasks)
    if not workload.executors:
        return [(0.0, math.inf)] * min(target.slots, most)
    same = (target.executors, target.executor_cores) == (base.executors, base.executor_cores)
    # An executor takes its first task a measured while after registering (where the log
    # shows one registering while tasks waited; `perfmodel.simulate.allocation_costs`).
    delay = workload.allocation.costs.first_task_ms if workload.allocation else 0.0
    plan: list[tuple[float, float]] = []
    if same:
        for added, gone, cores in workload.executors:
            plan += [(min(added + delay, gone), gone)] * min(max(1, cores // per_task), most)
        return plan
    # Slots that stay: the earliest `most` of them are the only ones a task can take.
    arrivals = [added + delay for added, _, _ in workload.executors]
    per_executor = min(max(1, target.executor_cores // per_task), most)
    times = sorted(arrivals[min(i, len(arrivals) - 1)] for i in range(target.executors))
    for added in times:
        if len(plan) >= most:
            break
        plan += [(added, math.inf)] * per_executor
    return plan[:most] if len(plan) > most else plan


def on_machine(
    workload: Workload, base: ClusterConfig, target: ClusterConfig
) -> tuple[Workload, tuple[float, float, float]]:
    """The workload with its driver's lags and its executors' arrivals stretched as the
    machine the executors shared gets more (or less) crowded with the target's executor
    count (`perfmodel.simulate.shared_machine`), and the three factors (start-up, after the
    first task, the driver's start-up before its first job). The driver and the starting
    executors share that machine, so on a crowded one the executors start, and the driver
    plans, more slowly. The workload itself where nothing was measured or nothing changes.

    Where dynamic allocation is on at either end, the executors start at another time: a
    static configuration starts all of them beside the driver's own start-up, the policy
    (with no initial executors) only once the first job waits. There the driver's start-up
    before its first job takes what `shared_machine.DriverStart.lag_for` says, relative to
    what it says of the baseline."""
    m = workload.machine
    if m is None or target.local_mode:
        return workload, (1.0, 1.0, 1.0)
    f_start = f_tasks = 1.0
    if base.executors != target.executors:
        ratio = target.executors / max(base.executors, 1)
        starting = m.startup.executors
        f_start = machine_factor(m.startup, m.cores, starting, starting * ratio)
        f_tasks = machine_factor(m.tasks, m.cores, m.tasks.executors, m.tasks.executors * ratio)
    f_driver = _driver_start_factor(workload, base, target)
    if f_start == 1.0 and f_tasks == 1.0 and f_driver == 1.0:
        return workload, (1.0, 1.0, 1.0)
    first_job = workload.driver_start.lag_ms if workload.driver_start else -math.inf

    def factor(observed_ms: float) -> float:
        if f_driver != 1.0 and observed_ms <= first_job:
            return f_driver
        return f_start if observed_ms <= m.first_task_ms else f_tasks

    milestones = [
        replace(ms, lag_ms=ms.lag_ms * factor(ms.observed_ms)) for ms in workload.milestones
    ]
    executors = [
        (added * f_start, gone * f_start if math.isfinite(gone) else gone, cores)
        for added, gone, cores in workload.executors
    ]
    return replace(workload, milestones=milestones, executors=executors), (
        f_start,
        f_tasks,
        f_driver,
    )


def _driver_start_note(d: DriverStart, factor: float) -> str:
    """What the driver's start-up law did in a prediction, for the user."""
    return (
        f"the driver's start-up before its first job replayed as {d.lag_ms * factor / 1000:.1f} s "
        f"instead of {d.lag_ms / 1000:.1f} s: it used {d.cpu_ms / 1000:.1f} core-s of CPU, and "
        "executors starting beside it on the machine they shared take the cores it needs "
        "(docs/cluster.md)"
    )


def _driver_start_factor(workload: Workload, base: ClusterConfig, target: ClusterConfig) -> float:
    """t'/t of the driver's start-up before its first job where dynamic allocation, on at
    either end, changes which executors start beside it (`on_machine`); 1 elsewhere."""
    d, facts, m = workload.driver_start, workload.allocation, workload.machine
    if d is None or facts is None or m is None:
        return 1.0
    if not (base.allocation.enabled or target.allocation.enabled):
        return 1.0
    if target.allocation.enabled:
        starting = target.allocation.initial_executors
    else:
        starting = target.executors
    arrivals = [facts.costs.initial_arrival(k) for k in range(min(starting, 10_000))]
    startup = float(np.median(arrivals)) if arrivals else 0.0
    before = d.lag_for(d.starting, d.startup_ms, m.cores)
    after = d.lag_for(starting, startup, m.cores)
    return after / before if before > 0 else 1.0


def _stage_span(line: Timeline, i: int) -> float:
    return max(0.0, line.stage_complete_ms[i] - line.stage_ready_ms[i])


def slot_only_seconds(workload: Workload, base: ClusterConfig, target: ClusterConfig) -> float:
    """Slot-only replay (what Sparklens does for "what if I had N executors"): application
    runtime (s) with every task as long as observed, re-scheduled on ``target``'s slots.

    It ignores contention for cores and disks, memory and spill, and faster or slower
    resources — exactly what the resource laws add — so reporting both on the same pairs
    shows what the resource model is worth. The same scheduler and milestone graph are
    used, so the two differ only in the task durations they schedule."""
    durations = [w.components.sum(axis=0).tolist() for w in workload.stages]
    line = run_plan(workload, durations, slot_plan(workload, base, target))
    return line.end_ms / 1000.0
