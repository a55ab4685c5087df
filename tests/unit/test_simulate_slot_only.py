"""Slot-only replay on a real event log: the observed durations, re-scheduled.

Uses the project's example log (examples/eventlogs/etl-local2.zstd, a real local[2] run).
"""

from __future__ import annotations

from perfmodel.simulate.config import WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import replay_baseline, slot_only_seconds
from perfmodel.simulate.workload import compile_workload
from perfmodel.spark.load import build_profile
from tests.conftest import EXAMPLE_LOG


def _workload():
    profile = build_profile(EXAMPLE_LOG).profile
    base = baseline_config(profile)
    return base, compile_workload(profile, base)


def test_on_the_baseline_it_is_the_baseline_replay() -> None:
    base, workload = _workload()
    assert base.slots == 2
    expected = replay_baseline(workload, base).line.end_ms / 1000.0
    assert slot_only_seconds(workload, base, base) == expected


def test_more_slots_never_slow_it_and_memory_does_not_matter() -> None:
    base, workload = _workload()
    times = [
        slot_only_seconds(workload, base, apply_what_if(base, WhatIf(cores=n)))
        for n in (1, 2, 4, 8)
    ]
    assert times == sorted(times, reverse=True)
    assert times[0] > times[1]  # one slot serialises the two-task stages
    more_memory = apply_what_if(base, WhatIf(memory_bytes=8 << 30))
    assert slot_only_seconds(workload, base, more_memory) == times[1]
