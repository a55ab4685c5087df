"""The executors' CPU beside their tasks (JFR's jdk.CPULoad) and what a change of executor
count does with it, on hand-built profiles with known answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from perfmodel.dag.model import ApplicationProfile
from perfmodel.profile import jvm_cpu, sample_dump
from perfmodel.profile.jvm_cpu import JvmCpu, JvmCpuSeries
from perfmodel.simulate import executor_background
from perfmodel.simulate.config import BaselineOverrides, baseline_config
from perfmodel.simulate.replay import replay_baseline, replay_workload
from perfmodel.simulate.rescale import all_stage_times
from perfmodel.simulate.stage_work import CPU
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload


def _profile(n_tasks: int = 8, cpu_ms: float = 1000.0) -> ApplicationProfile:
    """One CPU-bound stage on executor "1": tasks of ``cpu_ms`` CPU each."""
    tasks = [TaskSpec(cpu_ms, cpu_ms=cpu_ms)] * n_tasks
    profile = build_synthetic([[StageSpec(0, tasks)]], 2)
    strings = profile.task_table().columns.strings["executor"]
    strings[:] = ["1" if name == "driver" else name for name in strings]
    return profile


def _flat(executor: str, cores: float, start_ms: float, seconds: int) -> JvmCpuSeries:
    t = start_ms + 1000.0 * np.arange(seconds + 1)
    return JvmCpuSeries(executor, t, np.full(t.size, cores))


def test_background_is_the_jvm_cpu_beyond_its_tasks() -> None:
    profile = _profile()  # 8 tasks × 1 s of CPU on 2 slots: 4 s of wall time
    # The JVM used 3 cores for the 4 s the tasks ran (12 core-s) against 8 core-s of tasks.
    profile.jvm_cpu = JvmCpu({"1": _flat("1", 3.0, 0.0, 4)})
    found = executor_background.estimate(profile, profile.task_table())
    assert found.task_cpu_s == pytest.approx(8.0)
    assert found.background_s == pytest.approx(4.0)
    assert found.competing_s == pytest.approx(4.0)  # flat: every second at the ceiling
    assert found.ratio == pytest.approx(0.5)
    assert "4 core-s of CPU beside their tasks' 8" in found.note()


def test_background_on_idle_cores_does_not_count() -> None:
    profile = _profile()
    # Two seconds at the ceiling (3 cores), two well below it (1 core): only the CPU of the
    # seconds at the ceiling can have taken turns with the tasks.
    cores = np.array([0.0, 3.0, 3.0, 1.0, 1.0])
    series = JvmCpuSeries("1", 1000.0 * np.arange(5), cores)
    assert executor_background.saturated_share(series, 0.0, 4000.0) == pytest.approx(6 / 8)
    profile.jvm_cpu = JvmCpu({"1": series})
    found = executor_background.estimate(profile, profile.task_table())
    assert found.background_s == pytest.approx(0.0)  # 8 core-s used, 8 by tasks
    assert found.ratio == 0.0


def test_the_driver_jvm_is_not_an_executor_cost() -> None:
    # Local mode: the driver runs the tasks, and its CPU beside them is the driver's work.
    profile = build_synthetic([[StageSpec(0, [TaskSpec(1000.0, cpu_ms=1000.0)] * 8)]], 2)
    profile.jvm_cpu = JvmCpu({"driver": _flat("driver", 3.0, 0.0, 4)})
    assert executor_background.estimate(profile, profile.task_table()) is executor_background.NONE


def test_no_series_no_background() -> None:
    profile = _profile()
    assert executor_background.estimate(profile, profile.task_table()) is executor_background.NONE
    # A series of an executor that ran no tasks (a cluster's driver) says nothing either.
    profile.jvm_cpu = JvmCpu({"7": _flat("7", 2.0, 0.0, 4)})
    assert executor_background.estimate(profile, profile.task_table()).ratio == 0.0


def test_more_executors_pay_the_background_again() -> None:
    profile = _profile(n_tasks=12)
    profile.jvm_cpu = JvmCpu({"1": _flat("1", 3.0, 0.0, 6)})  # rho = 6/12
    base = baseline_config(profile, BaselineOverrides(host_cores=2))
    workload = compile_workload(profile, base)
    assert all(w.executor_background == pytest.approx(0.5) for w in workload.stages)
    assert any("executor JVM" in n for n in workload.notes)
    replayed = replay_baseline(workload, base)
    same = replay_workload(workload, base, base, replayed)
    assert same.predicted_s == pytest.approx(same.baseline_replay_s)  # nothing changes
    # Local mode has one JVM; as if the same tasks ran on twice the executors, each its own host.
    target = replace(base, executors=base.executors * 2, hosts=base.hosts * 2)
    with_background = replay_workload(workload, base, target, replayed).predicted_s
    for w in workload.stages:
        w.executor_background = 0.0
    slots_only = replay_workload(
        workload, base, target, replay_baseline(workload, base)
    ).predicted_s
    # Only CPU is in these tasks: twice the executors, each task's CPU × (1 + 0.5·2)/1.5.
    assert with_background == pytest.approx(slots_only * 2.0 / 1.5, rel=1e-6)


def test_reader_keeps_cpu_load_and_host_cpus() -> None:
    lines = [
        "R\tx.jfr",
        "C\t2000000000\t0.20\t0.05",
        "C\t1000000000\t0.10\t0.00",
        "I\thw_threads\t8",
        "I\tjava_arguments\torg.apache.spark.executor.CoarseGrainedExecutorBackend "
        "--executor-id 3 --hostname h1",
        "D\t0\t0",
    ]
    (rec,) = sample_dump.parse_dump(lines, ["x.jfr"])
    assert rec.hw_threads == 8
    assert rec.cpu_load_ms.tolist() == [1000.0, 2000.0]  # sorted by time
    assert rec.cpu_load.tolist() == pytest.approx([0.10, 0.25])
    data = jvm_cpu.table([rec])
    assert data.column("executor_id").to_pylist() == ["3", "3"]
    assert data.column("cores").to_pylist() == pytest.approx([0.8, 2.0])  # share × 8 CPUs
    back = jvm_cpu.from_table(data)
    assert back is not None and back.series["3"].core_seconds() == pytest.approx(2.0)


def test_recordings_without_host_cpus_need_a_fallback() -> None:
    (rec,) = sample_dump.parse_dump(["R\tx.jfr", "C\t1000000000\t0.5\t0.0", "D\t0\t0"], ["x.jfr"])
    assert rec.hw_threads is None
    assert jvm_cpu.table([rec]).num_rows == 0  # unknown scale: left out, not guessed
    assert jvm_cpu.unscaled([rec]) == ["x.jfr"]  # and named, for the manifest's warnings
    assert jvm_cpu.unscaled([rec], fallback_cpus=2) == []
    assert jvm_cpu.table([rec], fallback_cpus=2).column("cores").to_pylist() == [1.0]


def test_damaged_table_is_a_bundle_error(tmp_path: Path) -> None:
    from perfmodel.profile.bundle import BundleError

    (tmp_path / jvm_cpu.JVM_CPU).write_bytes(b"not parquet")
    with pytest.raises(BundleError, match="damaged"):
        jvm_cpu.load(tmp_path)
    assert jvm_cpu.load(tmp_path / "absent") is None


def test_an_executors_set_up_is_not_stretched_by_the_others_background() -> None:
    """Two one-core executors, each of whose first task paid 4 s of set-up (class loading,
    cold code) beside 1 s of the work every task does; ρ = 1. On 8 executors each of the
    first tasks pays that set-up once, on its own executor: the background of more
    executors stretches every task's 1 s of work by (1 + 1·4)/(1 + 1) = 2.5, not the set-up
    (measured on the namespace cluster: first tasks of 15.2-15.3 s on 2 executors, 12.9-15.8 s
    on 8)."""
    tasks = [TaskSpec(5000.0, cpu_ms=5000.0)] * 2 + [TaskSpec(1000.0, cpu_ms=1000.0)] * 18
    profile = build_synthetic([[StageSpec(0, tasks)]], 1)
    base = replace(baseline_config(profile), executors=2, executor_cores=1, hosts=2, host_cores=1)
    (work,) = compile_workload(profile, base).stages
    setup = np.zeros_like(work.components)
    setup[CPU, :2] = 4000.0
    work.setup, work.setup_executors = setup, 2
    target = replace(base, executors=8, hosts=8)

    def durations(rho: float) -> np.ndarray:
        work.executor_background = rho
        (times,) = all_stage_times([work], base, target)
        return np.asarray(times.durations)

    without, with_background = durations(0.0), durations(1.0)
    added = with_background - without
    # Eight first tasks, one per executor the target keeps busy, each with the set-up; what
    # the background adds is the same 1.5 × (a task's 1 s of work, as scaled) for every task.
    assert without[:8] == pytest.approx([without[0]] * 8)
    assert without[0] == pytest.approx(5.0 * without[-1])
    assert added == pytest.approx([added[-1]] * 20)
    assert added[-1] == pytest.approx(1.5 * without[-1], rel=1e-6)
