"""What an accuracy study produces: pairs of runs, and their summaries per workload, per
side of a held-out split and per what-if kind.

Plain data shared by the study's steps (`perfmodel.experiment.accuracy` makes the pairs,
`held_out` and `what_if_kind` summarise them, `report` and `samplers` render them).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class KindAccuracy:
    """All pairs of one what-if kind, over every workload."""

    kind: str
    pairs: int
    workloads: list[str]
    mean_error: float
    """From the bundles (the default reading)."""
    worst_error: float
    worst_pair: str
    slot_only_mean_error: float
    bare_log_mean_error: float
    no_code_vectors_mean_error: float
    interval_coverage: float = math.nan
    """Share of the kind's pairs whose measured runtime is inside the bundle's 80% interval
    (NaN when none has one)."""
    bare_log_interval_coverage: float = math.nan
    """The same for the bare log's interval (NaN without `--variants`)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class PairResult:
    """One baseline run replayed on one other configuration, against what was measured."""

    experiment: str
    workload: str
    baseline_run: int
    baseline_config: str
    target_config: str
    target_runs: list[int]
    measured_s: float
    """Mean application runtime of the target configuration's runs."""
    measured_sd_s: float
    measured_wall_s: float
    predicted_s: float
    error: float
    """|predicted − measured| ÷ measured."""
    slot_only_s: float
    slot_only_error: float
    bottleneck: str
    baseline_observed_s: float
    baseline_model_error: float
    """The baseline replay's own signed error against its observed run."""
    stage_components: dict[str, dict[str, float]] = field(default_factory=dict)
    """Predicted task-seconds per component, per stage (``"id.attempt"``)."""
    bare_log_s: float = math.nan
    bare_log_error: float = math.nan
    no_code_vectors_s: float = math.nan
    no_code_vectors_error: float = math.nan
    plugin_samples_s: float = math.nan
    """The bundle read from the plugin's samples of the same run (``jvm_sampler = "both"``)."""
    plugin_samples_error: float = math.nan
    predicted_low_s: float = math.nan
    predicted_high_s: float = math.nan
    """The prediction's 80% interval (`perfmodel.simulate.intervals`)."""
    kind: str = ""
    """Which what-if the pair tests (`perfmodel.experiment.what_if_kind`)."""
    workload_class: str = ""
    """The baseline profile's class (`perfmodel.spark.pyspark_work.workload_class`)."""
    widening: float = math.nan
    """The interval's widening for this prediction (what calibration takes out again)."""
    bare_log_low_s: float = math.nan
    bare_log_high_s: float = math.nan
    bare_log_widening: float = math.nan
    scale: dict[str, float] = field(default_factory=dict)
    """Target ÷ baseline per dimension of the bundle's what-if
    (`perfmodel.simulate.intervals.scale_factors`): the range calibration records."""
    bare_log_scale: dict[str, float] = field(default_factory=dict)
    """The same for the bare log's what-if (its baseline may be read differently)."""
    baseline_slots: int | None = None
    """Task slots of the baseline's configuration (a cluster's one-core workers, i.e. its
    executors; N of ``local[N]``); None where not known. With `target_slots`, the scale factor
    of a worker-count pair (`perfmodel.experiment.scale_factor`)."""
    target_slots: int | None = None
    cluster: bool = False
    """The baseline ran on a cluster (not local mode): its residuals calibrate the intervals
    of predictions from cluster runs (`perfmodel.simulate.intervals.cluster_kind`)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class ScaleAccuracy:
    """Worker-count pairs of one scale factor and direction (e.g. 4× more executors), or of
    one step (2 → 8): the scale-out study's targets are stated per factor, and a model can
    be right one way and wrong the other, so neither direction may hide the other."""

    direction: str
    """``out`` (more executors at the target) or ``in`` (fewer)."""
    factor: float
    """Larger ÷ smaller executor count of the pairs (4.0 for both 2 → 8 and 8 → 2)."""
    steps: list[str]
    """The executor counts of the pairs, ``"2 → 8"``..., in order."""
    pairs: int
    workloads: list[str]
    mean_error: float
    """From the bundles."""
    signed_mean_error: float
    """Mean of (predicted − measured) ÷ measured: the bias, from the bundles."""
    bare_log_mean_error: float
    bare_log_signed_mean_error: float
    slot_only_mean_error: float
    slot_only_signed_mean_error: float
    worst_error: float
    worst_pair: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class WorkloadAccuracy:
    workload: str
    pairs: int
    mean_error: float
    worst_error: float
    slot_only_mean_error: float
    slot_only_worst_error: float
    bottlenecks: list[str]
    repeat_error: float = math.nan
    """Noise floor: mean |a − b| ÷ b over ordered pairs of runs of one configuration — the
    error of "predicting" a run by another run of the same configuration."""
    role: str = ""
    """``fit``, ``held-out`` or ``unlisted`` under the report's split; empty without one."""
    bare_log_mean_error: float = math.nan
    no_code_vectors_mean_error: float = math.nan
    interval_coverage: float = math.nan
    bare_log_interval_coverage: float = math.nan
    plugin_samples_mean_error: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class GroupAccuracy:
    """One side of the held-out split (``held-out`` or ``fit``), all its pairs together."""

    role: str
    workloads: list[str]
    pairs: int
    mean_error: float
    """From the bundles as `perfmodel predict` reads them (code vectors where recorded)."""
    worst_error: float
    worst_pair: str
    """``workload: baseline → target, signed error`` of the largest error."""
    slot_only_mean_error: float
    bare_log_mean_error: float
    no_code_vectors_mean_error: float
    interval_coverage: float
    missing: list[str] = field(default_factory=list)
    """Workloads the split puts on this side that have no pairs in the report."""
    bare_log_interval_coverage: float = math.nan
    plugin_samples_mean_error: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class AccuracyReport:
    """The validation table and the context needed to read it."""

    pairs: list[PairResult]
    workloads: list[WorkloadAccuracy]
    mean_error: float
    worst_error: float
    slot_only_mean_error: float
    slot_only_worst_error: float
    model_version: str
    created: str
    host: str
    machine: str
    cores: int
    load_avg: list[float]
    runs: int
    skipped: list[str] = field(default_factory=list)
    measured: str = ""
    """When the runs were measured, first start to last end (UTC), from the store; `created`
    and the machine fields are the report's own, made later and maybe elsewhere."""
    measured_hosts: list[str] = field(default_factory=list)
    """The hosts the runs were measured on, as the store recorded them."""

    @property
    def measured_where(self) -> str:
        """``2026-11-29 13:39–13:42 UTC on `vm` ``: when and where the runs were measured."""
        hosts = ", ".join(f"`{h}`" for h in self.measured_hosts) or "an unrecorded host"
        return f"{self.measured or 'at an unrecorded time'} on {hosts}"

    repeat_error: float = math.nan
    """The noise floor over all workloads (see `WorkloadAccuracy.repeat_error`)."""
    split: str = ""
    """The split file the workloads were labelled by; empty without one."""
    split_rule: str = ""
    groups: list[GroupAccuracy] = field(default_factory=list)
    """One summary per side of the split (held-out first); empty without a split."""
    kinds: list[KindAccuracy] = field(default_factory=list)
    """One summary per what-if kind (network bandwidth, memory, worker count...)."""
    scales: list[ScaleAccuracy] = field(default_factory=list)
    """Worker-count pairs per scale factor and direction (`perfmodel.experiment.scale_factor`)."""
    scale_steps: list[ScaleAccuracy] = field(default_factory=list)
    """The same pairs per step of executor counts (2 → 8, 4 → 8...)."""

    def as_dict(self) -> dict[str, Any]:
        nested = ("pairs", "workloads", "groups", "kinds", "scales", "scale_steps")
        return {
            **{k: getattr(self, k) for k in self.__slots__ if k not in nested},
            "workloads": [w.as_dict() for w in self.workloads],
            "groups": [g.as_dict() for g in self.groups],
            "kinds": [k.as_dict() for k in self.kinds],
            "scales": [s.as_dict() for s in self.scales],
            "scale_steps": [s.as_dict() for s in self.scale_steps],
            "pairs": [p.as_dict() for p in self.pairs],
        }


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def nanmean(values: list[float]) -> float:
    """Mean of the figures that exist (a variant that could not be read leaves NaN)."""
    return mean([v for v in values if not math.isnan(v)])


def interval_coverage(pairs: list[PairResult], bare_log: bool = False) -> float:
    """Share of pairs whose measured runtime lies inside the predicted interval (of the
    bundle's prediction, or with ``bare_log`` of the bare log's), over the pairs that have
    one; NaN when none has."""
    inside: list[bool] = []
    for p in pairs:
        low, high = (
            (p.bare_log_low_s, p.bare_log_high_s)
            if bare_log
            else (p.predicted_low_s, p.predicted_high_s)
        )
        if not (math.isnan(low) or math.isnan(high)):
            inside.append(low <= p.measured_s <= high)
    return sum(inside) / len(inside) if inside else math.nan
