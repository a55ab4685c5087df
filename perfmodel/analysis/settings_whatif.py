"""A what-if on Spark settings (``--conf KEY=VALUE``): checked, split in two, replayed.

Settings arrive as values of the one what-if grammar (`perfmodel.simulate.whatif.Change`,
read by Spark's table, `perfmodel.spark.settings`). Some size the executors
(``spark.executor.cores``, ``.memory``, ``.instances``, ``spark.memory.fraction``, dynamic
allocation's switch and bounds): they become the resource change the replay already predicts
(`perfmodel.simulate.config.WhatIf`). The others move partitions (shuffle partitions, AQE,
file splits, the default parallelism, broadcast thresholds): the Spark front end plans
what Spark would do with them (`perfmodel.spark.partition_plan`) and the replay prices the
re-split stages (`perfmodel.simulate.repartition`). The two halves cannot import each other,
so this module, in the facade, joins them.

A key the model knows but cannot predict is refused with the reason (or, when the caller
asks for it, reported and left out), a key that changes nothing in this log says why, and a
key that does not apply (an executor size in local mode) says so: never dropped in silence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from perfmodel.dag.model import ApplicationProfile
from perfmodel.dag.partition_change import (
    JoinStrategyChange,
    PartitionPlan,
    SettingsEffect,
    StageTaskChange,
)
from perfmodel.simulate import cpu_floor
from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf, apply_what_if
from perfmodel.simulate.repartition import Repartitioned, check_plan, repartition_workload
from perfmodel.simulate.replay import BaselineReplay, Prediction, replay_workload
from perfmodel.simulate.workload import Workload
from perfmodel.spark.partition_plan import controls_of, no_effect, plan_settings
from perfmodel.spark.partitioning import Partitioning
from perfmodel.spark.settings import SettingValue

RESOURCE_KEYS = (
    "spark.executor.cores",
    "spark.executor.instances",
    "spark.executor.memory",
    "spark.driver.memory",
    "spark.memory.fraction",
    "spark.dynamicAllocation.enabled",
    "spark.dynamicAllocation.minExecutors",
    "spark.dynamicAllocation.maxExecutors",
    "spark.dynamicAllocation.initialExecutors",
)
"""Keys that size executors: they map onto the resource what-if."""

_ALLOCATION = "spark.dynamicAllocation."
_ENABLED = "spark.dynamicAllocation.enabled"
_ALLOCATION_FIELDS = {
    "min_executors": "spark.dynamicAllocation.minExecutors",
    "max_executors": "spark.dynamicAllocation.maxExecutors",
    "initial_executors": "spark.dynamicAllocation.initialExecutors",
}
"""The grammar's dynamic-allocation fields (`WhatIf`) and the Spark key that sets each."""

_OPTION_OF = {
    "cores": "--cores",
    "executors": "--executors",
    "executor_cores": "--executor-cores",
    "memory_bytes": "--mem",
    "dynamic_allocation": "--dynamic-allocation",
    "min_executors": "--min-executors",
    "max_executors": "--max-executors",
    "initial_executors": "--initial-executors",
}


@dataclass(slots=True)
class SettingsWhatIf:
    """Settings split into what the replay predicts."""

    values: dict[str, SettingValue]
    """Every predicted key given, parsed."""
    resource: dict[str, int | float | bool]
    """The executor sizing part, as `WhatIf` fields (empty: no resource change)."""
    resource_keys: dict[str, str]
    """Which setting set each resource field (for messages)."""
    partitioning: dict[str, SettingValue]
    """Keys that move partitions or change a join's strategy."""
    notes: list[str] = field(default_factory=list)
    not_predicted: dict[str, str] = field(default_factory=dict)
    """Keys given that the model cannot predict, with the reason (lenient callers only)."""


def split_settings(
    values: Mapping[str, SettingValue],
    baseline: ClusterConfig,
    not_predicted: Mapping[str, str] | None = None,
) -> SettingsWhatIf:
    """Parsed settings split into the resource change and the partitioning change (see the
    module's doc). ``not_predicted``: keys a lenient caller left out, with the reason: they
    are said in the notes."""
    skipped = dict(not_predicted or {})
    notes: list[str] = [f"not predicted: {k} ({why})" for k, why in skipped.items()]
    change: dict[str, int | float | bool] = {}
    keys: dict[str, str] = {}
    local = baseline.local_mode
    for key in ("spark.executor.cores", "spark.executor.instances", "spark.executor.memory"):
        if key in values and local:
            notes.append(f"{key} does not apply in local mode (the driver runs the tasks)")
    allocation = dynamic_allocation_fields(values, baseline, notes)
    if not local:
        sized = [
            ("spark.executor.cores", "executor_cores"),
            ("spark.executor.memory", "memory_bytes"),
        ]
        if not dynamic_target(values, baseline):
            # With dynamic allocation the instances are a floor of its start (above).
            sized.append(("spark.executor.instances", "executors"))
        for key, name in sized:
            if key in values:
                change[name], keys[name] = int(values[key]), key
        if "spark.driver.memory" in values:
            notes.append(
                "spark.driver.memory sizes the driver, which runs no tasks outside local mode: "
                "no change predicted"
            )
    elif "spark.driver.memory" in values:
        change["memory_bytes"] = int(values["spark.driver.memory"])
        keys["memory_bytes"] = "spark.driver.memory"
    if "spark.memory.fraction" in values:
        change["memory_fraction"] = float(values["spark.memory.fraction"])
        keys["memory_fraction"] = "spark.memory.fraction"
    for name, value in allocation.items():
        change[name] = value
        keys[name] = _ALLOCATION_FIELDS.get(name, _ENABLED)
    if "initial_executors" in allocation and "spark.executor.instances" in values:
        keys["initial_executors"] = "spark.executor.instances"
    return SettingsWhatIf(
        values=dict(values),
        resource=change,
        resource_keys=keys,
        partitioning={k: v for k, v in values.items() if k not in RESOURCE_KEYS},
        notes=notes,
        not_predicted=skipped,
    )


def dynamic_allocation_fields(
    values: Mapping[str, SettingValue], baseline: ClusterConfig, notes: list[str]
) -> dict[str, int | bool]:
    """``spark.dynamicAllocation.*`` as the grammar's own dynamic-allocation fields
    (``dynamic-allocation``, ``min-executors``, ``max-executors``, ``initial-executors``):
    the one place these keys meet the resource what-if, so ``--conf
    spark.dynamicAllocation.maxExecutors=4`` predicts what ``--max-executors 4`` does.

    As in Spark: in local mode the keys change nothing; with dynamic allocation off in the
    target (the run's setting, or ``enabled=false``), its bounds change nothing; with it on,
    ``spark.executor.instances`` is a floor of the executors it starts with (Spark's
    ``getDynamicAllocationInitialExecutors``), not a fixed count. Each case is said."""
    keys = [k for k in values if k.startswith(_ALLOCATION)]
    instances = values.get("spark.executor.instances")
    toggled = values.get(_ENABLED)
    enabled = dynamic_target(values, baseline)
    if not keys and not (instances is not None and enabled):
        return {}
    if baseline.local_mode:
        if keys:
            notes.append("dynamic allocation does not apply in local mode: no change predicted")
        return {}
    out: dict[str, int | bool] = {}
    if toggled is not None and (bool(toggled) or baseline.allocation.enabled):
        # Said even where the run had it on: with a fixed executor count beside it, the
        # contradiction is refused as --dynamic-allocation on is, not turned into a static run.
        out["dynamic_allocation"] = bool(toggled)
    if not enabled:
        bounds = [k for k in keys if k != _ENABLED]
        if bounds:
            notes.append(
                f"dynamic allocation is off in this configuration: {', '.join(bounds)} "
                f"change nothing unless {_ENABLED}=true is set too"
            )
        return out
    for name, key in _ALLOCATION_FIELDS.items():
        if key in values:
            out[name] = int(values[key])
    low = int(out.get("min_executors", baseline.allocation.min_executors))
    high = int(out.get("max_executors", baseline.allocation.max_executors))
    if low > high:
        raise ConfigError(
            f"spark.dynamicAllocation.minExecutors ({low}) is above maxExecutors ({high}): "
            "Spark refuses that"
        )
    initial = out.get("initial_executors")
    if initial is not None and not low <= int(initial) <= high:
        raise ConfigError(
            f"spark.dynamicAllocation.initialExecutors ({int(initial)}) must lie between "
            f"minExecutors ({low}) and maxExecutors ({high})"
        )
    if instances is not None:
        # Spark starts with the largest of minExecutors, initialExecutors and instances.
        start = max(
            int(instances),
            int(out.get("initial_executors", baseline.allocation.initial_setting or 0)),
            low,
        )
        if start > high:
            raise ConfigError(
                f"spark.executor.instances ({int(instances)}) with dynamic allocation sets the "
                f"executors it starts with, which must not exceed "
                f"spark.dynamicAllocation.maxExecutors ({high})"
            )
        out["initial_executors"] = start
        notes.append(
            f"with dynamic allocation spark.executor.instances is a floor of the executors it "
            f"starts with: {start}, then as the policy asks"
        )
    return out


def dynamic_target(values: Mapping[str, SettingValue], baseline: ClusterConfig) -> bool:
    """Whether the target uses dynamic allocation: the run's setting unless
    ``spark.dynamicAllocation.enabled`` is given (local mode: never, as Spark ignores it)."""
    if baseline.local_mode:
        return False
    toggled = values.get(_ENABLED)
    return baseline.allocation.enabled if toggled is None else bool(toggled)


def settings_target(
    base: ClusterConfig, what_if: SettingsWhatIf, resources: WhatIf | ClusterConfig | None
) -> ClusterConfig:
    """The configuration the settings' resource part describes, on top of ``resources``
    (another resource change: the grammar's own settings, ``--cores 8``). A resource set
    both ways is refused, naming both."""
    if isinstance(resources, ClusterConfig):
        if what_if.resource:
            given = ", ".join(sorted(set(what_if.resource_keys.values())))
            raise ConfigError(
                f"{given} cannot be applied to a configuration given whole: give executor "
                "sizes either as Spark settings or in the configuration"
            )
        return resources
    merged: dict[str, object] = {}
    if resources is not None:
        merged = {f.name: getattr(resources, f.name) for f in fields(resources)}
        merged = {k: v for k, v in merged.items() if v is not None}
    for name, value in what_if.resource.items():
        if name in merged:
            option = _OPTION_OF.get(name, name)
            raise ConfigError(
                f"{what_if.resource_keys[name]} and {option} both set {name}: give it once"
            )
        merged[name] = value
    if not merged:
        return base
    return apply_what_if(base, WhatIf(**merged))  # type: ignore[arg-type]


def settings_effect(
    given: Mapping[str, str],
    what_if: SettingsWhatIf,
    plan: PartitionPlan,
    profile: ApplicationProfile,
    partitioning: Partitioning,
) -> SettingsEffect:
    """What the settings change, for the user: each re-partitioned stage (old → new tasks,
    the knob), each join switched, and each setting that changes nothing here, with why."""
    controls = controls_of(profile, partitioning)
    stages = [
        StageTaskChange(
            c.key[0],
            c.key[1],
            c.control,
            c.knob,
            c.old_partitions,
            c.new_partitions,
            c.why,
            *c.blocks,
        )
        for c in sorted(plan.changes, key=lambda c: c.key)
    ]
    joins = [JoinStrategyChange(j.query_id, j.before, j.after, j.why) for j in plan.joins]
    maps = {k for c in plan.changes if c.planned[0] != c.planned[1] for k in c.map_stages}
    records = {k: ms for c in plan.changes for k, ms in c.record_ms.items()}
    record_ms = sum(
        (after - before) * int(profile.stages[k].table.ended.sum())
        for k, (before, after) in records.items()
        if k in profile.stages
    )
    return SettingsEffect(
        settings=dict(given),
        stages=stages,
        joins=joins,
        map_stages=len(maps),
        record_ms=record_ms,
        no_effect=no_effect(profile, partitioning, what_if.partitioning, controls),
        not_predicted=dict(what_if.not_predicted),
        controls=controls,
    )


def plan_for(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    what_if: SettingsWhatIf,
    target: ClusterConfig,
) -> PartitionPlan:
    """What Spark would do with the settings' partitioning part on ``target``."""
    return plan_settings(
        profile,
        partitioning,
        what_if.partitioning,
        target.executors * target.executor_cores,
        target.local_mode,
    )


def check_settings(
    workload: Workload,
    profile: ApplicationProfile,
    partitioning: Partitioning,
    what_if: SettingsWhatIf,
    target: ClusterConfig,
) -> None:
    """Everything that could refuse the settings, without a replay: Spark's rules on the new
    partitions (a split size cutting a stage into millions of tasks) and the replay's limit
    on tasks (a sweep checks every point before its first replay)."""
    check_plan(workload, plan_for(profile, partitioning, what_if, target))


def predict_settings(
    workload: Workload,
    profile: ApplicationProfile,
    partitioning: Partitioning,
    base: ClusterConfig,
    baseline_replay: BaselineReplay,
    what_if: SettingsWhatIf,
    target: ClusterConfig,
    given: Mapping[str, str],
) -> tuple[Prediction, Repartitioned]:
    """Predict the run under ``what_if`` on ``target`` (`settings_target`): its stages
    re-split for the new partitioning, replayed on the target. The prediction's baseline
    and self-check stay the profiled workload's; ``prediction.conf`` says what changed."""
    plan = plan_for(profile, partitioning, what_if, target)
    moved = repartition_workload(workload, profile, plan, base)
    if not moved.changed:
        prediction = replay_workload(workload, base, target, baseline_replay)
    else:
        prediction = replay_workload(moved.workload, base, target)
        own = baseline_replay
        floor = cpu_floor.floor_ms(workload.app_cpu_ms, base, base)
        prediction.baseline_replay_s = max(own.line.end_ms, floor) / 1000.0
        for i, stage in enumerate(prediction.stages):
            if i < len(own.line.stage_ready_ms):
                span = own.line.stage_complete_ms[i] - own.line.stage_ready_ms[i]
                stage.baseline_s = max(0.0, span) / 1000.0
    effect = settings_effect(given, what_if, plan, profile, partitioning)
    prediction.notes.extend(what_if.notes)
    prediction.notes.extend(n for n in moved.notes if n not in prediction.notes)
    prediction.conf = effect
    return prediction, moved
