"""The scheduler and the laws together, on hand-built DAGs with known answers."""

import pytest

from perfmodel.simulate import laws
from perfmodel.simulate.config import WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import replay, replay_workload
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload

CPU_TASK = TaskSpec(run_ms=1000, cpu_ms=1000)
IO_TASK = TaskSpec(run_ms=1000, cpu_ms=0, shuffle_write_ms=1000)


def test_baseline_reproduces_itself() -> None:
    p = build_synthetic([[StageSpec(0, [CPU_TASK] * 7)]], 3, driver_gap_ms=250)
    r = replay(p)
    assert r.observed_s == pytest.approx(p.duration_ms / 1000)
    assert r.baseline_replay_s == pytest.approx(r.observed_s)
    assert r.model_error == pytest.approx(0.0)
    assert r.predicted_s == pytest.approx(r.observed_s)


def test_eight_equal_tasks_on_two_then_four_slots() -> None:
    p = build_synthetic([[StageSpec(0, [CPU_TASK] * 8)]], 2)
    assert replay(p).predicted_s == pytest.approx(4.0)
    assert replay(p, WhatIf(cores=4)).predicted_s == pytest.approx(2.0)
    assert replay(p, WhatIf(cores=8)).predicted_s == pytest.approx(1.0)
    # Fewer slots than tasks per round: 8 tasks on 3 slots take 3 rounds.
    assert replay(p, WhatIf(cores=3)).predicted_s == pytest.approx(3.0)


def test_tasks_are_rescheduled_not_scaled() -> None:
    # One long task and seven short ones: more slots cannot beat the long task.
    tasks = [TaskSpec(4000, cpu_ms=4000)] + [TaskSpec(500, cpu_ms=500)] * 7
    p = build_synthetic([[StageSpec(0, tasks)]], 1)
    assert replay(p).predicted_s == pytest.approx(7.5)
    assert replay(p, WhatIf(cores=8)).predicted_s == pytest.approx(4.0)


def test_chain_of_stages_with_driver_gaps() -> None:
    jobs = [
        [StageSpec(0, [CPU_TASK] * 4), StageSpec(1, [TaskSpec(500, cpu_ms=500)] * 4, [0])],
        [StageSpec(2, [CPU_TASK] * 2)],
    ]
    p = build_synthetic(jobs, 2, driver_gap_ms=300)
    # Observed: gap .3 + 2 rounds + 2 rounds of .5 + gap .3 + 1 round = 4.6 s.
    assert p.duration_ms == pytest.approx(4600)
    r = replay(p, WhatIf(cores=4))
    # Driver gaps kept: .3 + 1 + .5 + .3 + 1 = 3.1 s.
    assert r.predicted_s == pytest.approx(3.1)
    by_id = {s.stage_id: s for s in r.stages}
    assert by_id[0].predicted_s == pytest.approx(1.0)
    assert by_id[1].predicted_s == pytest.approx(0.5)


def test_parallel_branches_overlap() -> None:
    # Stages 0 and 1 are independent; stage 2 needs both. With 4 slots and 2 tasks each,
    # the two branches run at the same time.
    jobs = [
        [
            StageSpec(0, [CPU_TASK] * 2),
            StageSpec(1, [CPU_TASK] * 2),
            StageSpec(2, [CPU_TASK], [0, 1]),
        ]
    ]
    p = build_synthetic(jobs, 2)
    r = replay(p, WhatIf(cores=4))
    assert r.predicted_s == pytest.approx(2.0)


def test_io_bound_stage_does_not_speed_up_with_cores() -> None:
    p = build_synthetic([[StageSpec(0, [IO_TASK] * 8)]], 2)
    base = replay(p).predicted_s
    more = replay(p, WhatIf(cores=8)).predicted_s
    assert more == pytest.approx(base, rel=0.02)
    assert replay(p, WhatIf(cores=8)).bottleneck == "disk"
    # But a disk twice as fast halves it.
    assert replay(p, WhatIf(disk_factor=2.0)).predicted_s == pytest.approx(base / 2, rel=0.02)


def test_slots_are_not_cores() -> None:
    # local[1] on a host with 2 cores, tasks keeping 1.5 cores busy (0.5 unattributed
    # Python-side CPU overlapped is modelled via the measured/unattributed split: here
    # all run time is CPU, demand 1.0); 4 slots on 2 cores cannot run faster than 2.
    p = build_synthetic([[StageSpec(0, [CPU_TASK] * 8)]], 1)
    base = baseline_config(p)
    assert base.host_cores_assumed
    from perfmodel.simulate.config import BaselineOverrides

    known = baseline_config(p, BaselineOverrides(host_cores=2))
    r2 = replay(p, WhatIf(cores=2), baseline=known)
    r4 = replay(p, WhatIf(cores=4), baseline=known)
    assert r2.predicted_s == pytest.approx(4.0)
    # 4 busy tasks on 2 cores: each takes twice as long, so no gain over 2 slots.
    assert r4.predicted_s == pytest.approx(4.0)
    # Without knowing the host, slots are assumed backed by cores.
    assert replay(p, WhatIf(cores=4)).predicted_s == pytest.approx(2.0)


def test_faster_cpu_scales_cpu_time_only() -> None:
    half = TaskSpec(run_ms=1000, cpu_ms=500, shuffle_write_ms=500)
    p = build_synthetic([[StageSpec(0, [half] * 4)]], 4)
    assert replay(p, WhatIf(cpu_speed=2.0)).predicted_s == pytest.approx(0.75)


def test_more_memory_removes_spill_then_stays_flat() -> None:
    gib = 1 << 30
    spilling = TaskSpec(
        run_ms=2000, cpu_ms=1000, peak_memory=gib // 4, memory_spill=gib // 2, disk_spill=gib // 4
    )
    p = build_synthetic([[StageSpec(0, [spilling])]], 1, memory_bytes=gib)
    times = [replay(p, WhatIf(memory_bytes=m * gib)).predicted_s for m in (1, 2, 4, 8)]
    assert times[0] == pytest.approx(2.0)
    assert times[0] > times[1] > times[2]
    assert times[2] == pytest.approx(times[3])  # the working set fits: flat
    # Spill I/O gone, and the CPU spent spilling (serialising, merging) with it.
    spilling_cpu_s = laws.SPILL_CPU_NS_PER_BYTE * (gib // 2) / 1e9
    assert times[3] == pytest.approx(1.0 - spilling_cpu_s)


def test_less_memory_adds_spilling_cpu() -> None:
    gib = 1 << 30
    fits = TaskSpec(run_ms=1000, cpu_ms=1000, peak_memory=gib // 4)
    p = build_synthetic([[StageSpec(0, [fits])]], 1, memory_bytes=4 * gib)
    small = replay(p, WhatIf(memory_bytes=gib // 2)).stages[0].component_s
    assert small["spill"] > 0.0
    # It now spills, and spilling is CPU in the task thread as well as I/O.
    assert small["cpu"] > 1.0
    assert replay(p, WhatIf(memory_bytes=8 * gib)).stages[0].component_s["cpu"] == 1.0


def test_compiled_workload_replays_many_configs() -> None:
    p = build_synthetic([[StageSpec(0, [CPU_TASK] * 8)]], 2)
    base = baseline_config(p)
    w = compile_workload(p, base)
    assert w.n_tasks == 8
    results = [
        replay_workload(w, base, apply_what_if(base, WhatIf(cores=c))).predicted_s
        for c in (1, 2, 4, 8)
    ]
    assert results == pytest.approx([8.0, 4.0, 2.0, 1.0])
