"""The text form of what-if predictions and sweeps (``perfmodel predict``)."""

from __future__ import annotations

import math

from perfmodel.analysis import Prediction, SweepPoint
from perfmodel.dag.partition_change import SettingsEffect
from perfmodel.report.base import ProfileSource
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.intervals import LEVEL
from perfmodel.simulate.units import format_bandwidth, format_size
from perfmodel.simulate.whatif import Change

MAX_STAGE_ROWS = 10


def describe_config(c: ClusterConfig, framework: str = "spark") -> str:
    """One line a user can check against how they ran the job (slots, heap, bandwidths), in
    the words of the job's framework (Dask: workers of threads, a memory limit)."""
    if framework == "dask":
        head = (
            f"{_count(c.executors, 'worker')} × {_count(c.executor_cores, 'thread')} on "
            f"{_count(c.hosts, 'host')}"
        )
        memory = "memory limit per worker"
    elif c.local_mode:
        head, memory = f"local[{c.executor_cores}]", "heap"
    elif c.allocation.enabled:
        head = f"{c.allocation.describe()}; executors of {c.executor_cores} cores"
        memory = "heap"
    else:
        head = (
            f"{_count(c.executors, 'executor')} × {_count(c.executor_cores, 'core')} on "
            f"{_count(c.hosts, 'host')}"
        )
        memory = "heap"
    return (
        f"{head}, {format_size(c.memory_bytes)} {memory}, {c.host_cores} cores per host, "
        f"cpu speed {c.cpu_speed:g}, disk {format_bandwidth(c.disk_bw)}, "
        f"network {format_bandwidth(c.net_bw)}"
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def render_prediction(p: Prediction, source: ProfileSource, change: Change) -> str:
    """The prediction with its self-check first, so the number is read with its error, and
    every value assumed about the baseline spelled out."""
    lines = [f"perfmodel predict — {p.app_id}"]
    lines.append(f"profile: {_profile(source)}")
    lines.append(f"baseline: {describe_config(p.baseline_config, p.framework)}")
    if change.is_empty:
        lines.append("what-if:  (no change given: replaying the baseline)")
    else:
        lines.append(f"what-if:  {describe_config(p.config, p.framework)}")
    if p.conf is not None:
        lines += render_settings_effect(p.conf)
    lines.append(
        f"observed {p.observed_s:.1f} s · baseline replay {p.baseline_replay_s:.1f} s · "
        f"model error {p.model_error:+.1%}"
    )
    ratio = p.speedup
    if ratio <= 0:  # nothing took time in the replay: no ratio to state
        trend = "no time to compare"
    else:
        trend = f"{ratio:.2f}× faster" if ratio >= 1 else f"{1 / ratio:.2f}× slower"
    lines.append(f"predicted {p.predicted_s:.1f} s ({trend}) · bottleneck: {p.bottleneck}")
    if not math.isnan(p.predicted_low_s):
        lines.append(
            f"range {p.predicted_low_s:.1f}–{p.predicted_high_s:.1f} s ({p.interval_source})"
        )
    assumed = [
        f"{name}: {how}"
        for name, how in p.baseline_config.sources.items()
        if how.startswith(("default", "assumed"))
    ]
    if assumed:
        lines.append("assumed about the baseline:")
        lines += [f"  {a}" for a in assumed]
    lines += [f"note: {n}" for n in p.notes]
    lines.append("")
    lines.append(f"{'stage':>7} {'tasks':>6} {'observed':>9} {'predicted':>9}  bottleneck  vector")
    ranked = sorted(p.stages, key=lambda s: -max(s.observed_s, s.predicted_s))
    for s in ranked[:MAX_STAGE_ROWS]:
        vec = " ".join(f"{k} {v:.0%}" for k, v in list(s.vector.items())[:3])
        stage = f"{s.stage_id}" + (f".{s.attempt}" if s.attempt else "")
        lines.append(
            f"{stage:>7} {s.n_tasks:>6} {s.observed_s:>8.1f}s {s.predicted_s:>8.1f}s  "
            f"{s.bottleneck:<10}  {vec}"
        )
    if len(p.stages) > MAX_STAGE_ROWS:
        lines.append(f"  … {len(p.stages) - MAX_STAGE_ROWS} more stages (see --json)")
    return "\n".join(lines)


MAX_CHANGED_ROWS = 12


def render_settings_effect(e: SettingsEffect) -> list[str]:
    """What ``--conf`` changed: each re-partitioned stage (old → new tasks, the knob in
    control), each join that switches strategy, each setting that changes nothing here
    and why, and who sets the task counts of the profile's stages."""
    given = ", ".join(f"{k}={v}" for k, v in e.settings.items())
    lines = [f"settings: {given}"]
    if e.stages:
        lines.append(
            f"  stages they re-partition ({len(e.stages)}; tasks old → new, knob in control):"
        )
        for s in e.stages[:MAX_CHANGED_ROWS]:
            stage = f"{s.stage_id}" + (f".{s.attempt}" if s.attempt else "")
            line = (
                f"    stage {stage:>5}: {s.tasks_before:>6} → {s.tasks_after:<6} {s.knob}: {s.why}"
            )
            if round(s.blocks_before) != round(s.blocks_after):
                line += (
                    f"; shuffle blocks a task fetches {s.blocks_before:,.0f} → "
                    f"{s.blocks_after:,.0f}"
                )
            lines.append(line)
        if len(e.stages) > MAX_CHANGED_ROWS:
            lines.append(f"    … {len(e.stages) - MAX_CHANGED_ROWS} more (see --json)")
    if e.map_stages:
        line = f"  {e.map_stages} map stage(s) write their shuffle to the new partition count"
        if round(e.record_ms / 1000, 1):
            more = "more" if e.record_ms > 0 else "less"
            line += (
                f"; {abs(e.record_ms) / 1000:,.1f} s {more} task time ordering their records "
                "by partition"
            )
        lines.append(line)
    for j in e.joins:
        lines.append(f"  join of query {j.query_id}: {j.before} → {j.after}")
    for key, why in e.no_effect.items():
        lines.append(f"  {key}: {why}")
    for key, why in e.not_predicted.items():
        lines.append(f"  {key}: not predicted ({why})")
    if e.controls:
        lines.append("  " + _controls(e.controls))
    return lines


_CONTROL_WORDS = {
    "shuffle-partitions": "spark.sql.shuffle.partitions (and AQE)",
    "default-parallelism": "spark.default.parallelism",
    "file-splits": "file splits (spark.sql.files.*)",
    "code": "the code",
    "single": "a single partition",
    "input": "their input",
    "unknown": "nothing the log shows",
}


def _controls(controls: dict[str, int]) -> str:
    total = sum(controls.values())
    parts = [
        f"{_CONTROL_WORDS.get(kind, kind)} {n}"
        for kind, n in sorted(controls.items(), key=lambda kv: -kv[1])
    ]
    return f"who sets the task counts of the {total} stage(s) that ran: " + ", ".join(parts)


_DASK_WORDS = {"executors": "workers", "executor-cores": "threads"}
"""A sweep axis's column as a Dask user names it (`describe_config`'s words)."""


def render_sweep(points: list[SweepPoint], source: ProfileSource) -> str:
    """The sweep as a table: one row per grid point, with its bottleneck. The table needs
    no stage: points without theirs (`SweepPoint.summary`) are enough."""
    first = points[0].prediction
    lines = [
        f"perfmodel predict --sweep — {first.app_id}",
        f"profile: {_profile(source)}",
        f"baseline: {describe_config(first.baseline_config, first.framework)}",
        f"observed {first.observed_s:.1f} s · baseline replay {first.baseline_replay_s:.1f} s"
        f" · model error {first.model_error:+.1%}",
    ]
    names = list(points[0].settings)
    words = _DASK_WORDS if first.framework == "dask" else {}
    width = {n: max(14, len(words.get(n, n))) for n in names}
    lines.append(
        "  ".join(f"{words.get(n, n):>{width[n]}}" for n in names)
        + f"  {'predicted':>10}  {f'{LEVEL:.0%} range':>13}  bottleneck"
    )
    for pt in points:
        cells = "  ".join(f"{pt.settings[n]:>{width[n]}}" for n in names)
        q = pt.prediction
        span = (
            f"{q.predicted_low_s:.1f}–{q.predicted_high_s:.1f}s"
            if not math.isnan(q.predicted_low_s)
            else "-"
        )
        lines.append(f"{cells}  {q.predicted_s:>9.1f}s  {span:>13}  {q.bottleneck}")
    return "\n".join(lines)


def _profile(source: ProfileSource) -> str:
    return source.path + (" (the profile last analysed)" if source.remembered else "")
