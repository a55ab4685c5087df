"""A Dask run's per-thread CPU, filed the way the replay reads it.

`record` reads every thread of the recorded Python processes (`perfmodel.profile.thread_cpu`:
CPU and run-queue delay per thread) and files them all as a Python driver's, since it cannot
tell a Dask worker from any other Python process. Here the threads of each worker process
are filed under that worker: those that ran tasks (the plugin names their OS ids) as task
threads, the rest (the worker's event loop, its communication and spill threads) as the
process's own background, as a JVM's GC and JIT threads are. The scheduler's and the
client's threads stay the driver's. The replay then takes each stage's CPU demand, the
waits for a core and the other load on the host from them (`perfmodel.simulate.thread_demand`)
exactly as for a Spark executor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from perfmodel.dask.stream import DaskStream
from perfmodel.profile.bundle import BundleError
from perfmodel.profile.thread_cpu import OTHER, TASK, THREAD_CPU, ThreadCpu, from_table


def worker_thread_cpu(
    bundle: Path, stream: DaskStream, worker_of_pid: dict[int, str]
) -> ThreadCpu | None:
    """The bundle's per-thread CPU with each worker's threads filed under it; None when the
    bundle has none or no worker's threads were read."""
    path = bundle / THREAD_CPU
    if not path.is_file() or not worker_of_pid:
        return None
    try:
        table = pq.read_table(path)
        pid = table.column("pid").to_numpy(zero_copy_only=False).astype(np.int64)
        tid = table.column("tid").to_numpy(zero_copy_only=False).astype(np.int64)
        kinds = [str(k) for k in table.column("kind").to_pylist()]
        executors = [str(e) for e in table.column("executor_id").to_pylist()]
    except (OSError, pa.ArrowException, KeyError, ValueError) as exc:
        raise BundleError(f"{path} is damaged or not a Parquet table: {str(exc)[:300]}") from None
    tids = {(w.pid, n) for w in stream.workers if w.pid is not None for n in w.natives.values()}
    moved = 0
    for i, p in enumerate(pid.tolist()):
        worker = worker_of_pid.get(p)
        if worker is None:
            continue
        moved += 1
        executors[i] = worker
        kinds[i] = TASK if (p, int(tid[i])) in tids else OTHER
    if not moved:
        return None
    for name, values in (("kind", kinds), ("executor_id", executors)):
        at = table.schema.get_field_index(name)
        table = table.set_column(at, name, pa.array(values, pa.string()))
    return from_table(table)
