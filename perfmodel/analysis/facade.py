"""The one library facade: ``perfmodel.load(path)`` → `Analysis`.

The CLI, the HTML report, the experiment reports, ``recommend`` and the fleet engine all
ask the same questions of one profile (where did the time go, what would other
resources do, what should change). Answering them used to mean repeating load →
samples → code vectors → baseline → compile → replay in each caller, each a little
differently, and compiling the workload again for every replay behind the advice.
`Analysis` does each step once, on first use, and shares the results:

    analysis = perfmodel.load("app.zstd")
    analysis.diagnose()                        # the Diagnosis `perfmodel diagnose` shows
    analysis.predict(WhatIf(cores=8))          # one what-if
    analysis.sweep(["cores=2,4,8", "mem=2g,4g"])  # a grid, compiled once
    analysis.advice()                          # quantified advice lines
    analysis.predict(parse_change("spark.sql.shuffle.partitions=64", CONF))  # a setting
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from perfmodel.analysis.alerts import MORE_TASKS, Alert, AlertInputs, detect_alerts, quantify_alerts
from perfmodel.analysis.diagnosis import Diagnosis, diagnose
from perfmodel.analysis.partition_knob import PartitionKnob, partition_knob
from perfmodel.analysis.sample_views import add_code_vectors, add_sample_views
from perfmodel.analysis.settings_whatif import (
    check_settings,
    plan_for,
    predict_settings,
    settings_target,
    split_settings,
)
from perfmodel.dag.fallback_samples import fallback_shares
from perfmodel.dag.loaded import LoadedProfile
from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile, attribute_samples
from perfmodel.dask.frontend import is_dask_bundle, read_dask_bundle
from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import load_samples
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED, EventLogSource
from perfmodel.profile.sources.locate import log_path
from perfmodel.profile.sources.stores import LogPath, SourceOptions
from perfmodel.profile.sources.uri import app_url, check_app_id, check_history_server, scrub
from perfmodel.simulate.advice import Advice, advise_workload
from perfmodel.simulate.bounds import WorkloadBounds, lower_bounds_s, refined_bound_s
from perfmodel.simulate.bounds import prepare as prepare_bounds
from perfmodel.simulate.config import (
    BaselineOverrides,
    ClusterConfig,
    ConfigError,
    WhatIf,
    apply_what_if,
    baseline_config,
)
from perfmodel.simulate.intervals import (
    BARE_LOG,
    BUNDLE,
    extrapolation,
    interval,
    scale_factors,
    shipped_intervals,
    widening,
)
from perfmodel.simulate.replay import (
    BaselineReplay,
    Prediction,
    replay_baseline,
    replay_workload,
    slot_only_seconds,
)
from perfmodel.simulate.scheduler import native_placement
from perfmodel.simulate.thread_demand import application_basis, stage_basis
from perfmodel.simulate.whatif import (
    Change,
    ConfValue,
    SweepAxis,
    parse_axes,
    parse_change,
    sweep_points,
)
from perfmodel.simulate.workload import Workload, compile_workload
from perfmodel.spark.bare_demand import (
    BareLogEstimates,
    advice_assumptions,
    application_assumption,
    assumption_notes,
    estimate_bare_log,
)
from perfmodel.spark.load import build_profile, gc_paused
from perfmodel.spark.partitioning import Partitioning, derive_partitioning
from perfmodel.spark.pyspark_work import workload_class
from perfmodel.spark.settings import SPARK_CONF, SparkConf, parse_settings

CONF: SparkConf = SPARK_CONF
"""The front end's settings table the what-if grammar reads ``spark.…`` keys with
(``parse_change(text, CONF)``, ``parse_axes(specs, CONF)``): Spark's, the one front end."""


@dataclass(slots=True)
class SweepPoint:
    """One grid point: the axes' values as the user wrote them, and the prediction."""

    settings: dict[str, str]
    prediction: Prediction

    def summary(self) -> SweepPoint:
        """The point without its per-stage predictions (what a table of the grid shows):
        on a log of thousands of stages they are most of a point's memory."""
        return SweepPoint(self.settings, replace(self.prediction, stages=[]))


class Engine(Protocol):
    """The facade's engine interface: what a search or a study asks of one profile.

    `Analysis` implements it; ``recommend`` and the experiment reports depend on this and
    on the what-if language (`perfmodel.simulate.config`, `perfmodel.simulate.whatif`)
    only, never on the replay's internals, so tests can hand them any profile.
    """

    @property
    def baseline(self) -> ClusterConfig: ...

    def predict(self, change: Change | WhatIf | ClusterConfig | None = None) -> Prediction: ...

    def slot_only_s(self, change: Change | WhatIf | ClusterConfig | None = None) -> float: ...

    def lower_bounds_s(self, targets: Sequence[ClusterConfig]) -> np.ndarray: ...

    def refined_bound_s(self, target: ClusterConfig) -> float: ...

    @property
    def fast_replays(self) -> bool: ...

    def predict_settings(
        self,
        settings: Mapping[str, str],
        change: Change | WhatIf | ClusterConfig | None = None,
        *,
        strict: bool = True,
    ) -> Prediction: ...

    def partition_knob(self) -> PartitionKnob | None: ...


class NoStagesError(PerfmodelError):
    """The log holds no stage, or no stage that started a task, so there is nothing to
    replay (a log cut off before its first task)."""


class NoSamplesError(PerfmodelError):
    """What was asked needs stack samples the profile does not have."""


@dataclass(slots=True)
class Analysis:
    """One loaded profile and everything derived from it, each computed once on first use.

    Build it with `load`. ``vectors`` are the code-inferred resource vectors per stage
    attempt (bundles with stack samples only); ``notes`` say what the predictions assumed
    about them, ``warnings`` what could not be done (e.g. no trained models).
    """

    loaded: LoadedProfile
    baseline: ClusterConfig
    samples: SampleProfile | None = None
    vectors: dict[StageKey, ResourceVector] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _workload: Workload | None = None
    _baseline_replay: BaselineReplay | None = None
    _observed: Prediction | None = None
    _diagnosis: Diagnosis | None = None
    _advice: dict[int, list[Advice]] = field(default_factory=dict)
    _estimates: BareLogEstimates | None = None
    _workload_class: str | None = None
    _bounds: WorkloadBounds | None = None
    _partitioning: Partitioning | None = None
    _alerts: list[Alert] | None = None

    @property
    def profile(self) -> ApplicationProfile:
        return self.loaded.profile

    @property
    def source(self) -> str:
        return str(self.loaded.source.path)

    @property
    def workload(self) -> Workload:
        """The replayable workload, compiled on first use and shared by every prediction."""
        if self._workload is None:
            if not self.profile.stages:
                raise NoStagesError(
                    f"{self.source}: the log holds no stages, so there is nothing to replay"
                )
            if not any(len(s.table) for s in self.profile.stages.values()):
                raise NoStagesError(
                    f"{self.source}: none of the log's {len(self.profile.stages)} stage(s) "
                    "started a task, so there is nothing to replay"
                )
            estimates = self.estimates
            fallback = (
                {k: v.share for k, v in fallback_shares(self.samples).items()}
                if self.samples is not None
                else None
            )
            with gc_paused():
                self._workload = compile_workload(
                    self.profile,
                    self.baseline,
                    self.vectors or None,
                    estimates.demands(),
                    fallback,
                    estimates.growth_unseen(),
                )
            if self.profile.host_usage is None:
                self._workload.notes.extend(assumption_notes(estimates))
        return self._workload

    def _fit_assumed_host(self, estimates: BareLogEstimates) -> None:
        """An unknown local host taken to equal its slots is made big enough for the
        demand the bare-log estimates assume (see `BareLogEstimates.host_cores_at_least`)."""
        base = self.baseline
        at_least = estimates.host_cores_at_least()
        if not (base.local_mode and base.host_cores_assumed) or at_least <= base.host_cores:
            return
        sources = dict(base.sources)
        sources["host_cores"] = (
            f"assumed: at least {at_least}, to hold the largest per-task core demand the log "
            "suggests (a Python task's thread and worker, a JVM's GC and JIT threads; pass "
            "--host-cores)"
        )
        self.baseline = replace(base, host_cores=at_least, sources=sources)

    @property
    def estimates(self) -> BareLogEstimates:
        """Per stage, the core demand and the nature of unattributed time as the event log
        alone suggests (`perfmodel.spark.bare_demand`); used where nothing measured it."""
        if self._estimates is None:
            if self.profile.task_thread_only:  # no work beside task threads to estimate
                self._estimates = BareLogEstimates({}, {}, 0.0, 0.0)
            else:
                self._estimates = estimate_bare_log(self.profile, self.baseline.host_cores)
        return self._estimates

    def _base(self) -> BaselineReplay:
        if self._baseline_replay is None:
            with gc_paused():
                self._baseline_replay = replay_baseline(self.workload, self.baseline)
        return self._baseline_replay

    def _observed_replay(self) -> Prediction:
        """The baseline's own prediction (the self-check), shared by the diagnosis and the
        advice instead of being assembled once for each."""
        if self._observed is None:
            with gc_paused():
                self._observed = replay_workload(
                    self.workload, self.baseline, self.baseline, self._base()
                )
        return self._observed

    def target(self, change: Change | WhatIf | ClusterConfig | None) -> ClusterConfig:
        """The configuration a change describes (None: the baseline itself); a `Change`'s
        factors (``cores=2x``) are of this profile's baseline, and its Spark settings that
        size executors (``spark.executor.cores``) count too."""
        if change is None:
            return self.baseline
        if isinstance(change, Change):
            if change.conf:
                self._spark_settings_apply()
                what_if = split_settings(change.conf, self.baseline)
                return settings_target(self.baseline, what_if, self._resources(change))
            change = change.resolve(self.baseline)
        if isinstance(change, WhatIf):
            self._allocation_applies(change)
            return apply_what_if(self.baseline, change)
        return change

    def _allocation_applies(self, change: WhatIf) -> None:
        """Dynamic allocation is Spark's executor policy. Dask's adaptive scaling is another,
        not modelled: replaying Spark's policy for a Dask profile would predict a change
        its what-if line does not show, so it is refused."""
        if self.framework == "spark":
            return
        limits = {
            "--dynamic-allocation": change.dynamic_allocation,
            "--min-executors": change.min_executors,
            "--max-executors": change.max_executors,
            "--initial-executors": change.initial_executors,
        }
        given = [option for option, value in limits.items() if value is not None]
        if given:
            raise ConfigError(
                f"{self.source}: {given[0]} is Spark's dynamic allocation; a {self.framework} "
                "profile's workers are a fixed count (its adaptive scaling is not modelled): "
                "give its workers instead (--workers, or workers= in a what-if)"
            )

    def _resources(self, change: Change) -> WhatIf | None:
        rest = change.resources
        return None if rest.is_empty else rest.resolve(self.baseline)

    def predict(self, change: Change | WhatIf | ClusterConfig | None = None) -> Prediction:
        """The runtime and bottleneck on another configuration, with the model's self-check.
        A `Change` with Spark settings (``spark.sql.shuffle.partitions=64``) re-partitions
        the stages they set (`predict_settings`)."""
        if isinstance(change, Change) and change.conf:
            prediction = self._predict_settings(
                change.conf, change.conf_text, self._resources(change)
            )
        else:
            with gc_paused():
                prediction = self._finished(
                    replay_workload(self.workload, self.baseline, self.target(change), self._base())
                )
        if isinstance(change, Change):
            prediction.notes.extend(change.rounded(self.baseline))
        return prediction

    @property
    def partitioning(self) -> Partitioning:
        """Which knob sets each stage's task count (`perfmodel.spark.partitioning`)."""
        if self._partitioning is None:
            self._partitioning = derive_partitioning(self.profile)
        return self._partitioning

    def predict_settings(
        self,
        settings: Mapping[str, str],
        change: Change | WhatIf | ClusterConfig | None = None,
        *,
        strict: bool = True,
    ) -> Prediction:
        """The runtime under Spark settings (``{"spark.sql.shuffle.partitions": "64"}``, as
        ``--conf`` gives them), on the baseline's resources or ``change``'s. ``strict``: a
        key the model cannot predict is an error; else it is left out and said in the notes
        and in ``prediction.conf``. (`predict` with a `Change` holding the settings is the
        same, strictly.)"""
        values, skipped = parse_settings(settings, strict=strict)
        given = dict(settings)
        resources: WhatIf | ClusterConfig | None
        if isinstance(change, Change):
            for key, value in change.conf.items():
                if key in values and values[key] != value:
                    raise ConfigError(f"{key} is given twice, with different values")
                values.setdefault(key, value)
            given = change.conf_text | given
            resources = self._resources(change)
        else:
            resources = change
        return self._predict_settings(values, given, resources, skipped if not strict else None)

    def _predict_settings(
        self,
        values: Mapping[str, ConfValue],
        given: Mapping[str, str],
        resources: WhatIf | ClusterConfig | None,
        not_predicted: Mapping[str, str] | None = None,
    ) -> Prediction:
        self._spark_settings_apply()
        what_if = split_settings(values, self.baseline, not_predicted)
        target = settings_target(self.baseline, what_if, resources)
        with gc_paused():
            prediction, _ = predict_settings(
                self.workload,
                self.profile,
                self.partitioning,
                self.baseline,
                self._base(),
                what_if,
                target,
                given,
            )
        return self._finished(prediction)

    def _spark_settings_apply(self) -> None:
        """Spark settings are read by the Spark front end's plans: another framework's
        profile (Dask) has none, and a setting given for it is refused, not ignored."""
        if self.framework != "spark":
            raise ConfigError(
                f"{self.source}: Spark settings (spark.…=VALUE) do not apply to a {self.framework} "
                "profile; give its resources instead (cores=, workers=, mem=)"
            )

    @property
    def input_kind(self) -> str:
        """``bundle`` or ``bare-log``: which calibration the intervals use."""
        return BARE_LOG if self.loaded.bundle is None else BUNDLE

    @property
    def framework(self) -> str:
        """The front end that read the run (`ApplicationProfile.framework`; ``spark`` where
        the profile does not say): which calibration, classes and policies apply to it."""
        return self.profile.framework or "spark"

    @property
    def workload_class(self) -> str:
        """``python-rdd``, ``python-udf`` or ``jvm-sql`` (`perfmodel.spark.pyspark_work`) for
        a Spark run; another front end's runs are one class, its name (``dask``): Spark's
        classes say what its executors run, which no other front end has."""
        if self._workload_class is None:
            spark = self.framework == "spark"
            self._workload_class = workload_class(self.profile) if spark else self.framework
        return self._workload_class

    def unknown_share(self) -> float:
        """Share of task time whose nature nothing measured or evidenced (bare logs only:
        a bundle measured its CPU use, or its code vectors split the time)."""
        if self.profile.host_usage is not None or self.vectors:
            return 0.0
        return self.estimates.unknown_share

    def interval_widening(self, prediction: Prediction) -> float:
        """The interval's extra log half-width for ``prediction`` (self-check error and the
        unknown share of the predicted change)."""
        return widening(
            prediction.model_error,
            self.unknown_share(),
            prediction.predicted_s,
            prediction.baseline_replay_s,
        )

    def _finished(self, prediction: Prediction) -> Prediction:
        """A replay's prediction as every path hands it out: the analysis's notes, the
        framework whose words describe it, and its interval."""
        prediction.notes.extend(self.notes)
        prediction.framework = self.framework
        self.attach_interval(prediction)
        return prediction

    def attach_interval(self, prediction: Prediction) -> None:
        """Put the 80% interval on ``prediction`` (see `perfmodel.simulate.intervals`),
        widened where its change goes beyond the scale factors the calibration saw; a
        prediction from a cluster run uses the cluster calibration for the kinds of change
        it was fitted on, and each front end's runs their own front end's calibration."""
        model = shipped_intervals(self.framework)
        widen = self.interval_widening(prediction)
        scale = scale_factors(prediction.baseline_config, prediction.config)
        kind = model.kind_for(self.input_kind, not prediction.baseline_config.local_mode, scale)
        beyond = extrapolation(
            model,
            kind,
            scale,
            prediction.predicted_s,
            prediction.baseline_replay_s,
        )
        low, high, source = interval(
            model,
            kind,
            self.workload_class,
            prediction.predicted_s,
            widen,
            beyond,
        )
        prediction.predicted_low_s, prediction.predicted_high_s = low, high
        prediction.interval_source = source
        prediction.interval_extrapolation = beyond

    def sweep(
        self, axes: Sequence[SweepAxis] | Sequence[str], fixed: Change | str | None = None
    ) -> list[SweepPoint]:
        """Every point of a grid (``["cores=1,2,4", "mem=2g,4g"]`` or parsed axes)."""
        return list(self.iter_sweep(axes, fixed))

    def iter_sweep(
        self, axes: Sequence[SweepAxis] | Sequence[str], fixed: Change | str | None = None
    ) -> Iterator[SweepPoint]:
        """`sweep`, one point at a time: each prediction holds every stage, so a caller that
        writes them out as they come (``predict --sweep --json``) holds one, not the grid.
        ``fixed`` (``"mem=2g"``) applies at every point; an axis may not set what it sets.
        The axes and every point's configuration are checked before the first replay."""
        if isinstance(fixed, str):
            fixed = parse_change(fixed, CONF)
        parsed = [a for a in axes if isinstance(a, SweepAxis)]
        specs = [a for a in axes if isinstance(a, str)]
        if specs:
            parsed += parse_axes(specs, CONF)
        if not parsed:
            raise ConfigError("a sweep needs at least one axis, e.g. cores=1,2,4,8")
        # Every point's configuration first: a bad one is refused before anything is written.
        points: list[tuple[dict[str, str], Change | ClusterConfig]] = []
        for settings, change in sweep_points(parsed, fixed, CONF):
            target = self.target(change)
            if change.conf:
                # Spark settings re-partition stages: the point keeps them, checked now.
                what_if = split_settings(change.conf, self.baseline)
                check_settings(self.workload, self.profile, self.partitioning, what_if, target)
                points.append((settings, change))
            else:
                points.append((settings, target))
        return (SweepPoint(settings, self.predict(point)) for settings, point in points)

    def stack_profiles(self, stage: int | None = None) -> dict[str, dict[tuple[str, ...], int]]:
        """Sampled call stacks for flame graphs: one set per process, or with ``stage`` one
        per attempt of that stage (the samples attributed to its tasks)."""
        if self.loaded.bundle is None:
            raise NoSamplesError(f"{self.source} is an event log: flame graphs need a bundle")
        if stage is None:
            # Imported where used: it brings pyarrow (~0.15 s of CPU), which an event log
            # never needs (every command's start-up, and `watch`'s overhead, pay for it).
            from perfmodel.profile.sampletable import stacks_by

            samples = self.loaded.samples
            return stacks_by(
                load_samples(self.loaded.bundle) if samples is None else samples, "process"
            )
        assert self.samples is not None
        profiles = {
            f"stage {sid}.{att}": dict(cp.stacks)
            for (sid, att), cp in sorted(self.samples.stages.items())
            if sid == stage
        }
        if not profiles:
            known = sorted({sid for sid, _ in self.samples.stages})
            if not any(sid == stage for sid, _ in self.profile.stages):
                raise NoSamplesError(
                    f"the application has no stage {stage}; stages with samples: {known}"
                )
            raise NoSamplesError(
                f"no samples attributed to stage {stage}; stages with samples: {known}"
            )
        return profiles

    # -- The engine interface (`Engine`): what recommend, fleet and experiments ask of the
    # model beyond predictions, so none of them reaches into `perfmodel.simulate`.

    def slot_only_s(self, change: Change | WhatIf | ClusterConfig | None = None) -> float:
        """Slot-only replay's runtime (s) on another configuration: every task as long as
        observed, only the slots change (Sparklens' what-if; the baseline to beat)."""
        with gc_paused():
            return slot_only_seconds(self.workload, self.baseline, self.target(change))

    def lower_bounds_s(self, targets: Sequence[ClusterConfig]) -> np.ndarray:
        """A lower bound of the predicted runtime (s) on each target, far cheaper than a
        replay (`perfmodel.simulate.bounds`): a search skips what cannot win."""
        return lower_bounds_s(self._workload_bounds(), targets)

    def refined_bound_s(self, target: ClusterConfig) -> float:
        """A tighter lower bound for one target (still a bound; about 1/15 of a replay)."""
        return refined_bound_s(self._workload_bounds(), target)

    @property
    def fast_replays(self) -> bool:
        """Whether replays run the compiled placement loop (about 25× the Python one)."""
        return native_placement()

    def partition_knob(self) -> PartitionKnob | None:
        """The Spark setting that sets the task count of this log's shuffle stages, with the
        data they split (`perfmodel.analysis.partition_knob`); None where no setting does.
        A settings search chooses its candidate values from it."""
        if self.profile.framework and self.profile.framework != "spark":
            return None
        return partition_knob(self.profile, self.partitioning)

    def _workload_bounds(self) -> WorkloadBounds:
        if self._bounds is None:
            self._bounds = prepare_bounds(self.workload, self.baseline)
        return self._bounds

    def advice(self, max_stages: int = 3) -> list[Advice]:
        """Advice for the application and its most expensive stages, each line a replay."""
        if max_stages not in self._advice:
            with gc_paused():
                self._advice[max_stages] = advise_workload(
                    self.workload,
                    self.baseline,
                    max_stages=max_stages,
                    baseline=self._base(),
                    observed=self._observed_replay(),
                    assumptions=self._assumptions(),
                )
        return list(self._advice[max_stages])

    def _assumptions(self) -> dict[StageKey | None, str]:
        """Per stage (None: the application), what its CPU share was made of: measured per
        thread where the bundle has it, else what the bare log suggests."""
        out = advice_assumptions(self.estimates, set(self.vectors))
        measured = self.workload.thread_cpu
        out.update({key: stage_basis(m) for key, m in measured.items()})
        if measured:
            out[None] = application_basis(measured)
        return out

    def alerts(self, diagnosis: Diagnosis | None = None) -> list[Alert]:
        """Alerts (`perfmodel.analysis.alerts`), most impact first: each names its knob and a
        suggested value, and the settings what-if predicts the runtime with it where the
        knob is a setting (the same path as ``predict --conf``)."""
        if self._alerts is not None:
            return list(self._alerts)
        if diagnosis is None:
            self.diagnose()  # computes the alerts with the diagnosis' stage summaries
            return list(self._alerts or [])
        d = diagnosis
        res = self.profile.resources
        memory = res.executor_memory_bytes
        if res.local_mode:
            memory = res.driver_memory_bytes or memory
        found = detect_alerts(
            AlertInputs(
                profile=self.profile,
                stages=d.stages,
                slots=self.baseline.slots,
                local_mode=self.baseline.local_mode,
                memory_bytes=memory,
                gc_share=d.shares.get("gc", 0.0),
                partitioning=lambda: self.partitioning,
            )
        )
        with gc_paused():
            quantify_alerts(found, self._alert_check, self.predict_settings)
        self._alerts = found
        return list(found)

    def _alert_check(self, settings: Mapping[str, str], alert: Alert) -> str | None:
        """Whether ``settings`` act on the alert's stages or join by Spark's rules (the
        front end's plan, no replay): None if they do, else why not."""
        try:
            values, _ = parse_settings(settings)
            what_if = split_settings(values, self.baseline)
            if not what_if.partitioning:
                return None
            target = settings_target(self.baseline, what_if, None)
            plan = plan_for(self.profile, self.partitioning, what_if, target)
        except PerfmodelError as exc:  # refused by Spark's rules or the code's: said, not raised
            return str(exc)
        if alert.query_id is not None and any(j.query_id == alert.query_id for j in plan.joins):
            return None
        more = alert.kind in MORE_TASKS
        for change in plan.changes:
            if change.key in alert.stage_keys:
                old, new = change.old_partitions, change.new_partitions
                if (new > old) if more else (new < old):
                    return None
                return f"stage {change.key[0]} would run {new} tasks (it ran {old})"
        stages = ", ".join(str(k[0]) for k in alert.stage_keys) or "its stages"
        return f"it leaves stage {stages} as it ran" + (
            f" ({'; '.join(plan.notes)})" if plan.notes else ""
        )

    def diagnose(self) -> Diagnosis:
        """What `perfmodel diagnose` reports: measured split, critical path, findings, advice."""
        if self._diagnosis is not None:
            return self._diagnosis
        baseline: Prediction | None = None
        advice: list[Advice] = []
        warnings = list(self.warnings)
        if self.profile.stages:
            try:
                baseline = self._observed_replay()
                advice = self.advice()
            except PerfmodelError as exc:
                warnings.append(f"no what-if advice for this log: {exc}")
        measured = self._workload.thread_cpu if self._workload is not None else {}
        overall = application_basis(measured) or application_assumption(self.estimates)
        with gc_paused():
            result = diagnose(
                self.loaded,
                baseline=baseline,
                advice=[asdict(a) for a in advice],
                has_samples=self.samples is not None,
                # Code vectors, where inferred, say what that time is; else the basis does.
                unattributed_basis=overall if measured or not self.vectors else None,
            )
        result.warnings.extend(warnings)
        if self.profile.stages:
            try:
                result.alerts = [a.as_dict() for a in self.alerts(result)]
            except PerfmodelError as exc:
                result.warnings.append(f"no alerts for this log: {exc}")
        if self.samples is not None:
            add_sample_views(result, self.samples)
            add_code_vectors(result, self.vectors)
        self._diagnosis = result
        return result


def locate(
    text: str | LogPath,
    sources: SourceOptions | None = None,
    *,
    history_server: str | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> LogPath:
    """The log a user named: a local path, an object-store or HDFS URI, or a History Server
    application address (docs/sources.md); with ``history_server``, ``text`` is an
    application id on that server. ``sources`` says how to reach remote stores; a History
    Server's zip is downloaded here, held to ``max_decompressed_bytes``.

    Local paths come back as `pathlib.Path` objects (not checked: reading says what is
    wrong with them); remote ones as `perfmodel.profile.sources.stores.RemotePath`, which
    `read` and `load` take as they take a path.
    """
    if history_server is not None and isinstance(text, str):
        check_history_server(history_server)
        check_app_id(text, scrub(history_server))
        text = app_url(history_server, text, None)
    return log_path(text, sources, max_decompressed_bytes=max_decompressed_bytes)


def read(
    path: str | LogPath,
    attempt: str | None = None,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    sources: SourceOptions | None = None,
) -> LoadedProfile:
    """Read an event log or a bundle through its front end into a profile, without the
    analysis (`load` does both). ``path`` may be remote (`locate`). The front-end
    dispatch: a local bundle with a Dask task stream is read by the Dask front end,
    anything else by Spark's."""
    if sources is not None and isinstance(path, str):
        path = locate(path, sources, max_decompressed_bytes=max_decompressed_bytes)
    if isinstance(path, (str, Path)) and is_dask_bundle(path):
        return read_dask_bundle(path)
    return build_profile(path, attempt, max_decompressed_bytes=max_decompressed_bytes)


def analyse_loaded(
    loaded: LoadedProfile, *, overrides: BaselineOverrides | None = None
) -> Analysis:
    """An `Analysis` of a profile a front end delivered: the one way every `Analysis` is
    made (`load` adds a bundle's samples and code vectors to it; `perfmodel.analysis.watch`
    makes one of the profile it read while following a log)."""
    analysis = Analysis(loaded=loaded, baseline=baseline_config(loaded.profile, overrides))
    analysis._fit_assumed_host(analysis.estimates)
    return analysis


def analyse_profile(
    profile: ApplicationProfile,
    *,
    overrides: BaselineOverrides | None = None,
    source: str = "",
) -> Analysis:
    """An `Analysis` of a profile already in memory: one a notebook or a test built, or a
    front end produced without a file (no samples, so no code vectors)."""
    where = source or profile.source or f"<{profile.app_id}>"
    loaded = LoadedProfile(
        profile=profile,
        source=EventLogSource(path=Path(where), app_key=profile.app_id, parts=[], attempt=None),
    )
    return analyse_loaded(loaded, overrides=overrides)


def load(
    path: str | LogPath,
    attempt: str | None = None,
    *,
    code_vectors: bool = True,
    overrides: BaselineOverrides | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    models_dir: Path | None = None,
    sources: SourceOptions | None = None,
) -> Analysis:
    """Read an event log or a profile bundle and get it ready to analyse.

    ``path`` is local or remote (`locate`; ``sources`` says how to reach remote stores).
    ``code_vectors``: with a bundle's stack samples, infer each stage's resource vector from
    the code it ran and let it split the task time Spark's metrics leave unattributed
    (otherwise that time is split by bytes moved, as for a bare event log). ``overrides``
    replace what the log cannot tell about the profiled machine (host cores, bandwidths).
    ``models_dir`` holds the trained code models (default: the shipped ones).
    """
    loaded = read(path, attempt, max_decompressed_bytes=max_decompressed_bytes, sources=sources)
    analysis = analyse_loaded(loaded, overrides=overrides)
    if loaded.bundle is None:
        return analysis
    samples = load_samples(loaded.bundle) if loaded.samples is None else loaded.samples
    analysis.samples = attribute_samples(loaded.profile, samples)
    if not code_vectors:
        analysis.notes.append("code-inferred resource vectors not used (--no-code-vectors)")
        return analysis
    if not sum(analysis.samples.attribution.values()):
        analysis.notes.append("the bundle has no stack samples (recorded without JFR and py-spy)")
        return analysis
    from perfmodel.embed.stage_inference import infer_stage_vectors

    try:
        analysis.vectors = infer_stage_vectors(
            analysis.samples, models_dir, local_mode=analysis.baseline.local_mode
        )
    except PerfmodelError as exc:
        message = f"no code-inferred resource vectors: {exc}"
        analysis.notes.append(message)
        analysis.warnings.append(message)
        return analysis
    if analysis.vectors:
        analysis.notes.append(
            f"unattributed task time split by code-inferred resource vectors for "
            f"{len(analysis.vectors)} stage(s) (--no-code-vectors splits it by bytes moved)"
        )
    else:
        analysis.notes.append("the bundle's stack samples gave no code-inferred resource vector")
    return analysis
