"""The settings study: every run predicts every other run of its workload from its bare log.

Runs of one experiment (scripts/settings_study.sh: experiments/settings/*.toml) share one
machine shape and differ in Spark settings (shuffle partitions, AQE, broadcast joins, file
splits, the default parallelism). For each ordered pair of configurations, the source run's
bare event log (what most users have) predicts the target's runtime under the target's
settings, passed as ``--conf`` would pass them (`perfmodel.analysis.Analysis.predict_settings`).

Beside the prediction's error stands the error of *no change*: the source run's own runtime
taken as the target's, which is what advice without a prediction implies. Both are reported
over all pairs and over the pairs whose measured effect (target against source, measured) is
at least `EFFECT`; the model earns its keep on those. Where a configuration ran more than
once, the *repeat error* is the noise floor: each of its runs taken as the mean of its
repeats, an error no prediction from one run can be sure to beat. Where configurations ran at
least three times, the *median-run error* takes that noise out of both ends, as the Dask study
does: each configuration's median run predicts the median runtime of every other. ``perfmodel
experiment settings`` computes them; `perfmodel.report` renders them (the Markdown table goes
into README).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from perfmodel.analysis import CONF, Analysis, load
from perfmodel.errors import PerfmodelError
from perfmodel.experiment.split import FIT, HELD_OUT, Split
from perfmodel.profile.bundle import find_event_log
from perfmodel.runs.rows import RunRow

EFFECT = 0.15
"""A pair's measured effect (|target − source| ÷ source) from which it counts as a change the
settings made, not run-to-run noise."""
MEDIAN_RUNS = 3
"""Runs of a configuration from which it has a median run, and a median runtime."""
RESOURCE_FIELDS = ("master", "driver_memory", "executor_memory", "workers", "rate_mbit")
"""Config fields that must be equal in a settings pair (a change there is the resource
study's)."""


@dataclass(slots=True)
class SettingsPair:
    """One source run predicting one other configuration of its workload."""

    experiment: str
    workload: str
    source_run: int
    source_config: str
    target_config: str
    target_runs: list[int]
    settings: dict[str, str]
    """The ``--conf`` settings that take the source to the target."""
    source_s: float
    """The source run's measured runtime (the "no change" prediction)."""
    measured_s: float
    """The target configuration's mean measured runtime."""
    predicted_s: float
    low_s: float = math.nan
    high_s: float = math.nan
    note: str = ""
    """What the prediction changed (its first note on re-partitioning)."""
    source_is_median: bool = False
    """The source is its configuration's median run (`MEDIAN_RUNS` runs or more)."""
    median_s: float = math.nan
    """The target configuration's median runtime (NaN: it ran fewer than `MEDIAN_RUNS`
    times)."""

    @property
    def error(self) -> float:
        return abs(self.predicted_s - self.measured_s) / self.measured_s

    @property
    def median_pair(self) -> bool:
        """A median run predicting a median runtime: a pair of the median-run error."""
        return self.source_is_median and not math.isnan(self.median_s)

    @property
    def median_error(self) -> float:
        return abs(self.predicted_s - self.median_s) / self.median_s

    @property
    def median_no_change_error(self) -> float:
        return abs(self.source_s - self.median_s) / self.median_s

    @property
    def no_change_error(self) -> float:
        return abs(self.source_s - self.measured_s) / self.measured_s

    @property
    def effect(self) -> float:
        return abs(self.measured_s - self.source_s) / self.source_s

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(error=self.error, no_change_error=self.no_change_error, effect=self.effect)
        if self.median_pair:
            out.update(
                median_error=self.median_error, median_no_change_error=self.median_no_change_error
            )
        return out


@dataclass(frozen=True, slots=True)
class SettingsRepeat:
    """One run of a configuration "predicting" the mean of its repeats with no change."""

    workload: str
    config: str
    run: int
    repeats: list[int]
    run_s: float
    repeats_s: float

    @property
    def error(self) -> float:
        return abs(self.run_s - self.repeats_s) / self.repeats_s

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"error": self.error}


@dataclass(slots=True)
class SettingsSummary:
    """Errors over a set of pairs, all and with a large measured effect."""

    label: str
    workloads: list[str]
    pairs: int
    mean_error: float
    no_change_error: float
    effect_pairs: int
    effect_mean_error: float
    effect_no_change_error: float
    coverage: float
    """Share of pairs whose measured runtime lies in the predicted 80% interval."""
    repeat_runs: int = 0
    repeat_error: float = math.nan
    """Mean `SettingsRepeat` error of the runs of these workloads that have repeats: the
    noise floor (NaN where no configuration ran twice)."""
    median_pairs: int = 0
    median_error: float = math.nan
    """Mean error of the pairs whose median run predicts a median runtime
    (`SettingsPair.median_pair`; NaN where none ran `MEDIAN_RUNS` times)."""
    median_no_change_error: float = math.nan
    """No change's error on the same pairs: the median run's runtime taken as the target's
    median."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class SettingsReport:
    pairs: list[SettingsPair]
    groups: list[SettingsSummary]
    workloads: list[SettingsSummary]
    skipped: list[str] = field(default_factory=list)
    split: str = ""
    repeats: list[SettingsRepeat] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "effect_threshold": EFFECT,
            "split": self.split,
            "groups": [g.as_dict() for g in self.groups],
            "workloads": [w.as_dict() for w in self.workloads],
            "pairs": [p.as_dict() for p in self.pairs],
            "repeats": [r.as_dict() for r in self.repeats],
            "skipped": self.skipped,
        }


def spark_settings(config: dict[str, Any]) -> dict[str, str]:
    """The Spark settings a run configuration sets (its conf and shuffle partitions)."""
    out = {str(k): str(v) for k, v in (config.get("conf") or {}).items()}
    if config.get("shuffle_partitions") is not None:
        out["spark.sql.shuffle.partitions"] = str(config["shuffle_partitions"])
    return out


class NotASettingsPair(PerfmodelError):
    """Two configurations a settings what-if cannot take one to the other."""


def settings_diff(
    source: dict[str, Any], target: dict[str, Any], version_text: str, cores: int | None
) -> dict[str, str]:
    """The ``--conf`` settings that turn ``source``'s configuration into ``target``'s: every
    key the two set differently, a key the target leaves unset at Spark's default for the
    log's version (``spark.default.parallelism`` unset: the target's cores)."""
    for name in RESOURCE_FIELDS:
        if source.get(name) != target.get(name):
            raise NotASettingsPair(f"they differ in {name}, a resource")
    a, b = spark_settings(source), spark_settings(target)
    out: dict[str, str] = {}
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            continue
        if key not in b:
            default = CONF.default(key, version_text, b)
            if default is None and key == "spark.default.parallelism" and cores:
                default = str(cores)
            if default is None:
                raise NotASettingsPair(f"the target leaves {key} unset, which --conf cannot say")
            if a[key] == default:
                continue
            out[key] = default
        else:
            out[key] = b[key]
    unknown = [k for k in out if not CONF.predicts(k)]
    if unknown:
        raise NotASettingsPair(f"they differ in {', '.join(unknown)}, which is not predicted")
    return out


def _load_bare(bundle: str) -> Analysis:
    analysis = load(find_event_log(bundle))
    analysis.workload  # noqa: B018 - compiled now: a log without stages is refused here
    return analysis


def evaluate_settings(
    runs: list[RunRow], split: Split | None = None, *, limit: int | None = None
) -> SettingsReport:
    """Every ordered pair of configurations among ``runs`` (grouped by experiment and
    parameters), predicted from the source run's bare event log. ``limit``: at most this
    many source runs per experiment (smoke tests)."""
    usable = [r for r in runs if r.status == "ok" and not r.warmup and r.app_s and r.bundle_path]
    skipped = [
        f"run {r.id} ({r.experiment}, {r.config}): {r.status}" for r in runs if r not in usable
    ]
    groups: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    for r in usable:
        groups[(r.experiment, json.dumps(r.params, sort_keys=True))].append(r)
    pairs: list[SettingsPair] = []
    repeats: list[SettingsRepeat] = []
    for (_experiment, _params), group in sorted(groups.items()):
        by_config: dict[str, list[RunRow]] = defaultdict(list)
        for r in group:
            by_config[r.config].append(r)
        repeats += [rep for runs_of in by_config.values() for rep in repeat_errors(runs_of)]
        medians: set[int] = set()
        median_s: dict[str, float] = {}
        for name, runs_of in by_config.items():
            middle = median_run(runs_of)
            if middle is not None:
                medians.add(middle.id)
                median_s[name] = statistics.median(float(r.app_s or 0.0) for r in runs_of)
        sources = group if limit is None else group[:limit]
        for source in sources:
            try:
                analysis = _load_bare(str(source.bundle_path))
            except (PerfmodelError, OSError) as exc:
                skipped.append(f"run {source.id}: cannot read its event log: {exc}")
                continue
            version = analysis.profile.framework_version
            for name, targets in sorted(by_config.items()):
                if name == source.config:
                    continue
                pair = _pair(analysis, source, targets, version, skipped)
                if pair is not None:
                    pair.source_is_median = source.id in medians
                    pair.median_s = median_s.get(name, math.nan)
                    pairs.append(pair)
    return _report(pairs, split, skipped, repeats)


def median_run(runs: list[RunRow]) -> RunRow | None:
    """The run of one configuration whose runtime is the median: the middle of its runs
    ordered by runtime, then by id (the lower middle of an even count), where it ran at
    least `MEDIAN_RUNS` times."""
    if len(runs) < MEDIAN_RUNS:
        return None
    ordered = sorted(runs, key=lambda r: (float(r.app_s or 0.0), r.id))
    return ordered[(len(ordered) - 1) // 2]


def repeat_errors(runs: list[RunRow]) -> list[SettingsRepeat]:
    """Each run of one configuration against the mean of its other runs (none for a
    configuration that ran once)."""
    out: list[SettingsRepeat] = []
    for run in runs:
        others = [r for r in runs if r is not run]
        if not others:
            continue
        out.append(
            SettingsRepeat(
                workload=run.workload,
                config=run.config,
                run=run.id,
                repeats=[r.id for r in others],
                run_s=float(run.app_s or 0.0),
                repeats_s=statistics.fmean(float(r.app_s or 0.0) for r in others),
            )
        )
    return out


def _pair(
    analysis: Analysis, source: RunRow, targets: list[RunRow], version: str, skipped: list[str]
) -> SettingsPair | None:
    target = targets[0]
    where = f"run {source.id} ({source.config}) → {target.config}"
    try:
        settings = settings_diff(
            source.config_settings, target.config_settings, version, target.cores
        )
        prediction = analysis.predict_settings(settings)
    except PerfmodelError as exc:
        skipped.append(f"{where}: {exc}")
        return None
    measured = statistics.fmean(float(r.app_s or 0.0) for r in targets)
    changed = prediction.conf.stages if prediction.conf is not None else []
    note = (
        f"re-partitioned {len(changed)} stage(s): "
        + "; ".join(f"stage {c.stage_id}: {c.why}" for c in changed[:4])
        if changed
        else "no stage's partitions change"
    )
    return SettingsPair(
        experiment=source.experiment,
        workload=source.workload,
        source_run=source.id,
        source_config=source.config,
        target_config=target.config,
        target_runs=[r.id for r in targets],
        settings=settings,
        source_s=float(source.app_s or 0.0),
        measured_s=measured,
        predicted_s=prediction.predicted_s,
        low_s=prediction.predicted_low_s,
        high_s=prediction.predicted_high_s,
        note=note,
    )


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def summarise(
    label: str, pairs: list[SettingsPair], repeats: list[SettingsRepeat] | None = None
) -> SettingsSummary:
    big = [p for p in pairs if p.effect >= EFFECT]
    inside = [p.low_s <= p.measured_s <= p.high_s for p in pairs if not math.isnan(p.low_s)]
    names = {p.workload for p in pairs}
    mine = [r for r in repeats or [] if r.workload in names]
    medians = [p for p in pairs if p.median_pair]
    return SettingsSummary(
        label=label,
        workloads=sorted(names),
        pairs=len(pairs),
        mean_error=_mean([p.error for p in pairs]),
        no_change_error=_mean([p.no_change_error for p in pairs]),
        effect_pairs=len(big),
        effect_mean_error=_mean([p.error for p in big]),
        effect_no_change_error=_mean([p.no_change_error for p in big]),
        coverage=sum(inside) / len(inside) if inside else math.nan,
        repeat_runs=len(mine),
        repeat_error=_mean([r.error for r in mine]),
        median_pairs=len(medians),
        median_error=_mean([p.median_error for p in medians]),
        median_no_change_error=_mean([p.median_no_change_error for p in medians]),
    )


def _report(
    pairs: list[SettingsPair],
    split: Split | None,
    skipped: list[str],
    repeats: list[SettingsRepeat] | None = None,
) -> SettingsReport:
    by_workload: dict[str, list[SettingsPair]] = defaultdict(list)
    for p in pairs:
        by_workload[p.workload].append(p)
    reps = repeats or []
    workloads = [summarise(w, ps, reps) for w, ps in sorted(by_workload.items())]
    groups: list[SettingsSummary] = []
    if split is not None:
        for role in (HELD_OUT, FIT):
            chosen = [p for p in pairs if split.role(p.workload) == role]
            groups.append(summarise(role, chosen, reps))
    groups.append(summarise("all", pairs, reps))
    return SettingsReport(
        pairs, groups, workloads, skipped, split.path if split else "", list(reps)
    )
