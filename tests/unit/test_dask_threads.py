"""Per-thread CPU of a Dask run filed under its workers: task threads and background."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from perfmodel.dask.stream import DaskStream, WorkerFile
from perfmodel.dask.threads import worker_thread_cpu
from perfmodel.profile.thread_cpu import OTHER, PY_DRIVER, TASK, THREAD_CPU


def test_threads_of_workers_are_filed_under_them(tmp_path: Path) -> None:
    rows = [  # (t_ms, pid, tid, cpu_ms, wait_ms): a worker's task thread and event loop,
        (1000.0, 20, 21, 10.0, 1.0),  # and the scheduler process
        (1250.0, 20, 21, 210.0, 5.0),
        (1250.0, 20, 20, 30.0, 0.0),
        (1250.0, 10, 10, 50.0, 0.0),
    ]
    n = len(rows)
    table = pa.table(
        {
            "t_ms": [r[0] for r in rows],
            "pid": pa.array([r[1] for r in rows], pa.int32()),
            "tid": pa.array([r[2] for r in rows], pa.int32()),
            "kind": [PY_DRIVER] * n,
            "executor_id": ["driver"] * n,
            "name": ["python"] * n,
            "cpu_ms": [r[3] for r in rows],
            "wait_ms": [r[4] for r in rows],
            "nice": pa.array([0] * n, pa.int8()),
        }
    )
    pq.write_table(table, tmp_path / THREAD_CPU)
    stream = DaskStream(workers=[WorkerFile("w", "tcp://w", 20, natives={123: 21})])
    measured = worker_thread_cpu(tmp_path, stream, {20: "tcp://w"})
    assert measured is not None
    assert set(measured.series) == {("tcp://w", TASK), ("tcp://w", OTHER), ("driver", PY_DRIVER)}
    task = measured.series[("tcp://w", TASK)]
    assert task.cpu_ms[-1] == 210.0 and task.wait_ms[-1] == 5.0
    assert measured.series[("tcp://w", OTHER)].cpu_ms[-1] == 30.0
    assert worker_thread_cpu(tmp_path, stream, {}) is None
