"""The timeline's data: one lane per executor slot, tasks as bars, downsampled for big logs.

Spark's logs do not say which slot of an executor ran a task, so lanes are assigned per
executor by interval partitioning (tasks sorted by launch, each placed in the lane that
freed up first): it uses the fewest lanes that fit the tasks, which is the number of slots
the executor kept busy at once. A 200k-task log would make a page too heavy to draw, so
adjacent tasks of one stage in one lane merge when the gap between them is under a pixel
at the page's nominal width; the bar's hover text says how many tasks it stands for.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfmodel.dag.model import ApplicationProfile

TaskRow = tuple[str, float, float, int, int, int, str]
"""(executor id, launch ms, finish ms, stage id, stage attempt, task id, status)."""

NOMINAL_WIDTH_PX = 1600
"""The width a merge is judged at: gaps under one such pixel are invisible anyway."""
MAX_BARS = 12_000
"""Bars drawn at most; past this the merge widens its pixel until the page fits."""
MAX_GAPS = 400
MIN_GAP_SHARE = 0.002
"""Driver-only gaps shorter than this share of the run are not shaded."""


def timeline_rows(profile: ApplicationProfile) -> list[TaskRow]:
    """Every ended task attempt as a plain row: the one place that reads per-task storage.

    Read from the columnar task table, so no `TaskRun` object is made per task."""
    rows: list[TaskRow] = []
    for stage in profile.stages.values():
        table = stage.table
        if not len(table):
            continue
        ended = table.ended
        if not ended.any():
            continue
        executors = table.strings_of("executor")
        statuses = table.strings_of("status")
        launch = table.col("launch_ms").tolist()
        finish = table.col("finish_ms").tolist()
        task_ids = table.col("task_id").tolist()
        for i in np.flatnonzero(ended).tolist():
            rows.append(
                (
                    executors[i],
                    launch[i],
                    finish[i],
                    stage.stage_id,
                    stage.attempt,
                    task_ids[i],
                    statuses[i],
                )
            )
    return rows


def assign_lanes(rows: list[TaskRow]) -> tuple[list[int], dict[str, int]]:
    """A lane (slot) per row within its executor, and the number of lanes each executor used.

    Interval partitioning: O(n log n), and optimal, so an executor shows as many lanes as
    it had tasks running at once.
    """
    lanes = [0] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1], rows[i][2]))
    counts: dict[str, int] = {}
    current: str | None = None
    free: list[tuple[float, int]] = []
    used = 0
    for i in order:
        executor, launch, finish = rows[i][0], rows[i][1], rows[i][2]
        if executor != current:
            if current is not None:
                counts[current] = used
            current, free, used = executor, [], 0
        if free and free[0][0] <= launch:
            _, lane = heapq.heappop(free)
        else:
            lane = used
            used += 1
        lanes[i] = lane
        heapq.heappush(free, (finish, lane))
    if current is not None:
        counts[current] = used
    return lanes, counts


@dataclass(slots=True)
class Timeline:
    """Plain data for the page (times in seconds from the application's start)."""

    lanes: list[str]
    """Lane labels, top to bottom: ``executor 3 · slot 1``."""
    bars: dict[str, list[Any]] = field(default_factory=dict)
    """Columns: lane, start, end, stage, attempt, tasks (merged), failed (count), stages
    (how many stage attempts the bar covers: 1 unless merging within stages was not enough)."""
    executors: list[dict[str, Any]] = field(default_factory=list)
    """id, first lane, added_s, removed_s, reason."""
    gaps: list[list[float]] = field(default_factory=list)
    """[start, end] when no task ran anywhere (driver-only time)."""
    tasks: int = 0
    merged: bool = False
    span_s: float = 0.0


def _executor_order(executor_id: str) -> tuple[int, int | str]:
    if executor_id == "driver":
        return (0, 0)
    return (1, int(executor_id)) if executor_id.isdigit() else (2, executor_id)


def _merge(
    rows: list[TaskRow],
    order: list[int],
    lane_of: list[int],
    lane_base: dict[str, int],
    pixel_ms: float,
    any_stage: bool = False,
) -> list[list[Any]]:
    """Adjacent tasks in one lane with a gap under ``pixel_ms`` become one bar (``order``:
    rows by lane, then launch). Only tasks of one stage attempt merge, unless ``any_stage``
    (the last resort for a page with more lanes × stages than bars): such a bar takes the
    colour of its longest task's stage and counts the stages it covers."""
    bars: list[list[Any]] = []
    last: list[Any] | None = None
    longest = 0.0
    for i in order:
        executor, launch, finish, stage, attempt, _task, status = rows[i]
        lane = lane_base[executor] + lane_of[i]
        failed = 0 if status == "SUCCESS" else 1
        if (
            last is not None
            and last[0] == lane
            and (any_stage or (last[3] == stage and last[4] == attempt))
            and launch - last[2] <= pixel_ms
        ):
            last[2] = max(last[2], finish)
            last[5] += 1
            last[6] += failed
            last[7].add((stage, attempt))
            if finish - launch > longest:
                longest, last[3], last[4] = finish - launch, stage, attempt
            continue
        last = [lane, launch, finish, stage, attempt, 1, failed, {(stage, attempt)}]
        longest = finish - launch
        bars.append(last)
    return bars


def _driver_gaps(rows: list[TaskRow], start: float, end: float) -> list[list[float]]:
    """Stretches of the run with no task running anywhere, longest first, capped."""
    spans = sorted((r[1], r[2]) for r in rows)
    gaps: list[tuple[float, float]] = []
    cursor = start
    for launch, finish in spans:
        if launch > cursor:
            gaps.append((cursor, launch))
        cursor = max(cursor, finish)
    if end > cursor:
        gaps.append((cursor, end))
    least = (end - start) * MIN_GAP_SHARE
    kept = sorted((g for g in gaps if g[1] - g[0] >= least), key=lambda g: g[0] - g[1])
    return [[a, b] for a, b in sorted(kept[:MAX_GAPS])]


def build_timeline(
    profile: ApplicationProfile, max_bars: int = MAX_BARS, rows: list[TaskRow] | None = None
) -> Timeline:
    """The timeline of ``profile`` (``rows``: its `timeline_rows`, when already read)."""
    if rows is None:
        rows = timeline_rows(profile)
    starts = [r[1] for r in rows]
    start = profile.start_ms if profile.start_ms is not None else min(starts, default=0.0)
    end = profile.end_ms if profile.end_ms is not None else max((r[2] for r in rows), default=0)
    span = max(end - start, 1.0)
    lane_of, counts = assign_lanes(rows)
    executors = sorted(set(counts) | set(profile.executors), key=_executor_order)
    lane_base: dict[str, int] = {}
    labels: list[str] = []
    info: list[dict[str, Any]] = []
    for ex in executors:
        lane_base[ex] = len(labels)
        n = max(counts.get(ex, 0), 1)
        name = "driver" if ex == "driver" else f"executor {ex}"
        labels += [f"{name} · slot {k + 1}" for k in range(n)]
        e = profile.executors.get(ex)
        info.append(
            {
                "id": ex,
                "lane": lane_base[ex],
                "lanes": n,
                "host": e.host if e else "",
                "added_s": _rel(e.added_ms if e else None, start),
                "removed_s": _rel(e.removed_ms if e else None, start),
                "reason": (e.removed_reason or "") if e else "",
            }
        )
    pixel = span / NOMINAL_WIDTH_PX
    order = sorted(range(len(rows)), key=lambda i: (lane_base[rows[i][0]] + lane_of[i], rows[i][1]))
    bars = _merge(rows, order, lane_of, lane_base, -math.inf)  # one bar per task
    merged = any_stage = False
    while len(bars) > max_bars:
        merged = True
        if pixel > span * 2:  # one bar per lane and stage is still too many
            if any_stage:
                break  # one bar per lane: cannot draw less
            any_stage, pixel = True, span / NOMINAL_WIDTH_PX
        bars = _merge(rows, order, lane_of, lane_base, pixel, any_stage)
        pixel *= 2
    columns: dict[str, list[Any]] = {
        "lane": [b[0] for b in bars],
        "start": [round((b[1] - start) / 1000.0, 3) for b in bars],
        "end": [round((b[2] - start) / 1000.0, 3) for b in bars],
        "stage": [b[3] for b in bars],
        "attempt": [b[4] for b in bars],
        "tasks": [b[5] for b in bars],
        "failed": [b[6] for b in bars],
        "stages": [len(b[7]) for b in bars],
    }
    gaps = [
        [round((a - start) / 1000.0, 3), round((b - start) / 1000.0, 3)]
        for a, b in _driver_gaps(rows, start, end)
    ]
    return Timeline(
        lanes=labels,
        bars=columns,
        executors=info,
        gaps=gaps,
        tasks=len(rows),
        merged=merged,
        span_s=round(span / 1000.0, 3),
    )


def _rel(ms: float | None, start: float) -> float | None:
    return None if ms is None else round((ms - start) / 1000.0, 3)
