"""Stage times shared between the configurations of one workload (a search's many replays).

A stage's task times are a function of a few numbers (its factors, its expected
concurrency, the memory per task); many configurations share them, and two replays whose
stages all share them and whose slots are equal share the timeline too
(`perfmodel.simulate.replay.BaselineReplay.schedule`).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perfmodel.simulate import laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.rescale import StageTimes, base_totals, working_set_of
from perfmodel.simulate.stage_work import CPU, CPU_OTHER, DISK, GC, NETWORK, SPILL, StageWork

CACHE_REPLAYS = 16
"""`StageTimesCache` holds about this many replays' worth of task durations."""


@dataclass(slots=True)
class StageTimesCache:
    """Stage times already computed for one workload and baseline, by what they depend on.

    A stage's times are a function of its factors (CPU, GC, disk, network), its expected
    concurrency and the executor memory per task; many configurations share them (a
    catalog's node counts of one VM type and layout, where the stage has more tasks than
    slots), so a search computes each once. The same arrays come back (read-only), so
    the numbers are the ones a fresh computation gives. Least recently used entries go
    once the cache holds more than ``budget`` floats.
    """

    budget: int
    base: ClusterConfig | None = None
    totals: list[tuple[float, float]] = field(default_factory=list)
    entries: OrderedDict[tuple[object, ...], StageTimes] = field(default_factory=OrderedDict)
    held: int = 0
    generation: int = 0
    """Counts the fresh starts, so that what was derived from older entries can tell."""
    working_sets: list[np.ndarray] = field(default_factory=list)
    """Per stage, `perfmodel.simulate.rescale.working_set` (the same every time)."""
    idle: list[tuple[bool, bool, bool, bool, bool]] = field(default_factory=list)
    """Per stage: whether its CPU, GC, network and disk rows are all zero (then their
    factors cannot change its times), and whether it never spilled."""

    @classmethod
    def for_works(cls, works: Sequence[StageWork]) -> StageTimesCache:
        return cls(budget=CACHE_REPLAYS * sum(w.n_tasks for w in works))

    def prepare(self, works: Sequence[StageWork], base: ClusterConfig) -> None:
        """Start afresh when asked about another baseline (or other stages)."""
        if self.base != base or len(self.totals) != len(works):
            self.base = base
            self.totals = [base_totals(w) for w in works]
            self.working_sets, self.idle = _working_sets_and_idle_rows(works)
            self.entries.clear()
            self.held = 0
            self.generation += 1

    def key(
        self, i: int, work: StageWork, new: ClusterConfig, k0: float, k1: float, f: list[float]
    ) -> tuple[object, ...]:
        """Everything stage ``i``'s times depend on besides the stage and the baseline:
        ``f`` = (cpu, gc, disk, network) factors, less those that multiply only zeros, and
        the memory per task, unless the stage cannot spill with it."""
        cpu_idle, gc_idle, net_idle, disk_idle, never_spilled = self.idle[i]
        cpu, gc, disk, net = f
        assert self.base is not None
        if never_spilled and _spill_free(self.base, new, k0, k1, disk):
            spill: tuple[float, float] | None = None
            disk = _unused(disk, disk_idle)
        else:
            spill = (float(new.memory_bytes), float(new.executors_per_host))
        return (
            i,
            # Idle CPU rows still take the spilling CPU a new overflow adds (`_spill_ms`).
            _unused(cpu, cpu_idle and spill is None),
            _unused(gc, gc_idle),
            disk,
            _unused(net, net_idle),
            k1,
            spill,
        )

    @staticmethod
    def spill_free(key: tuple[object, ...] | None) -> bool:
        """Whether the stage of ``key`` spills nothing (+0 for every task; `_spill_free`)."""
        return key is not None and key[-1] is None

    def get(self, key: tuple[object, ...]) -> StageTimes | None:
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
        return hit

    def put(self, key: tuple[object, ...], times: StageTimes) -> None:
        times.durations.flags.writeable = False
        times.component_ms.flags.writeable = False
        self.entries[key] = times
        self.held += times.durations.size
        while self.held > self.budget and len(self.entries) > 1:
            _, old = self.entries.popitem(last=False)
            self.held -= old.durations.size


def _working_sets_and_idle_rows(
    works: Sequence[StageWork],
) -> tuple[list[np.ndarray], list[tuple[bool, bool, bool, bool, bool]]]:
    """Every stage's `working_set`, and whether its CPU, GC, network and disk rows are all
    zero and whether it never spilled (its working set finite), from the tasks of all
    stages at once.

    A log of many small stages (thousands of stages of two tasks) paid a dozen numpy calls
    per stage here, most of a what-if replay's preparation; the same element-wise values
    and per-stage "any" come from one pass over the stages' tasks laid end to end.
    """
    if not works:
        return [], []
    sizes = np.fromiter((w.components.shape[1] for w in works), np.int64, len(works))
    c = np.concatenate([w.components for w in works], axis=1)
    spilled = np.concatenate([w.memory_spill for w in works])
    ws = working_set_of(
        np.concatenate([w.peak_memory for w in works]),
        spilled,
        np.concatenate([w.read_bytes for w in works]),
    )
    ends = np.cumsum(sizes)
    sets = np.split(ws, ends[:-1])

    rows = np.stack(
        [
            (c[CPU] != 0) | (c[CPU_OTHER] != 0),
            c[GC] != 0,
            c[NETWORK] != 0,
            c[DISK] != 0,
            (c[SPILL] != 0) | (spilled != 0) | np.signbit(c[SPILL]) | ~np.isfinite(ws),
        ]
    )
    # Per stage: does any of its tasks have the row set? (A stage without tasks has none;
    # reduceat would read another stage's task for it.)
    has_tasks = sizes > 0
    busy = np.zeros((len(rows), len(works)), dtype=bool)
    busy[:, has_tasks] = np.logical_or.reduceat(rows, (ends - sizes)[has_tasks], axis=1)
    idle = list(zip(*(~busy).tolist(), strict=True))
    return sets, idle


def _unused(factor: float, idle: bool) -> float | None:
    """None for a factor that only multiplies zeros (a positive finite factor keeps them +0)."""
    return None if idle and 0.0 < factor < math.inf else factor


def _spill_free(
    base: ClusterConfig, new: ClusterConfig, k0: float, k1: float, disk_f: float
) -> bool:
    """Whether `_spill_ms` × ``disk_f`` is +0 for every task of a stage that never spilled,
    whatever the memory: its baseline overflow is ≤ 0, and with at least the baseline's
    memory per task (``a1 ≥ a0``) so is the new one (scaling by ``a1 / a0 ≥ 1`` rounds up
    from ``a0_eff ≥ ws``), so each task's spill is 0 × a finite rate × a finite factor (and
    its spilling CPU, 0 × `laws.SPILL_CPU_NS_PER_BYTE`, does not change)."""
    if not (0.0 < disk_f < math.inf and 0.0 < base.disk_bw < math.inf and math.isfinite(k0)):
        return False
    if base.memory_bytes == new.memory_bytes and k0 == k1:
        return True
    a0 = laws.usable_memory(base.memory_bytes) / max(1.0, k0 / base.executors_per_host)
    a1 = laws.usable_memory(new.memory_bytes) / max(1.0, k1 / new.executors_per_host)
    return a0 > 0 and a1 >= a0
