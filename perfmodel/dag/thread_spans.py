"""Where each task's function ran (process, thread, time), and what that places.

Where a front end knows the thread a task ran on and its process (Dask reports both;
py-spy names a sampled thread by the same pthread id), time-stamped observations of a
process are tied to tasks exactly, with no window guessing:

* a stack sample of process P, thread T at time t belongs to the task whose function ran on
  (P, T) at t (`tie_samples`). Tied samples carry the task's id and stage in the bundle's
  sample schema, so `perfmodel.dag.samples.attribute_samples` takes them as placed by a
  plugin; an executor's samples outside every task (its event loop, idle threads) are
  marked as coming from a recording with task events, so nothing places them by time;
* a probe of P's interpreter lock at time t tells whether the lock was held while the
  tasks running in P then ran (`lock_held_ms`), which the replay's lock model reads
  (`perfmodel.simulate.interpreter_lock`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

HELD_LAG_US = 1000
"""A probe that got the interpreter lock later than this (µs) found it held. A free lock is
taken in 0.12 ms (median; 90th percentile 0.13 ms on an idle host, 0.43 ms beside two busy
processes on 2 cores, 2026-11-29); one held by Python code, after its 5 ms switch interval."""


@dataclass(slots=True)
class ThreadSpans:
    """Where each task's function ran: process, thread and time (epoch ms, the host's clock).
    One entry per task with a known thread."""

    pid: np.ndarray
    thread: np.ndarray
    start_ms: np.ndarray
    stop_ms: np.ndarray
    task_id: np.ndarray
    stage_id: np.ndarray
    executor_of_pid: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class LockProbes:
    """One process's interpreter-lock probes: when each asked for the lock (epoch ms) and
    how late it got it (µs)."""

    at_ms: np.ndarray
    lag_us: np.ndarray


def tie_samples(samples: pa.Table, spans: ThreadSpans, worker_process: str) -> pa.Table:
    """``samples`` (bundle schema) with task, stage and executor set where a task ran; the
    executors' processes are named ``worker_process``."""
    n = samples.num_rows
    if n == 0 or not spans.executor_of_pid:
        return samples
    pid = samples.column("pid").combine_chunks().fill_null(-1).to_numpy(zero_copy_only=False)
    tid = samples.column("thread_id").combine_chunks().fill_null(-1)
    thread = tid.to_numpy(zero_copy_only=False)
    ts = samples.column("timestamp_ms").to_numpy()
    task = np.full(n, -1, dtype=np.int64)
    stage = np.full(n, -1, dtype=np.int64)
    order = np.lexsort((spans.start_ms, spans.thread, spans.pid))
    s_start, s_stop = spans.start_ms[order], spans.stop_ms[order]
    s_task, s_stage = spans.task_id[order], spans.stage_id[order]
    span_range: dict[tuple[int, int], tuple[int, int]] = {}
    for i, pair in enumerate(
        zip(spans.pid[order].tolist(), spans.thread[order].tolist(), strict=True)
    ):
        lo, _ = span_range.get(pair, (i, i))
        span_range[pair] = (lo, i + 1)
    # Samples grouped by (process, thread): one sort, then one search per thread.
    by_thread = np.lexsort((thread, pid))
    pairs = np.stack([pid[by_thread], thread[by_thread]], axis=1)
    cuts = np.flatnonzero(np.any(pairs[1:] != pairs[:-1], axis=1)) + 1
    for rows in np.split(by_thread, cuts):
        found = span_range.get((int(pid[rows[0]]), int(thread[rows[0]])))
        if found is None:
            continue
        lo, hi = found
        at = np.searchsorted(s_start[lo:hi], ts[rows], side="right") - 1
        inside = (at >= 0) & (ts[rows] <= s_stop[lo:hi][np.maximum(at, 0)])
        task[rows[inside]] = s_task[lo:hi][at[inside]]
        stage[rows[inside]] = s_stage[lo:hi][at[inside]]
    workers = spans.executor_of_pid
    of_worker = np.isin(pid, np.fromiter(workers, dtype=np.int64, count=len(workers)))
    executor = samples.column("executor_id").to_pylist()
    process = samples.column("process").to_pylist()
    for i in np.flatnonzero(of_worker).tolist():
        executor[i] = workers[int(pid[i])]
        process[i] = worker_process
    placed = task >= 0
    columns = {
        "task_id": pa.array(np.where(placed, task, 0), pa.int64(), mask=~placed),
        "stage_id": pa.array(np.where(placed, stage, 0).astype(np.int32), pa.int32(), mask=~placed),
        "stage_attempt": pa.array(np.zeros(n, np.int32), pa.int32(), mask=~placed),
        "task_events": pa.array(of_worker | samples.column("task_events").to_numpy(), pa.bool_()),
        "executor_id": pa.array(executor, pa.string()),
        "process": pa.array(process, pa.string()),
    }
    for name, values in columns.items():
        at = samples.schema.get_field_index(name)
        samples = samples.set_column(at, samples.schema.field(at), values)
    return samples


def lock_held_ms(spans: ThreadSpans, probes: dict[int, LockProbes]) -> dict[int, float]:
    """Per stage id: how long its tasks' process held its interpreter lock while they ran
    (ms; `perfmodel.dag.model.LOCK_HELD_MS`), from the lock probes of each process (by
    pid): the share of the probes that landed in the stage's tasks and found the lock held
    (by any thread of the process), times the tasks' function time. A stage that no probe
    landed in (all its tasks shorter than the probes' period, or no probes) is absent:
    unmeasured, not 0."""
    stages: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for pid, probe in probes.items():
        rows = np.flatnonzero(spans.pid == pid)
        order = np.argsort(probe.at_ms, kind="stable")
        at = probe.at_ms[order]
        held = np.concatenate([[0], np.cumsum(probe.lag_us[order] > HELD_LAG_US)])
        lo = np.searchsorted(at, spans.start_ms[rows], side="left")
        hi = np.searchsorted(at, spans.stop_ms[rows], side="right")
        ms = np.maximum(spans.stop_ms[rows] - spans.start_ms[rows], 0.0)
        stages.append(spans.stage_id[rows])
        counts.append(np.stack([hi - lo, held[hi] - held[lo], ms]).astype(np.float64))
    if not stages:
        return {}
    stage = np.concatenate(stages)
    landed, held_n, time_ms = (
        np.bincount(stage, weights=row) for row in np.concatenate(counts, axis=1)
    )
    return {int(s): float(held_n[s] / landed[s] * time_ms[s]) for s in np.flatnonzero(landed)}
