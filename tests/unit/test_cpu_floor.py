"""The JVM's own threads as work of a fixed amount (`laws.other_load_on_target`) and the
floor a host's cores put under a local-mode prediction (`perfmodel.simulate.cpu_floor`), on
hand-built numbers with known answers and on a real log given measured per-thread CPU."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from perfmodel.profile import thread_cpu
from perfmodel.profile.record import bundle_write
from perfmodel.profile.thread_cpu import HOST, HOST_USER, JIT, PY_DRIVER, RECORDING, TASK
from perfmodel.simulate import cpu_floor
from perfmodel.simulate.config import BaselineOverrides, WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.laws import contention_factor, other_load_on_target
from perfmodel.simulate.replay import replay_workload
from perfmodel.simulate.rescale import all_stage_times
from perfmodel.simulate.workload import compile_workload
from perfmodel.spark.load import build_profile
from tests.thread_cpu_rows import thread_rows

EVENTLOGS = Path(__file__).parents[1] / "data" / "eventlogs"


def test_jvm_work_asks_for_fewer_cores_where_the_stage_takes_longer() -> None:
    # local[2] on 2 cores: two tasks of 0.85 cores, the JIT asking 1.6 cores beside them.
    # One slot keeps 0.85 cores busy instead of 1.7: the stage takes twice as long, and the
    # JIT's fixed work asks for half as many cores while it runs.
    assert float(other_load_on_target(1.6, 1.6, 1.7, 0.85)) == pytest.approx(0.8)
    # So one task alone no longer waits: the JIT fits in the other core.
    assert float(contention_factor(1, 0.85, 2, 0.8)) == 1.0
    assert float(contention_factor(1, 0.85, 2, 1.6)) == pytest.approx(1.225)
    # Only the JVM's share scales; other processes' load is a rate and stays.
    assert float(other_load_on_target(2.0, 1.6, 1.7, 0.85)) == pytest.approx(0.4 + 0.8)
    # A share larger than the whole is the whole.
    assert float(other_load_on_target(1.0, 3.0, 2.0, 1.0)) == pytest.approx(0.5)


def test_jvm_work_is_not_hurried_into_a_shorter_stage() -> None:
    # More busy cores, unchanged, or nothing measured: the baseline's rate is kept.
    assert float(other_load_on_target(0.6, 0.6, 1.0, 2.0)) == pytest.approx(0.6)
    assert float(other_load_on_target(0.6, 0.6, 1.0, 1.0)) == pytest.approx(0.6)
    assert float(other_load_on_target(0.6, 0.6, 0.0, 1.0)) == pytest.approx(0.6)
    assert float(other_load_on_target(0.6, 0.6, 1.0, 0.0)) == pytest.approx(0.6)
    many = other_load_on_target(np.array([1.0, 1.0]), np.array([1.0, 0.0]), 2.0, 1.0)
    assert many.tolist() == pytest.approx([0.5, 1.0])


def test_application_cpu_is_its_own_threads_over_its_run() -> None:
    measured = thread_cpu.from_table(
        thread_rows(
            [
                # A task thread: 500 ms before the run (start-up), then 1 core for 2 s.
                (1000.0, 1, "driver", TASK, 500.0),
                (3000.0, 1, "driver", TASK, 2500.0),
                # The JIT: half a core, polled each second.
                (1000.0, 2, "driver", JIT, 0.0),
                (2000.0, 2, "driver", JIT, 500.0),
                (3000.0, 2, "driver", JIT, 1000.0),
                # The recorders' own threads and the host's counters are not the application.
                (1000.0, 3, "driver", RECORDING, 0.0),
                (3000.0, 3, "driver", RECORDING, 900.0),
                (1000.0, 0, HOST, HOST_USER, 1e9),
                (3000.0, 0, HOST, HOST_USER, 1e9 + 4000.0),
            ]
        )
    )
    # From the first poll on: 2000 of the task thread, 1000 of the JIT.
    assert cpu_floor.application_cpu_ms(measured, 1000.0, 3000.0) == pytest.approx(3000.0)
    # Interpolated within polls: 1.5 s of the run, from 1.5 s to 3 s.
    assert cpu_floor.application_cpu_ms(measured, 1500.0, 3000.0) == pytest.approx(2250.0)
    # A window outside the polls holds nothing.
    assert cpu_floor.application_cpu_ms(measured, 5000.0, 6000.0) == 0.0


def _bundle(tmp_path: Path) -> Path:
    log = EVENTLOGS / "wordcount.lz4"
    if not log.exists():
        pytest.skip(f"{log} is absent")
    out = tmp_path / "bundle"
    bundle_write.assemble(out, event_logs=[log])
    return out


def test_a_prediction_is_never_faster_than_the_hosts_cores_can_do_its_cpu(
    tmp_path: Path,
) -> None:
    out = _bundle(tmp_path)
    profile = build_profile(out).profile
    start, end = float(profile.start_ms), float(profile.end_ms)
    # The Python driver's two threads measured at 1.9 cores over the run (work the stages
    # do not see as theirs). The same run on a host of one core cannot take less than all
    # that CPU on it, whatever the schedule of the tasks says.
    times = np.linspace(start, end, 20).tolist()
    rows = [
        (t, tid, "driver", PY_DRIVER, share * (t - start))
        for t in times
        for tid, share in ((7, 1.0), (8, 0.9))
    ]
    pq.write_table(thread_rows(rows), out / thread_cpu.THREAD_CPU)
    profile = build_profile(out).profile
    base = baseline_config(profile, BaselineOverrides(host_cores=2))
    assert base.local_mode
    workload = compile_workload(profile, base)
    assert workload.app_cpu_ms == pytest.approx(1.9 * (end - start), rel=1e-6)
    more = apply_what_if(base, WhatIf(host_cores=1))
    predicted = replay_workload(workload, base, more)
    floor = cpu_floor.floor_ms(workload.app_cpu_ms, base, more)
    assert floor == pytest.approx(1.9 * (end - start))
    # On one core no task runs beside another: the CPU that co-running added leaves the
    # floor (`laws.co_running_factor`), and nothing else changes it here.
    change = sum(t.cpu_work_change_ms for t in all_stage_times(workload.stages, base, more))
    assert change < 0
    assert predicted.predicted_s == pytest.approx(
        cpu_floor.floor_ms(workload.app_cpu_ms + change, base, more) / 1000.0
    )
    assert any("cannot do that in less than" in n for n in predicted.notes)
    # Twice the core speed halves the floor; outside local mode there is none.
    faster = apply_what_if(base, WhatIf(cpu_speed=2.0))
    on_base = cpu_floor.floor_ms(workload.app_cpu_ms, base, base)
    assert on_base == pytest.approx(floor / 2)  # two cores instead of one
    assert cpu_floor.floor_ms(workload.app_cpu_ms, base, faster) == pytest.approx(on_base / 2)
    cluster = dataclasses.replace(base, local_mode=False)
    assert cpu_floor.floor_ms(workload.app_cpu_ms, base, cluster) == 0.0
    # The baseline itself is not held up (1.9 cores of its 2), nor the what-if without the
    # driver's load.
    assert predicted.baseline_replay_s > on_base / 1000.0
    assert not any("cannot do that" in n for n in replay_workload(workload, base, base).notes)
    idle = [(t, 7, "driver", PY_DRIVER, 0.0) for t in times]
    pq.write_table(thread_rows(idle), out / thread_cpu.THREAD_CPU)
    calm = compile_workload(build_profile(out).profile, base)
    assert replay_workload(calm, base, more).predicted_s < predicted.predicted_s
