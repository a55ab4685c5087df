"""The recording preloads inside a real (in-process) Dask cluster, the environment `record`
sets, and stack samples tied to the tasks on their threads."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from perfmodel.dag.thread_spans import ThreadSpans, tie_samples
from perfmodel.dask.build import build
from perfmodel.dask.frontend import WORKER_PROCESS
from perfmodel.dask.stream import read_stream
from perfmodel.profile import sampletable
from perfmodel.profile.record.setup import DASK_DIR_ENV, DASK_PLUGIN, dask_env

distributed = pytest.importorskip("distributed", reason="Dask is not installed (extra: dask)")


def _double(x: int) -> int:
    return 2 * x


def test_preloads_record_a_real_clusters_task_stream(tmp_path, monkeypatch) -> None:
    import dask
    import dask.bag as db

    out = tmp_path / "dask"
    monkeypatch.setenv(DASK_DIR_ENV, str(out))
    preload = {
        f"distributed.{k}.preload": [str(DASK_PLUGIN)] for k in ("scheduler", "worker", "client")
    }
    with (
        dask.config.set(preload),
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        total = db.from_sequence(range(40), npartitions=8).map(_double).sum().compute()
        assert total == 2 * sum(range(40))
        assert client.submit(_double, 21).result() == 42
    stream = read_stream(out)
    assert not stream.problems
    assert {f.file.split("/")[-1].split("-")[0] for f in stream.schedulers} == {"scheduler"}
    (scheduler,) = stream.schedulers
    (worker,) = stream.workers
    assert len(scheduler.graphs) == 2 and scheduler.closed_t is not None
    assert all(t.thread and t.startstops and t.worker == worker.worker for t in scheduler.tasks)
    # Every task's thread CPU reached its key (the digest follows the task's transition).
    assert {t.key for t in scheduler.tasks} == set(worker.cpu_s)
    # The worker probed its interpreter lock every 10 ms until it closed.
    probes = [lag for p in worker.probes for lag in p.lag_us]
    assert probes and all(lag >= 0 for lag in probes)
    profile = build(stream, host_cores=2).profile
    assert len(profile.jobs) == 2 and profile.complete
    names = {s.name for s in profile.stages.values()}
    assert {"double", "sum-part", "sum-aggregate"} <= names, names
    table = profile.task_table()
    assert table.has_cpu_time.all() and (table.cpu_ms <= table.run_ms + 1.0).all()
    # The job ends when its result reached the client, after its last task.
    for job in profile.jobs.values():
        last = max(float(profile.stages[(s, 0)].table.finish_ms.max()) for s in job.stage_ids)
        assert job.complete_ms >= last


def test_record_env_keeps_the_users_preloads(tmp_path) -> None:
    env = dask_env(tmp_path, {"DASK_DISTRIBUTED__WORKER__PRELOAD": "['mine.py']"})
    assert env[DASK_DIR_ENV] == str((tmp_path / "raw" / "dask").resolve())
    assert env["DASK_DISTRIBUTED__WORKER__PRELOAD"] == repr(["mine.py", str(DASK_PLUGIN)])
    assert env["DASK_DISTRIBUTED__SCHEDULER__PRELOAD"] == repr([str(DASK_PLUGIN)])
    assert DASK_PLUGIN.is_file()


def test_samples_are_tied_to_the_task_on_their_thread() -> None:
    spans = ThreadSpans(
        pid=np.array([7, 7, 7]),
        thread=np.array([11, 11, 12]),
        start_ms=np.array([100.0, 200.0, 100.0]),
        stop_ms=np.array([150.0, 300.0, 300.0]),
        task_id=np.array([0, 1, 2]),
        stage_id=np.array([0, 1, 1]),
        executor_of_pid={7: "tcp://w"},
    )
    # (pid, thread, time): in task 0; between tasks; in task 1; in task 2; another process.
    rows = [(7, 11, 120.0), (7, 11, 170.0), (7, 11, 250.0), (7, 12, 299.0), (8, 11, 120.0)]
    n = len(rows)
    table = sampletable.make_table(
        {
            "timestamp_ms": np.array([r[2] for r in rows]),
            "source": ["pyspy"] * n,
            "kind": ["python"] * n,
            "weight_ms": np.full(n, 10.0),
            "process": ["python driver"] * n,
            "pid": pa.array([r[0] for r in rows], pa.int64()),
            "executor_id": ["driver"] * n,
            "thread_id": pa.array([r[1] for r in rows], pa.int64()),
            "thread": ["t"] * n,
            "task_events": np.zeros(n, dtype=bool),
            "stack_id": np.zeros(n, dtype=np.int64),
            "frames": pa.array([[]] * n, sampletable.FRAMES_TYPE),
            "lines": pa.array([[]] * n, sampletable.LINES_TYPE),
            "recording": ["r"] * n,
        }
    )
    tied = tie_samples(table, spans, WORKER_PROCESS)
    assert tied.column("task_id").to_pylist() == [0, None, 1, 2, None]
    assert tied.column("stage_id").to_pylist() == [0, None, 1, 1, None]
    assert tied.column("process").to_pylist() == [WORKER_PROCESS] * 4 + ["python driver"]
    assert tied.column("executor_id").to_pylist() == ["tcp://w"] * 4 + ["driver"]
    assert tied.column("task_events").to_pylist() == [True] * 4 + [False]
    assert tied.schema == sampletable.SAMPLE_SCHEMA
