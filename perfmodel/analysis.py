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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from perfmodel.dag.fallback_samples import fallback_shares
from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.pyspark_work import workload_class
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile, attribute_samples
from perfmodel.dag.spark import LoadedProfile, build_profile, gc_paused
from perfmodel.dask.frontend import read_dask_bundle
from perfmodel.embed.bare_demand import (
    BareLogEstimates,
    advice_assumptions,
    application_assumption,
    assumption_notes,
    estimate_bare_log,
)
from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import load_samples
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED
from perfmodel.report.diagnosis import Diagnosis, diagnose
from perfmodel.report.pipeline import add_code_vectors, add_sample_views
from perfmodel.simulate.advice import Advice, advise_workload
from perfmodel.simulate.config import (
    BaselineOverrides,
    ClusterConfig,
    ConfigError,
    WhatIf,
    apply_what_if,
    baseline_config,
)
from perfmodel.simulate.intervals import BARE_LOG, BUNDLE, interval, shipped_intervals, widening
from perfmodel.simulate.replay import BaselineReplay, Prediction, replay_baseline, replay_workload
from perfmodel.simulate.sweep import SweepAxis, SweepPoint, parse_axes, sweep_points
from perfmodel.simulate.thread_demand import application_basis, stage_basis
from perfmodel.simulate.workload import Workload, compile_workload


class NoStagesError(PerfmodelError):
    """The log holds no stage, so there is nothing to replay."""


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
        alone suggests (`perfmodel.embed.bare_demand`); used where nothing measured it."""
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

    def target(self, change: WhatIf | ClusterConfig | None) -> ClusterConfig:
        """The configuration a change describes (None: the baseline itself)."""
        if change is None:
            return self.baseline
        if isinstance(change, WhatIf):
            return apply_what_if(self.baseline, change)
        return change

    def predict(self, change: WhatIf | ClusterConfig | None = None) -> Prediction:
        """The runtime and bottleneck on another configuration, with the model's self-check."""
        with gc_paused():
            prediction = replay_workload(
                self.workload, self.baseline, self.target(change), self._base()
            )
        prediction.notes.extend(self.notes)
        self.attach_interval(prediction)
        return prediction

    @property
    def input_kind(self) -> str:
        """``bundle`` or ``bare-log``: which calibration the intervals use."""
        return BARE_LOG if self.loaded.bundle is None else BUNDLE

    @property
    def workload_class(self) -> str:
        """``python-rdd``, ``python-udf`` or ``jvm-sql`` (`perfmodel.dag.pyspark_work`)."""
        if self._workload_class is None:
            self._workload_class = workload_class(self.profile)
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

    def attach_interval(self, prediction: Prediction) -> None:
        """Put the 80% interval on ``prediction`` (see `perfmodel.simulate.intervals`)."""
        widen = self.interval_widening(prediction)
        low, high, source = interval(
            shipped_intervals(),
            self.input_kind,
            self.workload_class,
            prediction.predicted_s,
            widen,
        )
        prediction.predicted_low_s, prediction.predicted_high_s = low, high
        prediction.interval_source = source

    def sweep(
        self, axes: Sequence[SweepAxis] | Sequence[str], fixed: WhatIf | None = None
    ) -> list[SweepPoint]:
        """Every point of a grid (``["cores=1,2,4", "mem=2g,4g"]`` or parsed axes)."""
        return list(self.iter_sweep(axes, fixed))

    def iter_sweep(
        self, axes: Sequence[SweepAxis] | Sequence[str], fixed: WhatIf | None = None
    ) -> Iterator[SweepPoint]:
        """`sweep`, one point at a time: each prediction holds every stage, so a caller that
        writes them out as they come (``predict --sweep --json``) holds one, not the grid.
        The axes and every point's configuration are checked before the first replay."""
        parsed = [a for a in axes if isinstance(a, SweepAxis)]
        specs = [a for a in axes if isinstance(a, str)]
        if specs:
            parsed += parse_axes(specs)
        if not parsed:
            raise ConfigError("a sweep needs at least one axis, e.g. cores=1,2,4,8")
        # Every point's configuration first: a bad one is refused before anything is written.
        targets = [
            (settings, self.target(change)) for settings, change in sweep_points(parsed, fixed)
        ]
        return (SweepPoint(settings, self.predict(target)) for settings, target in targets)

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
        with gc_paused():
            result = diagnose(
                self.loaded,
                baseline=baseline,
                advice=[asdict(a) for a in advice],
                has_samples=self.samples is not None,
            )
        result.warnings.extend(warnings)
        measured = self._workload.thread_cpu if self._workload is not None else {}
        overall = application_basis(measured) or application_assumption(self.estimates)
        if overall and (measured or not self.vectors):
            after = [i for i, f in enumerate(result.findings) if "not broken down" in f]
            at = after[0] + 1 if after else len(result.findings)
            lead = "Of that" if after else "Unattributed task time"
            result.findings.insert(at, f"{lead}: {overall}.")
        if self.samples is not None:
            add_sample_views(result, self.samples)
            add_code_vectors(result, self.vectors)
        self._diagnosis = result
        return result


def load(
    path: str | Path,
    attempt: str | None = None,
    *,
    code_vectors: bool = True,
    overrides: BaselineOverrides | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    models_dir: Path | None = None,
) -> Analysis:
    """Read an event log or a profile bundle and get it ready to analyse.

    ``code_vectors``: with a bundle's stack samples, infer each stage's resource vector from
    the code it ran and let it split the task time Spark's metrics leave unattributed
    (otherwise that time is split by bytes moved, as for a bare event log). ``overrides``
    replace what the log cannot tell about the profiled machine (host cores, bandwidths).
    ``models_dir`` holds the trained code models (default: the shipped ones).
    """
    # Front-end dispatch: a Dask recording is read by the Dask front end, all else by Spark's.
    dask = read_dask_bundle(path)
    if dask is not None:
        loaded = dask.loaded
    else:
        loaded = build_profile(path, attempt, max_decompressed_bytes=max_decompressed_bytes)
    analysis = Analysis(loaded=loaded, baseline=baseline_config(loaded.profile, overrides))
    analysis._fit_assumed_host(analysis.estimates)
    if loaded.bundle is None:
        return analysis
    samples = dask.samples if dask is not None else load_samples(loaded.bundle)
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
