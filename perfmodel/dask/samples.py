"""Tying a Dask run's stack samples to the tasks that ran on the sampled threads.

py-spy names a sampled thread by its pthread id, which is what Dask reports as the thread a
task ran on (``threading.get_ident``), and the scheduler knows each worker's process id. A
sample of worker process P, thread T at time t therefore belongs to the task whose function
ran on (P, T) at t, exactly: no window guessing. Tied samples carry the task's id and stage
in the bundle's sample schema, so `perfmodel.dag.samples.attribute_samples` takes them as
placed by a plugin; samples of a worker outside every task (its event loop, idle threads)
are marked as coming from a recording with task events, so nothing places them by time.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from perfmodel.dask.build import ThreadSpans

WORKER_PROCESS = "dask worker"


def tie_samples(samples: pa.Table, spans: ThreadSpans) -> pa.Table:
    """``samples`` (bundle schema) with task, stage and worker set where a task ran."""
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
        process[i] = WORKER_PROCESS
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
