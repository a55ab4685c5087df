"""What a validation study's figures show, computed from its runs (`perfmodel.report.figures`
draws them).

* Runtime curves per workload: the application runtime each configuration's first run
  predicts against task slots and against heap, the slot-only replay against slots, and the
  measured runs, so a reader sees where the model bends the way reality does.
* Per stage, the task-seconds of each resource component in the baseline replay of each
  configuration's first run: which resource each stage spends on, and how that shifts
  between configurations (spill appearing with a small heap).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from perfmodel.analysis import COMPONENTS, Analysis
from perfmodel.errors import PerfmodelError
from perfmodel.experiment.accuracy import group_key, load_baseline, predict, slot_only
from perfmodel.runs.rows import RunRow

DEFAULT_MEMORY = 1 << 30
"""The heap of a run that did not state one."""
MEMORY_SWEEP = [512 << 20, 768 << 20, 1 << 30, 3 << 29, 2 << 30, 3 << 30, 4 << 30]


@dataclass(slots=True)
class ConfigCurves:
    """What one configuration's first run predicts (see the module's docstring)."""

    config: str
    cores: list[int]
    predicted_s: list[float]
    """Per entry of ``cores``, at the run's own heap."""
    slot_only_s: list[float]
    memory_bytes: list[int]
    predicted_by_memory_s: list[float]
    """Per entry of ``memory_bytes``, at the run's own cores."""
    stages: list[tuple[int, int]] = field(default_factory=list)
    """(stage id, attempt) of each stage of the baseline replay."""
    stage_component_s: dict[str, list[float]] = field(default_factory=dict)
    """Per component (`COMPONENTS` order), task-seconds per entry of ``stages``."""


@dataclass(slots=True)
class WorkloadCurves:
    """One workload's figures: ``name`` is unique within the study (a workload run with other
    parameters gets ``-2``, ``-3`` ...)."""

    name: str
    measured: list[tuple[int, int, float]]
    """(task slots, heap bytes, application seconds) of every usable run."""
    configs: list[ConfigCurves]
    """By configuration name."""


def study_curves(runs: list[RunRow]) -> Iterator[WorkloadCurves]:
    """The figures' data for the successful measured ``runs``, one workload (experiment and
    parameters) at a time, so one workload's replays are in memory at once. A configuration
    whose bundle cannot be read is left out; a workload with none readable has no figures."""
    usable = [r for r in runs if r.status == "ok" and not r.warmup and r.app_s and r.bundle_path]
    groups: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    for r in usable:
        groups[group_key(r)].append(r)
    per_workload: dict[str, int] = defaultdict(int)
    for _key, wruns in sorted(groups.items()):
        workload = wruns[0].workload
        per_workload[workload] += 1
        if per_workload[workload] > 1:  # the same workload with other parameters
            workload = f"{workload}-{per_workload[workload]}"
        loaded: dict[str, tuple[RunRow, Analysis]] = {}
        for name, run in _first_per_config(wruns).items():
            try:
                loaded[name] = (run, load_baseline(str(run.bundle_path)))
            except (PerfmodelError, OSError):
                continue
        if not loaded:
            continue
        max_cores = max([r.cores or 1 for r in wruns] + [2])
        core_axis = list(range(1, 2 * max_cores + 1))
        mems = sorted({*MEMORY_SWEEP, *(r.memory_bytes or DEFAULT_MEMORY for r in wruns)})
        yield WorkloadCurves(
            name=workload,
            measured=[
                (r.cores or 1, r.memory_bytes or DEFAULT_MEMORY, r.app_s) for r in wruns if r.app_s
            ],
            configs=[
                _curves(name, run, lb, core_axis, mems)
                for name, (run, lb) in sorted(loaded.items())
            ],
        )


def _first_per_config(runs: list[RunRow]) -> dict[str, RunRow]:
    firsts: dict[str, RunRow] = {}
    for r in runs:
        firsts.setdefault(r.config, r)
    return firsts


def _curves(
    name: str, run: RunRow, lb: Analysis, core_axis: list[int], mems: list[int]
) -> ConfigCurves:
    mem = run.memory_bytes
    curves = ConfigCurves(
        config=name,
        cores=core_axis,
        predicted_s=[predict(lb, n, mem).predicted_s for n in core_axis],
        slot_only_s=[slot_only(lb, n, mem) for n in core_axis],
        memory_bytes=mems,
        predicted_by_memory_s=[predict(lb, run.cores, m).predicted_s for m in mems],
    )
    prediction = lb.predict()
    curves.stages = [(s.stage_id, s.attempt) for s in prediction.stages]
    curves.stage_component_s = {
        comp: [s.component_s.get(comp, 0.0) for s in prediction.stages] for comp in COMPONENTS
    }
    return curves
