"""Quantified advice for ``perfmodel diagnose``: the bottleneck, and what a change buys.

A bottleneck name alone invites the wrong fix ("disk-bound, so add cores?"). Each line
here is backed by a replay: the stage's dominant resource is changed the way a user
would change it, and the predicted before/after times are quoted, including when the
obvious fix does *not* help (an I/O-bound stage on a shared disk).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.simulate.config import (
    BaselineOverrides,
    ClusterConfig,
    WhatIf,
    apply_what_if,
    baseline_config,
)
from perfmodel.simulate.replay import (
    BaselineReplay,
    Prediction,
    StagePrediction,
    replay_baseline,
    replay_workload,
)
from perfmodel.simulate.workload import Workload, compile_workload

MIN_STAGE_SHARE = 0.10
"""Stages shorter than this share of the application are not worth a line of advice."""
NO_HELP = 0.05
"""A change that saves less than this fraction is reported as not helping."""


@dataclass(frozen=True, slots=True)
class Advice:
    """One piece of advice; ``stage_id`` is None for the application as a whole."""

    stage_id: int | None
    resource: str
    share: float
    change: str
    before_s: float
    after_s: float
    text: str
    basis: str = ""
    """What the share was made of where unattributed time was turned into a resource (or
    left unknown): the share, the resource it was taken to be, and the evidence."""


def advise(
    profile: ApplicationProfile,
    vectors: Mapping[StageKey, ResourceVector] | None = None,
    *,
    baseline: ClusterConfig | None = None,
    max_stages: int = 3,
) -> list[Advice]:
    """Advice lines for the application and its most expensive stages."""
    base = baseline or baseline_config(profile, BaselineOverrides())
    workload = compile_workload(profile, base, vectors)
    return advise_workload(workload, base, max_stages=max_stages)


def advise_workload(
    workload: Workload,
    base: ClusterConfig,
    max_stages: int = 3,
    baseline: BaselineReplay | None = None,
    observed: Prediction | None = None,
    assumptions: Mapping[StageKey | None, str] | None = None,
) -> list[Advice]:
    """Advice lines from a compiled workload. Pass its ``baseline`` replay and the
    ``observed`` configuration's prediction when the caller already has them (the facade
    does), so neither is made again. ``assumptions`` say, per stage attempt (None: the
    application), what its unattributed time was taken to be; CPU- and memory-bound lines
    carry them as their ``basis``, so a share made of estimated time says so."""
    done = baseline or replay_baseline(workload, base)
    predictions = _WhatIfReplays(workload, base, done)
    replayed = observed or replay_workload(workload, base, base, done)
    out: list[Advice] = []
    notes = assumptions or {}
    overall = _overall(replayed, predictions)
    if overall is not None:
        out.append(_with_basis(overall, notes.get(None, "")))
    total = max(replayed.baseline_replay_s, 1e-9)
    ranked = sorted(range(len(replayed.stages)), key=lambda i: -replayed.stages[i].baseline_s)
    for i in ranked[:max_stages]:
        stage = replayed.stages[i]
        if stage.baseline_s / total < MIN_STAGE_SHARE:
            break
        line = _stage_advice(i, stage, predictions)
        if line is not None:
            out.append(_with_basis(line, notes.get((stage.stage_id, stage.attempt), "")))
    return out


def _with_basis(line: Advice, basis: str) -> Advice:
    """The line with what its share was made of, where the resource is a CPU share that
    holds estimated time."""
    if not basis or line.resource != "cpu":
        return line
    return replace(line, basis=basis)


class _WhatIfReplays(Mapping[str, Prediction]):
    """The advice's what-if predictions, each replayed the first time a line asks for it.

    A CPU-bound application's advice needs "2× cores" alone; replaying all seven changes
    up front cost most of the advice's time on logs with thousands of stages.
    """

    def __init__(self, workload: Workload, base: ClusterConfig, done: BaselineReplay) -> None:
        self._workload, self._base, self._done = workload, base, done
        self._changes = _changes(base)
        self._replayed: dict[str, Prediction] = {}

    def __getitem__(self, name: str) -> Prediction:
        if name not in self._replayed:
            target = apply_what_if(self._base, self._changes[name])
            self._replayed[name] = replay_workload(self._workload, self._base, target, self._done)
        return self._replayed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._changes)

    def __len__(self) -> int:
        return len(self._changes)


def _changes(base: ClusterConfig) -> dict[str, WhatIf]:
    """The changes advice is quantified with."""
    # "2× cores" is a machine (local mode) or a cluster with twice the cores; "2× slots"
    # only runs more tasks at once on the hosts there are (the question for I/O-bound work).
    more_cores = WhatIf(
        cores=base.slots * 2, host_cores=base.host_cores * 2 if base.local_mode else None
    )
    return {
        "2× cores": more_cores,
        "2× slots": WhatIf(cores=base.slots * 2),
        "half the slots": WhatIf(cores=max(1, base.slots // 2)),
        "2× memory": WhatIf(memory_bytes=base.memory_bytes * 2),
        "2× disk bandwidth": WhatIf(disk_factor=2.0),
        "2× network bandwidth": WhatIf(net_factor=2.0),
        "2× faster CPU": WhatIf(cpu_speed=base.cpu_speed * 2),
    }


_FIX = {
    "cpu": "2× cores",
    "memory": "2× memory",
    "disk": "2× disk bandwidth",
    "network": "2× network bandwidth",
}


def _stage_advice(
    i: int, stage: StagePrediction, predictions: Mapping[str, Prediction]
) -> Advice | None:
    resource = stage.bottleneck
    share = stage.vector.get(resource, 0.0)
    before = stage.baseline_s
    label = f"stage {stage.stage_id}"
    if resource in ("cpu", "memory"):
        change = _FIX[resource]
        after = predictions[change].stages[i].predicted_s
        text = (
            f"{label} is {_bound(resource)} ({share:.0%} of its time): "
            f"{change} → {before:.1f} s to ~{after:.1f} s"
        )
        if resource == "cpu" and before - after < NO_HELP * before:
            text += " (the stage cannot use more cores: too few tasks, or one long task)"
        return Advice(stage.stage_id, resource, share, change, before, after, text)
    if resource in ("disk", "network"):
        more = predictions["2× slots"].stages[i].predicted_s
        fewer = predictions["half the slots"].stages[i].predicted_s
        faster = predictions[_FIX[resource]].stages[i].predicted_s
        if before - more < NO_HELP * before:
            hint = "more threads on this host will not help"
            if fewer <= before * (1 + NO_HELP):
                hint += "; fewer concurrent tasks for this stage would cost little"
        else:
            hint = f"2× slots → ~{more:.1f} s"
        text = (
            f"{label} is {resource}-bound ({share:.0%} of its time): {hint}; "
            f"{_FIX[resource]} → {before:.1f} s to ~{faster:.1f} s"
        )
        return Advice(stage.stage_id, resource, share, _FIX[resource], before, faster, text)
    if resource == "other":
        # Measured off CPU and not I/O its bytes explain (`perfmodel.simulate.off_cpu`): no
        # law moves it, and saying nothing would leave the stage unexplained.
        after = predictions["2× cores"].stages[i].predicted_s
        text = (
            f"{label} waits off CPU for {share:.0%} of its time (not CPU, not a wait for a "
            f"core, not I/O its bytes explain): no faster resource shortens a task's wait, "
            f"only more tasks at once (2× cores → {before:.1f} s to ~{after:.1f} s); look "
            "for locks, remote calls or waits on another thread"
        )
        return Advice(stage.stage_id, resource, share, "2× cores", before, after, text)
    return None


def _overall(baseline: Prediction, predictions: Mapping[str, Prediction]) -> Advice | None:
    resource = baseline.bottleneck
    if resource not in _FIX:
        return None
    change = _FIX[resource]
    before = baseline.baseline_replay_s
    after = predictions[change].predicted_s
    weights = [s.vector.get(resource, 0.0) * s.baseline_s for s in baseline.stages]
    share = sum(weights) / max(sum(s.baseline_s for s in baseline.stages), 1e-9)
    text = (
        f"the application is {_bound(resource)} overall ({share:.0%} of stage time): "
        f"{change} → {before:.1f} s to ~{after:.1f} s"
    )
    return Advice(None, resource, share, change, before, after, text)


def _bound(resource: str) -> str:
    return "CPU-bound" if resource == "cpu" else f"{resource}-bound"
