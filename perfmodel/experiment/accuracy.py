"""Predicted vs measured: every (baseline run → other configuration) pair of an experiment.

For each successful measured run, its profile bundle is replayed on every other
configuration of the same experiment that ran successfully, and the prediction is compared
with the mean measured runtime there. Only pairs that differ in resources the model knows
(task slots, heap) are predicted; a pair that also changes, say, shuffle partitions would
test something the what-if cannot express. The same pairs get a slot-only replay
(`perfmodel.experiment.slot_only`) for comparison and, on request (``variants``), the same
baseline read two other ways: its event log alone (a bare log, what most users have) and
the bundle without code-inferred resource vectors. With a held-out split
(`perfmodel.experiment.split`) every workload is labelled fit or held-out and each side is
summarised on its own (`perfmodel.experiment.held_out`).

Runtimes are the application's, start to end event in its event log: that is what the
replay predicts. The process wall time (JVM start-up and exit included) is kept beside it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import socket
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfmodel._version import __version__
from perfmodel.errors import PerfmodelError
from perfmodel.experiment import allocation_pairs
from perfmodel.experiment.held_out import apply_split
from perfmodel.experiment.results import (
    AccuracyReport,
    PairResult,
    WorkloadAccuracy,
    interval_coverage,
    mean,
    nanmean,
)
from perfmodel.experiment.scale_factor import summarise_scales, summarise_steps
from perfmodel.experiment.split import Split
from perfmodel.experiment.variants import BARE_LOG, VARIANTS, load_variants, record_variant
from perfmodel.experiment.what_if_kind import (
    link_bandwidth,
    pair_kind,
    summarise_kinds,
    target_link_bandwidth,
)
from perfmodel.runs.rows import RunRow
from perfmodel.runs.store import RunStore
from perfmodel.simulate.config import (
    DEFAULT_MEMORY_BYTES,
    BaselineOverrides,
    ClusterConfig,
    WhatIf,
    apply_what_if,
)
from perfmodel.simulate.intervals import scale_factors

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis, Prediction

REPLAY = "replay"
SLOT_ONLY = "slot-only"


def model_version() -> str:
    """perfmodel's version plus a digest of the simulate package: which model predicted."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1] / "simulate"
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return f"{__version__}+sim.{digest.hexdigest()[:10]}"


def load_baseline(bundle: str | Path, net_bw: float | None = None) -> Analysis:
    """A run's bundle ready to replay, as `perfmodel predict BUNDLE` reads it (host CPU use,
    and code-inferred vectors where the run was recorded with stack samplers). ``net_bw``:
    the run's per-host link in bytes/s where it was limited (``--baseline-net-bw``)."""
    from perfmodel.analysis import load  # heavy import

    analysis = load(bundle, overrides=BaselineOverrides(net_bw=net_bw) if net_bw else None)
    analysis.workload  # noqa: B018 - compiled now: a log without stages is refused here
    return analysis


def target_config(
    loaded: Analysis,
    cores: int | None,
    memory: int | None,
    net_bw: float | None = None,
    allocation: dict[str, Any] | None = None,
) -> ClusterConfig:
    """The baseline moved to ``cores`` slots and ``memory`` heap (None = Spark's default),
    and to a ``net_bw`` link (bytes/s per host; None = the baseline's). ``allocation``:
    the dynamic allocation what-if of the pair (`allocation_pairs.what_if_fields`); a
    dynamic target's executors are the policy's, not ``cores``."""
    fields: dict[str, Any] = {
        "cores": cores,
        "memory_bytes": memory or DEFAULT_MEMORY_BYTES,
        "net_bw": net_bw,
    }
    if allocation:
        fields |= allocation
        if allocation.get("dynamic_allocation"):
            fields["cores"] = None
    return apply_what_if(loaded.baseline, WhatIf(**fields))


def predict(
    loaded: Analysis,
    cores: int | None,
    memory: int | None,
    net_bw: float | None = None,
    allocation: dict[str, Any] | None = None,
) -> Prediction:
    return loaded.predict(target_config(loaded, cores, memory, net_bw, allocation))


def slot_only(
    loaded: Analysis,
    cores: int | None,
    memory: int | None,
    net_bw: float | None = None,
    allocation: dict[str, Any] | None = None,
) -> float:
    """Slot-only replay of the pair through the engine (`Analysis.slot_only_s`): on a
    dynamic target its slots follow the allocation policy, as the replay's do."""
    return loaded.slot_only_s(target_config(loaded, cores, memory, net_bw, allocation))


def group_key(run: RunRow) -> tuple[str, str]:
    """Runs are compared within one experiment and one set of parameters (data size...)."""
    return run.experiment, json.dumps(run.params, sort_keys=True)


def _comparable(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two configs differ only in what the what-if can change (slots, heap, the
    network bandwidth of a cluster's links)."""
    # A cluster's worker count is its slots (cores), which the what-if changes.
    # Dynamic allocation's limits are a what-if too (`allocation_pairs`).
    ignore = {"name", "master", "driver_memory", "executor_memory", "workers", "rate_mbit"}
    a, b = allocation_pairs.without_allocation(a), allocation_pairs.without_allocation(b)
    return {k: v for k, v in a.items() if k not in ignore} == {
        k: v for k, v in b.items() if k not in ignore
    }


def evaluate(
    store: RunStore,
    runs: list[RunRow],
    save: bool = True,
    *,
    split: Split | None = None,
    variants: bool = False,
) -> AccuracyReport:
    """Predict every pair among ``runs`` (grouped by experiment) and compare with measured.

    ``variants``: also predict each pair from the baseline's bare event log and from its
    bundle without code vectors. ``split``: label workloads fit / held-out and summarise
    each side."""
    version = model_version()
    methods = (REPLAY, SLOT_ONLY, *(VARIANTS if variants else ()))
    ids = {m: store.model_version_id(m, version) if save else 0 for m in methods}
    usable = [r for r in runs if r.status == "ok" and not r.warmup and r.app_s and r.bundle_path]
    skipped = [
        f"run {r.id} ({r.experiment}, {r.config}): {r.status}"
        + (f" — {r.error}" if r.error else "")
        for r in runs
        if r not in usable and not r.warmup
    ]
    by_exp: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    for r in usable:
        by_exp[group_key(r)].append(r)
    pairs: list[PairResult] = []
    for _experiment, exp_runs in sorted(by_exp.items()):
        before = len(pairs)
        by_config: dict[str, list[RunRow]] = defaultdict(list)
        for r in exp_runs:
            by_config[r.config].append(r)
        for base_run in exp_runs:
            try:
                base_net_bw = link_bandwidth(base_run.config_settings)
                loaded = load_baseline(str(base_run.bundle_path), base_net_bw)
            except (PerfmodelError, OSError) as exc:
                skipped.append(f"run {base_run.id}: cannot replay its bundle: {exc}")
                continue
            others: dict[str, Analysis] = {}
            if variants:
                try:
                    others = load_variants(str(base_run.bundle_path), base_net_bw)
                except (PerfmodelError, OSError) as exc:
                    skipped.append(f"run {base_run.id}: no bare-log/no-code-vector replay: {exc}")
            for name, targets in sorted(by_config.items()):
                t0 = targets[0]
                if name == base_run.config:
                    continue
                if not _comparable(base_run.config_settings, t0.config_settings):
                    continue
                pair = _pair(store, loaded, base_run, targets, save, ids[REPLAY], ids[SLOT_ONLY])
                net_bw = target_link_bandwidth(base_run.config_settings, t0.config_settings)
                allocation = allocation_pairs.what_if_fields(
                    base_run.config_settings, t0.config_settings
                )
                for method, analysis in others.items():
                    variant = predict(analysis, t0.cores, t0.memory_bytes, net_bw, allocation)
                    record_variant(store, pair, method, variant, t0.config_id, save, ids[method])
                    if method == BARE_LOG:
                        pair.bare_log_low_s = variant.predicted_low_s
                        pair.bare_log_high_s = variant.predicted_high_s
                        pair.bare_log_widening = analysis.interval_widening(variant)
                        pair.bare_log_scale = scale_factors(variant.baseline_config, variant.config)
                pairs.append(pair)
        if len(pairs) == before:
            skipped.append(_no_pairs_reason(exp_runs, by_config))
    repeats: dict[str, list[float]] = defaultdict(list)
    for group in by_exp.values():
        times_by_config: defaultdict[str, list[float]] = defaultdict(list)
        for r in group:
            times_by_config[r.config].append(float(r.app_s or 0.0))
        for times in times_by_config.values():
            repeats[group[0].workload] += [
                abs(a - b) / b for i, a in enumerate(times) for j, b in enumerate(times) if i != j
            ]
    report = _summarise(pairs, version, len(usable), skipped, repeats)
    report.measured, report.measured_hosts = _measured(usable)
    if split is not None:
        apply_split(report, split)
    return report


def _measured(runs: list[RunRow]) -> tuple[str, list[str]]:
    """When (first start to last end, UTC) and where the runs were measured, from the store:
    a report made later, or on another machine, must not claim its own time and host."""
    if not runs:
        return "", []
    first = min(r.started_at for r in runs)
    last = max(r.ended_at or r.started_at for r in runs)
    start, end = time.gmtime(first), time.gmtime(last)
    same_day = start[:3] == end[:3]
    shown = time.strftime("%Y-%m-%d %H:%M", start) + "–"
    shown += time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", end)
    return f"{shown} UTC", sorted({r.host for r in runs if r.host})


def _no_pairs_reason(exp_runs: list[RunRow], by_config: dict[str, list[RunRow]]) -> str:
    """Why a group of measured runs gave no pair: one line for the report's list of what was
    not used, so a table without rows is never left unexplained."""
    first = exp_runs[0]
    params = ", ".join(f"{k}={v}" for k, v in sorted(first.params.items()))
    where = f"experiment {first.experiment}" + (f" ({params})" if params else "")
    runs = f"{len(exp_runs)} measured run(s)"
    if len(by_config) == 1:
        return (
            f"{where}: no pairs: {runs}, all of one configuration ({first.config}); a pair "
            "needs runs of two configurations"
        )
    names = sorted(by_config)
    if not any(
        _comparable(by_config[a][0].config_settings, by_config[b][0].config_settings)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ):
        return (
            f"{where}: no pairs: {runs} of {len(names)} configurations, no two of which differ "
            "only in what the model predicts (task slots, heap, network, dynamic allocation)"
        )
    return f"{where}: no pairs: {runs}; no baseline bundle could be replayed (listed above)"


def _pair(
    store: RunStore,
    loaded: Analysis,
    base_run: RunRow,
    targets: list[RunRow],
    save: bool,
    replay_id: int,
    slot_id: int,
) -> PairResult:
    t0 = targets[0]
    net_bw = target_link_bandwidth(base_run.config_settings, t0.config_settings)
    allocation = allocation_pairs.what_if_fields(base_run.config_settings, t0.config_settings)
    prediction = predict(loaded, t0.cores, t0.memory_bytes, net_bw, allocation)
    slot_s = slot_only(loaded, t0.cores, t0.memory_bytes, net_bw, allocation)
    measured = [float(r.app_s or 0.0) for r in targets]
    walls = [float(r.wall_s) for r in targets if r.wall_s is not None]
    mean = statistics.fmean(measured)
    result = PairResult(
        experiment=base_run.experiment,
        workload=base_run.workload,
        baseline_run=base_run.id,
        baseline_config=base_run.config,
        target_config=t0.config,
        target_runs=[r.id for r in targets],
        measured_s=mean,
        measured_sd_s=statistics.stdev(measured) if len(measured) > 1 else 0.0,
        measured_wall_s=statistics.fmean(walls) if walls else math.nan,
        predicted_s=prediction.predicted_s,
        error=abs(prediction.predicted_s - mean) / mean,
        slot_only_s=slot_s,
        slot_only_error=abs(slot_s - mean) / mean,
        bottleneck=prediction.bottleneck,
        baseline_observed_s=prediction.observed_s,
        baseline_model_error=prediction.model_error,
        stage_components={
            f"{s.stage_id}.{s.attempt}": dict(s.component_s) for s in prediction.stages
        },
        predicted_low_s=prediction.predicted_low_s,
        predicted_high_s=prediction.predicted_high_s,
        kind=pair_kind(base_run.config_settings, t0.config_settings),
        workload_class=loaded.workload_class,
        widening=loaded.interval_widening(prediction),
        scale=scale_factors(prediction.baseline_config, prediction.config),
        baseline_slots=base_run.cores,
        target_slots=t0.cores,
        cluster=not prediction.baseline_config.local_mode,
    )
    if save:
        detail = {"measured_s": mean, "target_runs": result.target_runs}
        store.save_prediction(
            base_run.id,
            t0.config_id,
            replay_id,
            prediction.predicted_s,
            prediction.baseline_replay_s,
            prediction.observed_s,
            prediction.bottleneck,
            {**detail, "prediction": prediction.as_dict()},
        )
        store.save_prediction(
            base_run.id,
            t0.config_id,
            slot_id,
            slot_s,
            prediction.baseline_replay_s,
            prediction.observed_s,
            "n/a",
            detail,
        )
    return result


def _summarise(
    pairs: list[PairResult],
    version: str,
    runs: int,
    skipped: list[str],
    repeats: dict[str, list[float]],
) -> AccuracyReport:
    by_workload: dict[str, list[PairResult]] = defaultdict(list)
    for p in pairs:
        by_workload[p.workload].append(p)
    workloads = [
        WorkloadAccuracy(
            workload=w,
            pairs=len(ps),
            mean_error=statistics.fmean(p.error for p in ps),
            worst_error=max(p.error for p in ps),
            slot_only_mean_error=statistics.fmean(p.slot_only_error for p in ps),
            slot_only_worst_error=max(p.slot_only_error for p in ps),
            bottlenecks=sorted({p.bottleneck for p in ps}),
            repeat_error=mean(repeats.get(w, [])),
            bare_log_mean_error=nanmean([p.bare_log_error for p in ps]),
            no_code_vectors_mean_error=nanmean([p.no_code_vectors_error for p in ps]),
            plugin_samples_mean_error=nanmean([p.plugin_samples_error for p in ps]),
            interval_coverage=interval_coverage(ps),
            bare_log_interval_coverage=interval_coverage(ps, bare_log=True),
        )
        for w, ps in sorted(by_workload.items())
    ]
    nan = math.nan
    return AccuracyReport(
        pairs=pairs,
        workloads=workloads,
        mean_error=statistics.fmean(p.error for p in pairs) if pairs else nan,
        worst_error=max((p.error for p in pairs), default=nan),
        slot_only_mean_error=statistics.fmean(p.slot_only_error for p in pairs) if pairs else nan,
        slot_only_worst_error=max((p.slot_only_error for p in pairs), default=nan),
        model_version=version,
        created=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        host=socket.gethostname(),
        machine=f"{platform.machine()} {platform.processor() or platform.system()}".strip(),
        cores=os.cpu_count() or 0,
        load_avg=[round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else [],
        runs=runs,
        skipped=skipped,
        repeat_error=mean([x for values in repeats.values() for x in values]),
        kinds=summarise_kinds(pairs),
        scales=summarise_scales(pairs),
        scale_steps=summarise_steps(pairs),
    )
