"""Attribution rules on a small hand-built profile: plugin ids win, windows place the rest.

The end-to-end checks on real applications are in test_record_default.py and
test_record_dataframe_job.py; this pins down the rules that real runs exercise only by chance
(overlapping tasks of one or two stages).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from perfmodel.dag.model import ApplicationProfile, OperationNode, StageNode
from perfmodel.dag.samples import CallProfile, attribute_samples
from perfmodel.dag.tasks import TaskRun
from perfmodel.profile import sampletable
from perfmodel.profile.sampletable import StackDictionary

WORKER = "Executor task launch worker-0"


def _profile() -> ApplicationProfile:
    p = ApplicationProfile(app_id="app", end_ms=10_000)
    s0 = StageNode(stage_id=0, attempt=0, name="map at app.py:10", num_tasks=2)
    s0.op_nodes.append(OperationNode(1, "PythonRDD", call_site="map at /x/app.py:10"))
    s1 = StageNode(stage_id=1, attempt=0, name="count at app.py:20", num_tasks=1)
    s0.tasks = [
        TaskRun(1, 0, 0, 0, 0, "1", "h", launch_ms=1000, finish_ms=3000),
        TaskRun(2, 1, 0, 0, 0, "1", "h", launch_ms=2000, finish_ms=4000),
    ]
    s1.tasks = [TaskRun(3, 0, 0, 1, 0, "1", "h", launch_ms=3500, finish_ms=6000)]
    p.stages = {s0.key: s0, s1.key: s1}
    return p


def _table(rows: list[dict]) -> pa.Table:
    names = ["Executor.run", "app.work", "read (/usr/lib/python3.11/socket.py)", "f (/x/app.py)"]
    stacks = StackDictionary(
        names,
        [np.array([0, 1], np.int32), np.array([2], np.int32), np.array([3], np.int32)],
        [np.zeros(2, np.int32), np.zeros(1, np.int32), np.array([10], np.int32)],
    )
    ids = np.array([r["stack"] for r in rows])
    frames, lines = sampletable.stack_columns(stacks, ids)
    n = len(rows)
    return sampletable.make_table(
        {
            "timestamp_ms": np.array([r["t"] for r in rows], dtype=float),
            "source": [r.get("source", "jfr") for r in rows],
            "kind": [r.get("kind", "java") for r in rows],
            "weight_ms": np.full(n, 20.0),
            "process": [r.get("process", "jvm executor 1") for r in rows],
            "executor_id": ["1"] * n,
            "thread": [r.get("thread", WORKER) for r in rows],
            "task_id": pa.array([r.get("task") for r in rows], pa.int64()),
            "stage_id": pa.array([0 if r.get("task") else None for r in rows], pa.int32()),
            "stage_attempt": pa.array([0 if r.get("task") else None for r in rows], pa.int32()),
            "task_events": np.array([r.get("events", False) for r in rows]),
            "stack_id": ids,
            "frames": frames,
            "lines": lines,
            "recording": ["r"] * n,
        }
    )


def test_window_placement_one_task_one_stage_or_nothing() -> None:
    rows = [
        {"t": 1500, "stack": 0},  # only task 1 runs → task 1
        {"t": 2500, "stack": 0},  # tasks 1 and 2, both stage 0 → stage 0 only
        {"t": 3700, "stack": 0},  # task 2 (stage 0) and task 3 (stage 1) → nothing
        {"t": 5000, "stack": 0},  # only task 3 → task 3
        {"t": 5000, "stack": 0, "thread": "driver-heartbeater"},  # not a task thread
    ]
    sp = attribute_samples(_profile(), _table(rows))
    assert sp.tasks[1].samples == 1 and sp.tasks[3].samples == 1 and 2 not in sp.tasks
    assert sp.stages[(0, 0)].samples == 2 and sp.stages[(1, 0)].samples == 1
    assert sp.attribution == {"window-task": 2, "window-stage": 1, "outside": 2}
    assert sp.warnings


def test_plugin_ids_are_kept_and_not_second_guessed() -> None:
    rows = [
        {"t": 2500, "stack": 0, "task": 2, "events": True},
        {"t": 1500, "stack": 1, "kind": "native", "events": True},  # outside every span
    ]
    sp = attribute_samples(_profile(), _table(rows))
    assert sp.tasks[2].samples == 1
    assert sp.attribution == {"plugin": 1, "outside": 1}
    top = sp.stages[(0, 0)].top(1)
    assert top[0].name == "app.work" and top[0].self_samples == 1


def test_python_worker_samples_find_their_operation_by_call_site() -> None:
    rows = [
        {"t": 1500, "stack": 2, "source": "pyspy", "kind": "python", "process": "python worker"},
        {"t": 1600, "stack": 1, "source": "pyspy", "kind": "idle", "process": "python worker"},
    ]
    sp = attribute_samples(_profile(), _table(rows))
    assert sp.operations[((0, 0), 1)].samples == 1
    assert sp.outside.by_kind["idle"] == 1  # a worker parked between tasks is nobody's work


def test_top_functions_rank_by_thread_time_not_sample_count() -> None:
    # Three Java samples of 20 ms against one py-spy stack that lasted 500 ms: the Python
    # function had more of the thread's time though fewer samples.
    profile = CallProfile()
    for _ in range(3):
        profile.add(("Executor.run", "java.util.zip.Inflater.inflate"), "java", 1, 20.0)
    profile.add(("main (worker.py)", "parse (app.py)"), "python", 1, 500.0)
    profile.add(("main (worker.py)", "emit (app.py)"), "python", 1, 70.0)
    top = profile.top(2, by="self")
    assert [f.name for f in top] == ["parse (app.py)", "emit (app.py)"]
    assert top[0].self_samples == 1 and top[0].self_ms == 500.0
    assert [f.name for f in profile.top(1, by="total")] == ["main (worker.py)"]
    assert profile.top(10, by="self")[-1].name == "java.util.zip.Inflater.inflate"
