"""An aggregation's fallback to sorting, read from stack samples (`dag.fallback_samples`)
and charged per byte spilled in the memory what-if (`simulate.spill_fallback`)."""

from __future__ import annotations

import dataclasses

import pytest

from perfmodel.dag.fallback_samples import (
    MIN_CPU_SAMPLES,
    fallback_shares,
    is_fallback_stack,
    stage_fallback_share,
)
from perfmodel.dag.samples import CallProfile, SampleProfile
from perfmodel.simulate import laws
from perfmodel.simulate.config import WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import replay_workload
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload

TASK = ("org.apache.spark.executor.Executor$TaskRunner.run",)
AGG = "org.apache.spark.sql.execution.aggregate.HashAggregateExec"
FALLBACK = (
    *TASK,
    f"{AGG}$.spillHashMapToSorter",
    "org.apache.spark.sql.execution.UnsafeFixedWidthAggregationMap.destructAndCreateExternalSorter",
    "org.apache.spark.sql.execution.UnsafeKVExternalSorter.<init>",
    "org.apache.spark.util.collection.TimSort.sort",
)
SORT_SPILL = (
    *TASK,
    "org.apache.spark.sql.execution.SortExec.doExecute",
    "org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter.spill",
    "org.apache.spark.util.collection.unsafe.sort.UnsafeSorterSpillWriter.write",
)
HASHING = (
    *TASK,
    "org.apache.spark.sql.execution.UnsafeFixedWidthAggregationMap.getAggregationBuffer",
)


def test_only_an_aggregations_fallback_counts() -> None:
    assert is_fallback_stack(FALLBACK)
    assert is_fallback_stack(
        (*TASK, "org.apache.spark.sql.execution.UnsafeKVExternalSorter$KVSorterIterator.next")
    )
    # A sorter's own spill re-does work it would do in memory anyway; hashing is normal.
    assert not is_fallback_stack(SORT_SPILL)
    assert not is_fallback_stack(HASHING)
    # A class whose name merely ends like one of them does not count.
    assert not is_fallback_stack((*TASK, "com.acme.MyUnsafeKVExternalSorterTest.run"))


def test_share_of_on_cpu_samples_only() -> None:
    profile = CallProfile()
    profile.add(FALLBACK, "java", 30, 600.0)
    profile.add(HASHING, "java", 60, 1200.0)
    profile.add(SORT_SPILL, "java", 10, 200.0)
    # Native and wait samples are not CPU time: neither side of the share counts them.
    profile.add(FALLBACK, "native", 50, 250.0)
    profile.add(HASHING, "wait", 40, 4000.0)
    share = stage_fallback_share(profile)
    assert (share.fallback_samples, share.cpu_samples) == (30, 100)
    assert share.share == pytest.approx(0.3)


def test_stages_with_too_few_samples_are_left_out() -> None:
    few, enough = CallProfile(), CallProfile()
    few.add(FALLBACK, "java", MIN_CPU_SAMPLES - 1, 1.0)
    enough.add(FALLBACK, "java", MIN_CPU_SAMPLES, 1.0)
    samples = SampleProfile(stages={(0, 0): few, (1, 0): enough})
    assert set(fallback_shares(samples)) == {(1, 0)}


def _spilling_workload(share: float):
    gib = 1 << 30
    task = TaskSpec(
        run_ms=2000, cpu_ms=1000, peak_memory=gib // 4, memory_spill=gib // 2, disk_spill=gib // 4
    )
    p = build_synthetic([[StageSpec(0, [task] * 2)]], 1, memory_bytes=gib)
    base = baseline_config(p)
    return p, base, compile_workload(p, base, fallback={(0, 0): share})


def test_measured_fallback_becomes_cpu_per_byte_spilled() -> None:
    _, _, w = _spilling_workload(0.3)
    work = w.stages[0]
    # 30% of 2 × 1000 ms of CPU over 2 × 0.5 GiB spilled.
    assert work.fallback_ns_per_byte == pytest.approx(0.3 * 2000 * 1e6 / (1 << 30))
    assert any("fell back to sorting" in n for n in w.notes)


def test_enough_memory_takes_the_fallback_cpu_away() -> None:
    p, base, measured = _spilling_workload(0.3)
    plain = compile_workload(p, base)
    big = apply_what_if(base, WhatIf(memory_bytes=8 << 30))
    with_fallback = replay_workload(measured, base, big).stages[0].component_s["cpu"]
    without = replay_workload(plain, base, big).stages[0].component_s["cpu"]
    # Each task's 1 s of CPU loses 30% to the fallback on top of the sorter's constant.
    constant_s = laws.SPILL_CPU_NS_PER_BYTE * (1 << 29) / 1e9
    assert without == pytest.approx(2 * (1.0 - constant_s))
    assert with_fallback == pytest.approx(2 * (1.0 - constant_s - 0.3))
    # The baseline still reproduces itself.
    same = replay_workload(measured, base, base)
    assert same.predicted_s == pytest.approx(same.baseline_replay_s)


def test_no_spill_no_fallback() -> None:
    p = build_synthetic([[StageSpec(0, [TaskSpec(run_ms=1000, cpu_ms=1000)])]], 1)
    w = compile_workload(p, baseline_config(p), fallback={(0, 0): 0.5})
    assert w.stages[0].fallback_ns_per_byte == 0.0
    assert not any("fell back" in n for n in w.notes)


def test_the_cpu_floor_loses_the_cpu_the_target_no_longer_spends() -> None:
    _, base, w = _spilling_workload(0.3)
    base = dataclasses.replace(base, local_mode=True)
    w.app_cpu_ms = 20_000.0  # JIT and GC threads beside the tasks: the floor binds
    big = apply_what_if(base, WhatIf(memory_bytes=8 << 30))
    predicted = replay_workload(w, base, big)
    # Each of the two tasks stops spending 30% of its 1 s plus the sorter's constant.
    removed_ms = 2 * (300.0 + laws.SPILL_CPU_NS_PER_BYTE * (1 << 29) / 1e6)
    floor_s = (20_000.0 - removed_ms) / base.host_cores / 1000.0
    assert predicted.predicted_s == pytest.approx(floor_s)
    assert any("spends spilling less" in n for n in predicted.notes)
    # Less memory makes it spill more: the floor rises, never below the baseline's.
    small = apply_what_if(base, WhatIf(memory_bytes=600 << 20))
    assert replay_workload(w, base, small).predicted_s > 20.0 / base.host_cores
