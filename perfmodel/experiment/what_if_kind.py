"""Which what-if a pair tests, and the accuracy of each kind on its own.

The study's targets are stated per kind of change (network bandwidth, memory, worker count),
and one overall mean would hide a kind the model gets wrong behind two it gets right. A pair
whose two configurations differ in exactly one resource tests that resource's law; one that
differs in several (two what-ifs at once) is kept apart as *combined*, so it cannot blur a
single kind's figure.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from perfmodel.experiment.allocation_pairs import DYNAMIC_ALLOCATION, differs
from perfmodel.experiment.results import KindAccuracy, PairResult, interval_coverage, nanmean
from perfmodel.simulate.config import DEFAULT_NET_BW
from perfmodel.simulate.units import UnitError, parse_size

NETWORK = "network bandwidth"
MEMORY = "memory"
WORKERS = "worker count"
CORES = "cores"
"""Task slots of one local-mode JVM (``local[N]``)."""
COMBINED = "combined"
"""More than one resource changed at once."""
OTHER = "other"
"""None of these resources changed (the configurations differ in name only)."""
KIND_ORDER = (NETWORK, MEMORY, WORKERS, CORES, DYNAMIC_ALLOCATION, COMBINED, OTHER)


def _memory(settings: dict[str, Any]) -> int | None:
    """The heap that runs the tasks: the driver's in local mode, else the executors'."""
    local = str(settings.get("master", "")).startswith("local")
    text = settings.get("driver_memory" if local else "executor_memory")
    if not text:
        return None
    try:
        return parse_size(str(text))
    except UnitError:
        return None


def _local_cores(settings: dict[str, Any]) -> str | None:
    m = re.match(r"^local\[([^\],]+)", str(settings.get("master", "")))
    return m.group(1) if m else None


def changed_resources(base: dict[str, Any], target: dict[str, Any]) -> list[str]:
    """The what-if kinds in which two runs' configuration settings differ."""
    kinds = []
    if base.get("rate_mbit") != target.get("rate_mbit"):
        kinds.append(NETWORK)
    if _memory(base) != _memory(target):
        kinds.append(MEMORY)
    if base.get("workers") != target.get("workers"):
        kinds.append(WORKERS)
    if _local_cores(base) != _local_cores(target):
        kinds.append(CORES)
    if differs(base, target):
        kinds.append(DYNAMIC_ALLOCATION)
    return kinds


def pair_kind(base: dict[str, Any], target: dict[str, Any]) -> str:
    """The one kind two configurations differ in, `COMBINED` for several, `OTHER` for none."""
    kinds = changed_resources(base, target)
    if not kinds:
        return OTHER
    return kinds[0] if len(kinds) == 1 else COMBINED


def summarise_kinds(pairs: list[PairResult]) -> list[KindAccuracy]:
    """One summary per kind present among ``pairs``, in `KIND_ORDER`: mean errors and the
    80% intervals' coverage, so an interval too narrow for one kind of change (calibrated
    on local core counts, asked about a cluster's bandwidth) is not hidden by the others."""
    by_kind: dict[str, list[PairResult]] = defaultdict(list)
    for p in pairs:
        if p.kind:
            by_kind[p.kind].append(p)
    out = []
    for kind in sorted(by_kind, key=lambda k: (KIND_ORDER.index(k), k)):
        ps = by_kind[kind]
        worst = max(ps, key=lambda p: p.error)
        signed = (worst.predicted_s - worst.measured_s) / worst.measured_s
        out.append(
            KindAccuracy(
                kind=kind,
                pairs=len(ps),
                workloads=sorted({p.workload for p in ps}),
                mean_error=nanmean([p.error for p in ps]),
                worst_error=worst.error,
                worst_pair=(
                    f"{worst.workload}: {worst.baseline_config} (run {worst.baseline_run}) → "
                    f"{worst.target_config}, {100 * signed:+.1f}%"
                ),
                slot_only_mean_error=nanmean([p.slot_only_error for p in ps]),
                bare_log_mean_error=nanmean([p.bare_log_error for p in ps]),
                no_code_vectors_mean_error=nanmean([p.no_code_vectors_error for p in ps]),
                interval_coverage=interval_coverage(ps),
                bare_log_interval_coverage=interval_coverage(ps, bare_log=True),
            )
        )
    return out


def link_bandwidth(settings: dict[str, Any]) -> float | None:
    """Bytes per second of each worker's link (``rate_mbit``, tc's 10⁶ bits), or None where
    not limited: the baseline's network bandwidth, as a user who knows the link states it."""
    rate = settings.get("rate_mbit")
    return None if rate is None else float(rate) * 1e6 / 8


def target_link_bandwidth(base: dict[str, Any], target: dict[str, Any]) -> float | None:
    """The what-if's link for a pair: the target's rate; an unlimited target of a limited
    baseline gets the model's default network (the baseline's own rate would be wrong)."""
    rate = link_bandwidth(target)
    if rate is None and link_bandwidth(base) is not None:
        return DEFAULT_NET_BW
    return rate
