"""Per-thread CPU: the sampler on a hand-built /proc, the bundle table, and its attribution to
stages (`perfmodel.profile.thread_cpu`, `perfmodel.simulate.thread_demand`)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perfmodel.dag.model import ApplicationProfile
from perfmodel.profile import bundle, thread_cpu
from perfmodel.profile.record import bundle_write, thread_sampler
from perfmodel.profile.record.thread_sampler import ThreadCpuSampler
from perfmodel.profile.thread_cpu import (
    GC,
    JIT,
    OTHER,
    PY_DAEMON,
    PY_DRIVER,
    PY_WORKER,
    RECORDING,
    TASK,
    classify_jvm_thread,
    python_kind,
)
from perfmodel.simulate.config import BaselineOverrides, WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.laws import contention_factor
from perfmodel.simulate.replay import replay_workload
from perfmodel.simulate.thread_demand import (
    StageThreadCpu,
    TaskColumns,
    other_load,
    share_by_overlap,
    stage_thread_cpu,
)
from perfmodel.simulate.workload import compile_workload
from perfmodel.spark.load import build_profile

EVENTLOGS = Path(__file__).parents[1] / "data" / "eventlogs"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Executor task l", TASK),
        ("Executor task i", TASK),  # Spark 4's "Executor task idle worker-N"
        ("GC Thread#0", GC),
        ("G1 Conc#0", GC),
        ("G1 Refine#0", GC),
        ("VM Thread", GC),
        ("C2 CompilerThre", JIT),
        ("C1 CompilerThre", JIT),
        ("JFR Periodic Ta", RECORDING),
        ("perfmodel idle-", RECORDING),
        ("dispatcher-even", OTHER),
        ("shuffle-client-", OTHER),
        ("Thread-4", OTHER),
    ],
)
def test_jvm_threads_are_classified_by_their_native_name(name: str, kind: str) -> None:
    assert classify_jvm_thread(name) == kind


def test_python_processes_are_told_apart_by_command_line() -> None:
    daemon = ["/venv/bin/python", "-m", "pyspark.daemon"]
    assert python_kind(daemon, daemon) == PY_WORKER  # a fork of the daemon
    assert python_kind(daemon, ["java", "-cp", "x"]) == PY_DAEMON
    assert python_kind(["python3", "job.py"], ["bash"]) == PY_DRIVER
    assert python_kind(["java", "-cp", "x"], ["bash"]) is None


def _thread(proc: Path, pid: int, tid: int, name: str, cpu_ns: int, wait_ns: int) -> None:
    base = proc / str(pid) / "task" / str(tid)
    base.mkdir(parents=True, exist_ok=True)
    (base / "comm").write_text(name + "\n")
    (base / "schedstat").touch()
    _counters(proc, pid, tid, cpu_ns, wait_ns)


def _counters(proc: Path, pid: int, tid: int, cpu_ns: int, wait_ns: int) -> None:
    # Rewritten in place (same inode), as the kernel's file reads afresh: the sampler keeps
    # one descriptor per thread open.
    with open(proc / str(pid) / "task" / str(tid) / "schedstat", "r+b") as f:
        f.truncate(0)
        f.write(f"{cpu_ns} {wait_ns} 7\n".encode())


def test_sampler_writes_a_row_only_when_a_thread_moved(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for tid, name in ((100, "Executor task l"), (101, "GC Thread#0"), (102, "C2 CompilerThre")):
        _thread(proc, 100, tid, name, 0, 0)
    sampler = ThreadCpuSampler(proc=proc)
    sampler.poll({100: "driver"}, t_ms=1000.0)
    _counters(proc, 100, 100, 200_000_000, 50_000_000)  # the task thread: 200 ms, waited 50
    sampler.poll({100: "driver"}, t_ms=1250.0)
    sampler.poll({100: "driver"}, t_ms=1500.0)  # nothing moved: no rows
    shutil.rmtree(proc / "100" / "task" / "101")  # GC thread ended: its descriptor goes
    sampler.poll({100: "driver"}, t_ms=1750.0)
    sampler.close()
    rows = sampler.table().to_pylist()
    assert [(r["t_ms"], r["tid"]) for r in rows] == [
        (1000.0, 100),
        (1000.0, 101),
        (1000.0, 102),
        (1250.0, 100),
    ]
    assert {r["tid"]: r["kind"] for r in rows} == {100: TASK, 101: GC, 102: JIT}
    assert rows[-1]["cpu_ms"] == pytest.approx(200.0) and rows[-1]["wait_ms"] == 50.0
    assert all(r["executor_id"] == "driver" for r in rows)
    assert sampler.polls == 4 and sampler.cpu_s >= 0.0


def test_a_thread_first_seen_under_its_creators_name_becomes_a_task_thread(
    tmp_path: Path,
) -> None:
    # A new thread carries its creator's name until the JVM names it: Spark's task threads
    # are made by its RPC dispatcher. Seen in that moment, it is filed as other at first.
    proc = tmp_path / "proc"
    _thread(proc, 100, 105, "dispatcher-even", 1_000_000, 0)
    _thread(proc, 100, 106, "dispatcher-even", 0, 0)  # a real dispatcher thread
    sampler = ThreadCpuSampler(proc=proc)
    sampler.poll({100: "driver"}, t_ms=1000.0)
    (proc / "100" / "task" / "105" / "comm").write_text("Executor task l\n")
    _counters(proc, 100, 105, 300_000_000, 20_000_000)
    _counters(proc, 100, 106, 5_000_000, 0)
    sampler.poll({100: "driver"}, t_ms=1250.0)
    sampler.close()
    rows = sampler.table().to_pylist()
    # Every row of the task thread, the one written before it was found too.
    assert [r["kind"] for r in rows if r["tid"] == 105] == [TASK, TASK]
    assert {r["kind"] for r in rows if r["tid"] == 106} == {OTHER}
    measured = thread_cpu.from_table(sampler.table())
    assert measured.series[("driver", TASK)].cpu_ms.tolist() == [1.0, 300.0]


def test_the_plugin_sampler_first_seen_under_its_creators_name_is_a_recording_thread(
    tmp_path: Path,
) -> None:
    # The plugin's sampler is started by the thread that starts the application (PySpark's
    # "Thread-3"); a poll between its start and its naming once filed it, and its CPU, as the
    # JVM's other work for the whole run (2026-12-01).
    proc = tmp_path / "proc"
    _thread(proc, 100, 107, "Thread-3", 17_000, 900_000)
    sampler = ThreadCpuSampler(proc=proc)
    sampler.poll({100: "driver"}, t_ms=1000.0)
    (proc / "100" / "task" / "107" / "comm").write_text("perfmodel sampl\n")
    _counters(proc, 100, 107, 70_000_000, 800_000_000)
    sampler.poll({100: "driver"}, t_ms=1250.0)
    sampler.close()
    rows = [r for r in sampler.table().to_pylist() if r["tid"] == 107]
    assert [(r["kind"], r["name"]) for r in rows] == [(RECORDING, "perfmodel sampl")] * 2


def test_table_becomes_summed_cumulative_series_per_executor_and_kind() -> None:
    table = _rows(
        [
            # t, pid, tid, kind, cpu_ms (cumulative per thread), wait_ms
            (1000.0, 1, 1, PY_WORKER, 100.0, 10.0),  # first sight: all it used before
            (1000.0, 2, 2, PY_WORKER, 50.0, 0.0),
            (1250.0, 1, 1, PY_WORKER, 300.0, 30.0),
            (1500.0, 2, 2, PY_WORKER, 200.0, 5.0),
            (1500.0, 3, 3, GC, 40.0, 1.0),
        ]
    )
    measured = thread_cpu.from_table(table)
    assert measured.has_wait
    python = measured.series[("driver", PY_WORKER)]
    assert python.t_ms.tolist() == [1000.0, 1250.0, 1500.0]
    assert python.cpu_ms.tolist() == [150.0, 350.0, 500.0]
    assert python.wait_ms.tolist() == [10.0, 30.0, 35.0]
    assert measured.series[("driver", GC)].cpu_ms.tolist() == [40.0]


def test_a_pool_thread_first_seen_idle_is_a_task_thread_in_older_bundles() -> None:
    # Bundles recorded before Spark 4's idle name was known filed the pool thread that ran
    # every task of a local[1] run as "other": its CPU counted twice (the tasks' own, and
    # background load beside them) and its wait for cores not at all.
    table = _rows([(1000.0, 1, 7, OTHER, 400.0, 30.0), (1000.0, 1, 8, OTHER, 5.0, 0.0)])
    names = pa.array(["Executor task i", "dispatcher-even"], pa.string())
    measured = thread_cpu.from_table(table.set_column(5, "name", names))
    assert measured.series[("driver", TASK)].cpu_ms.tolist() == [400.0]
    assert measured.series[("driver", TASK)].wait_ms.tolist() == [30.0]
    assert measured.series[("driver", OTHER)].cpu_ms.tolist() == [5.0]


def _rows(rows: list[tuple[float, int, int, str, float, float]], executor: str = "driver"):
    t, pid, tid, kind, cpu, wait = zip(*rows, strict=True)
    return pa.table(
        {
            "t_ms": pa.array(t, pa.float64()),
            "pid": pa.array(pid, pa.int32()),
            "tid": pa.array(tid, pa.int32()),
            "kind": pa.array(kind, pa.string()),
            "executor_id": pa.array([executor] * len(t), pa.string()),
            "name": pa.array(["x"] * len(t), pa.string()),
            "cpu_ms": pa.array(cpu, pa.float64()),
            "wait_ms": pa.array(wait, pa.float64()),
        }
    )


def test_share_by_overlap_splits_each_bin_among_the_tasks_running_in_it() -> None:
    edges = np.array([0.0, 100.0, 200.0])
    amount = np.array([100.0, 60.0])
    # Task a runs the whole time, task b only the second bin.
    launch, finish = np.array([0.0, 100.0]), np.array([200.0, 200.0])
    shared = share_by_overlap(edges, amount, launch, finish)
    assert shared.tolist() == pytest.approx([130.0, 30.0])
    weighted = share_by_overlap(edges, amount, launch, finish, np.array([1.0, 2.0]))
    assert weighted.tolist() == pytest.approx([120.0, 40.0])


def _measured(rows: list[tuple[float, int, int, str, float, float]]) -> thread_cpu.ThreadCpu:
    return thread_cpu.from_table(_rows(rows))


def test_python_cpu_goes_to_the_task_that_waits_on_its_worker() -> None:
    # One executor, 0..1000 ms: a PySpark task (its thread accounts for 10% of its run) and a
    # JVM-only task (all of its run) side by side; the Python workers used 800 ms of CPU.
    measured = _measured(
        [(t, 7, 7, PY_WORKER, 0.8 * (t - 0.0), 0.0) for t in np.arange(250.0, 1001.0, 250.0)]
        + [(1000.0, 8, 8, TASK, 500.0, 0.0)]
    )
    tasks = TaskColumns(
        launch_ms=np.array([0.0, 0.0]),
        finish_ms=np.array([1000.0, 1000.0]),
        executor=np.array([0, 0]),
        executor_ids=["driver"],
        group=np.array([0, 1]),
        thread_cpu_ms=np.array([100.0, 900.0]),
        run_ms=np.array([1000.0, 1000.0]),
        unattributed_ms=np.array([900.0, 0.0]),
    )
    python_stage, jvm_stage = stage_thread_cpu(measured, tasks, 2)
    assert python_stage is not None and jvm_stage is not None
    assert python_stage.python_cpu_ms == pytest.approx(800.0, rel=0.01)
    assert jvm_stage.python_cpu_ms < 1.0
    # No waits: the observed run time is the time alone.
    assert python_stage.demand == pytest.approx(0.9, rel=0.01)
    assert jvm_stage.demand == pytest.approx(0.9, rel=0.01)


def test_a_stage_off_the_measured_executors_has_no_measurement() -> None:
    measured = _measured([(1000.0, 7, 7, PY_WORKER, 800.0, 0.0)])
    tasks = TaskColumns(
        launch_ms=np.array([0.0]),
        finish_ms=np.array([1000.0]),
        executor=np.array([1]),
        executor_ids=["driver", "3"],
        group=np.array([0]),
        thread_cpu_ms=np.array([100.0]),
        run_ms=np.array([1000.0]),
        unattributed_ms=np.array([900.0]),
    )
    assert stage_thread_cpu(measured, tasks, 1) == [None]


def test_waiting_for_cores_is_taken_out_of_the_time_alone() -> None:
    # Saturated: the worker ran 600 ms and waited 300 ms of a 1000 ms run; its thread ran 200.
    stage = StageThreadCpu(
        thread_cpu_ms=200.0,
        python_cpu_ms=600.0,
        run_ms=1000.0,
        thread_wait_ms=100.0,
        python_wait_ms=300.0,
        background_ms=50.0,
    )
    assert stage.alone_ms == 700.0
    assert stage.demand == pytest.approx(800.0 / 700.0)
    assert stage.background_cores == pytest.approx(0.05)
    # Never faster than its busier lane's CPU.
    starved = StageThreadCpu(200.0, 600.0, 1000.0, 0.0, 900.0, 0.0)
    assert starved.alone_ms == 600.0


def _bundle_of(log: Path, out: Path) -> Path:
    bundle_write.assemble(out, event_logs=[log])
    return out


def test_old_bundles_load_and_replay_as_before(tmp_path: Path) -> None:
    log = EVENTLOGS / "wordcount.lz4"
    if not log.exists():
        pytest.skip(f"{log} is absent")
    old = _bundle_of(log, tmp_path / "old")
    loaded = build_profile(old)
    assert loaded.profile.thread_cpu is None
    base = baseline_config(loaded.profile, BaselineOverrides(host_cores=2))
    before = compile_workload(loaded.profile, base)
    assert not any("per-thread" in n for n in before.notes)

    # The same run with its Python workers measured busy over every task's run.
    profile = loaded.profile
    table = profile.task_table()
    start, end = float(np.nanmin(table.col("launch_ms"))), float(np.nanmax(table.col("finish_ms")))
    times = np.arange(start, end + 250.0, 250.0)
    rows = [(t, 9, 9, PY_WORKER, 1.5 * (t - start), 0.0) for t in times.tolist()]
    thread_cpu_table = _rows(rows, executor=table.strings_of("executor")[0])
    pq.write_table(thread_cpu_table, old / thread_cpu.THREAD_CPU)
    measured = build_profile(old)
    assert measured.profile.thread_cpu is not None
    after = compile_workload(measured.profile, base)
    assert any("measured per-thread CPU" in n for n in after.notes)
    assert any(
        b.cpu_demand != a.cpu_demand for a, b in zip(before.stages, after.stages, strict=True)
    )


def test_damaged_thread_cpu_table_is_a_bundle_error(tmp_path: Path) -> None:
    (tmp_path / thread_cpu.THREAD_CPU).write_bytes(b"not parquet")
    with pytest.raises(bundle.BundleError):
        thread_cpu.load(tmp_path)
    assert thread_cpu.load(tmp_path / "absent") is None


def test_other_load_shares_the_host_with_the_tasks() -> None:
    # Two tasks of 0.5 cores on two cores: no slowdown alone, 1.5× beside 2 cores of other load.
    assert float(contention_factor(2, 0.5, 2)) == 1.0
    assert float(contention_factor(2, 0.5, 2, 2.0)) == 1.5
    assert float(contention_factor(1, 0.5, 2, 2.0)) == 1.25


def test_jvm_threads_beside_tasks_that_did_not_wait_are_other_load() -> None:
    # One task of 1 core alone on 2 cores, the JVM's GC/JIT using 0.6 cores beside it: the
    # tasks never waited, so the baseline's slowdown must stay 1 (0.6 ≤ the 1 core of room),
    # but a second task will share the host with that 0.6.
    calm = StageThreadCpu(1000.0, 0.0, 1000.0, 0.0, 0.0, background_ms=600.0)
    assert other_load(calm, 1.0, 2.0) == (pytest.approx(0.6), 0.0, pytest.approx(0.6))
    assert float(contention_factor(1, calm.demand, 2, 0.6)) == 1.0
    assert float(contention_factor(2, calm.demand, 2, 0.6)) == pytest.approx(1.3)
    # Two such tasks on 2 cores leave no room: the background is not made up as waiting.
    assert other_load(calm, 2.0, 2.0) == (0.0, 0.0, 0.0)
    # Two tasks on 3 cores: each task's share is half the JVM's 0.6 cores; the host's other
    # load is all of it.
    pair = StageThreadCpu(2000.0, 0.0, 2000.0, 0.0, 0.0, background_ms=600.0)
    assert pair.background_cores == pytest.approx(0.3)
    assert other_load(pair, 2.0, 3.0) == (pytest.approx(0.6), 0.0, pytest.approx(0.6))


def _log_bundle(tmp_path: Path) -> tuple[Path, ApplicationProfile]:
    log = EVENTLOGS / "wordcount.lz4"
    if not log.exists():
        pytest.skip(f"{log} is absent")
    out = _bundle_of(log, tmp_path / "bundle")
    return out, build_profile(out).profile


def _busy_python_rows(profile: ApplicationProfile, cores: float, waiting: float) -> pa.Table:
    """Python workers busy at ``cores`` over the whole run, waiting ``waiting`` cores' worth."""
    table = profile.task_table()
    start, end = float(np.nanmin(table.col("launch_ms"))), float(np.nanmax(table.col("finish_ms")))
    times = np.arange(start, end + 250.0, 250.0).tolist()
    rows = [(t, 9, 9, PY_WORKER, cores * (t - start), waiting * (t - start)) for t in times]
    return _rows(rows, executor=table.strings_of("executor")[0])


def test_tasks_that_waited_for_cores_predict_fewer_slots_faster(tmp_path: Path) -> None:
    """A local[2] run on a host other load kept busy: its tasks waited for cores. Going to one
    slot frees what the second task took; the other load stays."""
    out, profile = _log_bundle(tmp_path)
    base = baseline_config(profile, BaselineOverrides(host_cores=2))
    one_slot = apply_what_if(base, WhatIf(cores=1))

    pq.write_table(_busy_python_rows(profile, 0.6, 0.0), out / thread_cpu.THREAD_CPU)
    calm = compile_workload(build_profile(out).profile, base)
    assert all(w.other_cores == 0.0 for w in calm.stages)
    pq.write_table(_busy_python_rows(profile, 0.6, 1.2), out / thread_cpu.THREAD_CPU)
    busy = compile_workload(build_profile(out).profile, base)
    waited = [w for w in busy.stages if w.other_cores > 0]
    assert waited
    for work in waited:  # the baseline's slowdown is the measured one
        measured = busy.thread_cpu[work.key]
        asked = work.concurrency * work.cpu_demand + work.other_cores
        assert asked / 2 == pytest.approx(measured.slowdown)
    assert any("other load beside the tasks" in n for n in busy.notes)
    # The baseline still replays as observed; one slot is predicted faster than where the
    # host was taken to be free for the run's two tasks.
    assert replay_workload(busy, base, base).predicted_s == pytest.approx(
        replay_workload(calm, base, base).predicted_s, rel=1e-9
    )
    assert replay_workload(busy, base, one_slot).predicted_s < (
        replay_workload(calm, base, one_slot).predicted_s
    )


def test_without_schedstat_the_stat_line_gives_cpu_and_no_wait(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    base = proc / "5" / "task" / "6"
    base.mkdir(parents=True)
    (base / "comm").write_text("python\n")
    # pid (comm with a ') ' in it) state ppid ... utime=fields[13] stime=fields[14]
    (base / "stat").write_text("6 (a) b) S 1 " + " ".join(["0"] * 9) + " 150 50 0 0\n")
    sampler = ThreadCpuSampler(proc=proc)
    sampler.poll({5: "driver"}, t_ms=1.0)
    sampler.close()
    (row,) = sampler.table().to_pylist()
    ticks = thread_cpu._TICKS
    assert row["cpu_ms"] == pytest.approx(200 * 1000 / ticks) and math.isnan(row["wait_ms"])
    entry = thread_sampler.write(tmp_path, sampler, 0.25)
    assert entry["counters"] == "stat" and entry["threads"] == 1
    assert entry["cpu_s_by_kind"] == {OTHER: pytest.approx(200 / ticks, abs=1e-3)}
    assert thread_cpu.load(tmp_path).has_wait is False


def _stat_line(pid: int, nice: int) -> str:
    # pid (comm) state, then fields 4.. : ppid ... utime(14) stime(15) ... priority(18) nice(19)
    return f"{pid} (java) S 1 " + " ".join(["0"] * 9) + f" 10 5 0 0 20 {nice} 1\n"


def test_sampler_reads_the_host_and_each_process_nice_value(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    _thread(proc, 100, 101, "Executor task l", 1_000_000, 0)
    (proc / "100" / "stat").write_text(_stat_line(100, 19))
    host = proc / "stat"
    ticks = thread_cpu._TICKS
    host.write_text(f"cpu  {ticks} {2 * ticks} 0 0 0 0 0 0 0 0\ncpu0 1 1 1 1\n")
    sampler = ThreadCpuSampler(proc=proc)
    sampler.poll({100: "driver"}, t_ms=1000.0)
    with open(host, "r+b") as f:  # another 1.5 s at nice <= 0, in place
        f.write(f"cpu  {int(2.5 * ticks)} {2 * ticks} 0 0 0 0 0 0 0 0\n".encode())
    sampler.poll({100: "driver"}, t_ms=2000.0)
    sampler.close()
    rows = sampler.table().to_pylist()
    task = [r for r in rows if r["kind"] == TASK]
    assert task and all(r["nice"] == 19 for r in task)
    user = [r for r in rows if r["kind"] == thread_cpu.HOST_USER]
    assert [(r["t_ms"], r["cpu_ms"]) for r in user] == [(1000.0, 1000.0), (2000.0, 2500.0)]
    assert len([r for r in rows if r["kind"] == thread_cpu.HOST_NICE]) == 1  # did not move
    measured = thread_cpu.from_table(sampler.table())
    assert measured.app_nice == 19
    higher = measured.higher_priority()
    assert higher is not None and higher.cpu_ms.tolist() == [0.0, 1500.0]
    entry = thread_sampler.write(tmp_path, sampler, 0.25)
    assert entry["threads"] == 1 and set(entry["cpu_s_by_kind"]) == {TASK}


def test_load_of_a_higher_priority_counts_over_each_task() -> None:
    # The application at nice 19; processes at nice <= 0 kept 1.5 cores busy from 0 to 2000 ms.
    table = _rows(
        # Counted since boot: the first row is the baseline.
        [(t, 0, 0, thread_cpu.HOST_USER, 9e6 + 1.5 * t, math.nan) for t in (0.0, 1000.0, 2000.0)]
        + [(2000.0, 9, 9, TASK, 400.0, 100.0)],
    )
    table = table.set_column(
        table.schema.get_field_index("executor_id"),
        "executor_id",
        pa.array(["host"] * 3 + ["driver"]),
    ).append_column("nice", pa.array([0, 0, 0, 19], pa.int8()))
    measured = thread_cpu.from_table(table)
    assert measured.executors() == {"driver"}  # the host's rows are no executor
    tasks = TaskColumns(
        launch_ms=np.array([0.0, 1000.0]),
        finish_ms=np.array([1000.0, 2000.0]),
        executor=np.array([0, 0]),
        executor_ids=["driver"],
        group=np.array([0, 0]),
        thread_cpu_ms=np.array([500.0, 500.0]),
        run_ms=np.array([1000.0, 1000.0]),
        unattributed_ms=np.array([0.0, 0.0]),
    )
    (stage,) = stage_thread_cpu(measured, tasks, 1)
    assert stage is not None and stage.higher_cores == pytest.approx(1.5, rel=0.01)
    # Not niced: the same host load is other load that shares the cores (none taken).
    equal = thread_cpu.from_table(table.set_column(8, "nice", pa.array([0] * 4, pa.int8())))
    (shared,) = stage_thread_cpu(equal, tasks, 1)
    assert shared is not None and shared.higher_ms == 0.0
