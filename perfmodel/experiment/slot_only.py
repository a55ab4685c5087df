"""Slot-only replay: the observed task durations, re-scheduled on another number of slots.

This is what Sparklens does to answer "what if I had N executors": every task keeps the
duration it had, only the slots change. It ignores contention for cores and disks, memory
and spill, and faster or slower resources — exactly what perfmodel's resource laws add —
so reporting both on the same pairs shows what the resource model is worth instead of
claiming it. The same scheduler and milestone graph are used, so the two differ only in
the task durations they schedule.
"""

from __future__ import annotations

from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.replay import slot_plan
from perfmodel.simulate.scheduler import run_schedule
from perfmodel.simulate.workload import Workload


def slot_only_seconds(workload: Workload, base: ClusterConfig, target: ClusterConfig) -> float:
    """Application runtime (s) with every task as long as observed, on ``target``'s slots."""
    durations = [w.components.sum(axis=0).tolist() for w in workload.stages]
    line = run_schedule(workload, durations, slot_plan(workload, base, target))
    return line.end_ms / 1000.0
