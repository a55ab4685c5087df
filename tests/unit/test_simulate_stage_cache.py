"""Shared stage times and timelines give every prediction's numbers exactly (bit for bit).

A search replays one workload on many configurations and shares stage times (and whole
timelines) between configurations whose inputs are equal, ignoring factors that only
multiply zeros and the memory of stages that cannot spill with it. These tests predict
many configurations through one shared baseline replay and each through a fresh one with
no cache, and compare every float, on a hand-built profile that spills and on real logs.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from perfmodel.simulate.config import ClusterConfig, baseline_config
from perfmodel.simulate.replay import (
    BaselineReplay,
    Prediction,
    replay_baseline,
    replay_workload,
)
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import Workload, compile_workload
from tests.conftest import SHARED_EVENTLOGS

GIB = 1 << 30


def _variants(base: ClusterConfig) -> list[ClusterConfig]:
    """Configurations that share stage times in many ways: node counts of one layout,
    memory above and below the baseline, other disk and network bandwidths, repeats."""
    out: list[ClusterConfig] = []
    for hosts in (1, 2, 3, 5):
        for memory in (base.memory_bytes // 4, base.memory_bytes, base.memory_bytes * 3, 64 * GIB):
            for disk in (base.disk_bw, base.disk_bw * 2):
                for net in (base.net_bw, base.net_bw / 2):
                    out.append(
                        dataclasses.replace(
                            base,
                            executors=2 * hosts,
                            executor_cores=2,
                            hosts=hosts,
                            host_cores=4,
                            memory_bytes=memory,
                            disk_bw=disk,
                            net_bw=net,
                            local_mode=False,
                        )
                    )
    return out + out[:7]


def _bits(p: Prediction) -> list[bytes]:
    floats = [p.predicted_s, p.baseline_replay_s]
    for s in p.stages:
        floats += [s.predicted_s, s.baseline_s]
    out = [np.array(floats, dtype=np.float64).tobytes(), p.bottleneck.encode()]
    out += [s.component_ms.tobytes() + s.bottleneck.encode() for s in p.stages]
    return out


def _assert_shared_equals_fresh(workload: Workload, base: ClusterConfig) -> None:
    shared = replay_baseline(workload, base)
    for target in _variants(base):
        fresh = replay_baseline(workload, base)
        uncached = BaselineReplay(fresh.times, fresh.line, stage_cache=None)
        got = replay_workload(workload, base, target, shared)
        want = replay_workload(workload, base, target, uncached)
        assert _bits(got) == _bits(want), target
    assert shared.stage_cache is not None
    assert shared.timelines, "no timeline was shared: the test would not test sharing"


def test_spilling_profile_predicts_identically() -> None:
    spilling = TaskSpec(
        run_ms=900,
        cpu_ms=500,
        gc_ms=40,
        shuffle_write_ms=100,
        peak_memory=400 << 20,
        memory_spill=300 << 20,
        disk_spill=120 << 20,
    )
    reading = TaskSpec(run_ms=700, cpu_ms=300, fetch_wait_ms=250, peak_memory=200 << 20)
    calm = TaskSpec(run_ms=300, cpu_ms=280)
    jobs = [
        [StageSpec(0, [spilling] * 9 + [calm] * 5), StageSpec(1, [reading] * 11, [0])],
        [StageSpec(2, [calm] * 13)],
    ]
    profile = build_synthetic(jobs, 4, driver_gap_ms=80, memory_bytes=GIB)
    base = baseline_config(profile)
    _assert_shared_equals_fresh(compile_workload(profile, base), base)


def test_stage_without_cpu_that_starts_spilling_predicts_identically() -> None:
    # No CPU time at all (its CPU factor multiplies only zeros), but with less memory it
    # spills and spilling takes CPU: the factor matters, and the shared times must say so.
    idle = TaskSpec(run_ms=1000, cpu_ms=0, peak_memory=GIB // 4)
    profile = build_synthetic([[StageSpec(0, [idle] * 4)]], 1, memory_bytes=4 * GIB)
    base = baseline_config(profile)
    workload = compile_workload(profile, base)
    stage = workload.stages[0]
    components = np.zeros_like(stage.components)
    components[-1] = 1000.0  # all of it `other`
    workload.stages[0] = dataclasses.replace(stage, components=components)
    shared = replay_baseline(workload, base)
    small = dataclasses.replace(base, memory_bytes=GIB // 2)
    for target in (small, dataclasses.replace(small, cpu_speed=0.25)):
        fresh = replay_baseline(workload, base)
        uncached = BaselineReplay(fresh.times, fresh.line, stage_cache=None)
        got = replay_workload(workload, base, target, shared)
        want = replay_workload(workload, base, target, uncached)
        assert _bits(got) == _bits(want), target


@pytest.mark.parametrize(
    "log", ["spark2-eventlog.zstd", "eventlog_4nodes_8cores_dynamic_alloc.zstd"]
)
def test_real_log_predicts_identically(log: str) -> None:
    import perfmodel

    path = SHARED_EVENTLOGS / log
    if not path.exists():
        pytest.skip(f"shared event log {path} not found (../shared is absent)")
    analysis = perfmodel.load(path)
    base = analysis.baseline
    if not math.isfinite(base.disk_bw) or not math.isfinite(base.net_bw):
        pytest.skip("the baseline has no finite bandwidths to vary")
    _assert_shared_equals_fresh(analysis.workload, base)
