"""Discrete-event replay of a compiled workload: milestones, a FIFO stage queue, task slots.

Stages become runnable when their prerequisites (the job's submission, parent stages)
have fired and the observed lag has passed; tasks of the highest-priority runnable stage
take the earliest free slot in launch order; a stage completes its observed tail after
its last task. Jobs are submitted the observed driver gap after the milestone they
followed, so driver time between jobs is kept and concurrent jobs overlap as they did.

Speed matters (sweeps replay a profile many times; target ≥ 500k tasks/s): the event heap
holds only milestones (a few per stage); tasks are placed by a tight loop over a list of
floats with `heapq.heapreplace` on a heap of slot free-times (plain floats; (free-time,
gone-at) pairs only when executors leave), with no per-task objects of our own. Where
the C build of that loop (`perfmodel.simulate._placement`, built at install) is present,
slots that never leave are placed by it instead, ~25× faster and with the same numbers
(the same additions on the same values; see `_placement.c`).

Where the profile says which tasks each task read (`StageWork.gates`: a Dask graph, whose
stages all run side by side), stages hold no barrier, so the replay follows the tasks: one
task at a time, of each runnable stage's next, the one that can start first, no earlier
than the ends of the tasks it read and its observed delay after them (`_TaskQueue`). That
loop is Python, about a twentieth of the C loop's speed (`benchmarks/replay_speed.py
--task-inputs`). Where executors leave mid-run, tasks are placed by stage as above, their
inputs not waited for.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.stage_work import Gates
from perfmodel.simulate.workload import STAGE_COMPLETE, STAGE_READY, Milestone, Workload

try:
    from perfmodel.simulate._placement import place as _place_c
except ImportError:  # not built (e.g. a checkout without `pip install -e .`): pure Python
    _place_c = None


class ReplayError(PerfmodelError, RuntimeError):
    """The workload's timeline could not be replayed (a milestone never fired)."""


@dataclass(slots=True)
class Timeline:
    """When things happened in one replay (ms since application start)."""

    end_ms: float
    stage_ready_ms: list[float]
    stage_complete_ms: list[float]
    milestone_ms: list[float]


def milestone_graph(ms: Sequence[Milestone]) -> tuple[list[int], list[list[int]]]:
    """Each milestone's count of prerequisites still to fire and its dependents, the graph
    an event-driven replay walks. A stage's completion has -1: the scheduler fires it when
    the stage's last task ends, not its prerequisites."""
    remaining = [len(m.prereqs) for m in ms]
    dependents: list[list[int]] = [[] for _ in ms]
    for i, m in enumerate(ms):
        if m.kind == STAGE_COMPLETE:
            remaining[i] = -1
            continue
        for p in m.prereqs:
            dependents[p].append(i)
    return remaining, dependents


def run_schedule(
    workload: Workload,
    durations: Sequence[Sequence[float]] | Sequence[np.ndarray],
    slots: int | Sequence[tuple[float, float]],
) -> Timeline:
    """Replay the workload with the given per-stage task durations (lists or float arrays).

    ``slots`` is a count (slots available throughout) or one ``(available_from, gone_at)``
    pair per slot (ms since application start): executors that arrive late or are lost
    bring and take their slots with them. A task started on a slot runs to its end.
    """
    plan = [(0.0, math.inf)] * slots if isinstance(slots, int) else list(slots)
    if not plan:
        raise ValueError("at least one task slot is needed")
    inf = math.inf
    # Slots that never go away need no gone-at time: a heap of plain floats is faster.
    mortal = any(gone < inf for _, gone in plan)
    # Tasks that wait for other tasks' ends (`StageWork.gates`) are placed one by one in
    # Python, which records each end; executors that leave do not keep them waiting.
    gated = not mortal and any(s.gates is not None for s in workload.stages)
    fast = not mortal and not gated and _place_c is not None
    arrays = _ordered_arrays(durations) if fast else None
    if arrays is not None:
        durations = arrays
        slot_free: Sequence = array("d", sorted(p[0] for p in plan))  # sorted: a heap
        place = _place_c
    else:
        durations = [d.tolist() if isinstance(d, np.ndarray) else d for d in durations]
        slot_free = [p if mortal else p[0] for p in plan]
        heapq.heapify(slot_free)
        place = _place_mortal if mortal else _place
    ms = workload.milestones
    n_ms = len(ms)
    n_stages = len(workload.stages)
    remaining, dependents = milestone_graph(ms)
    latest = [0.0] * n_ms
    fired = [math.nan] * n_ms
    stage_ready = [math.nan] * n_stages
    stage_done = [math.nan] * n_stages
    next_task = [0] * n_stages
    max_finish = [0.0] * n_stages
    tails = [s.tail_ms for s in workload.stages]
    priorities = [s.priority for s in workload.stages]
    complete_of = [s.complete_milestone for s in workload.stages]
    ends = [[math.nan] * len(d) for d in durations] if gated else []
    queue = (
        _TaskQueue([_Inputs.of(w.gates) for w in workload.stages], ends, stage_ready, next_task)
        if gated
        else None
    )

    events: list[tuple[float, int]] = []
    ready: list[tuple[tuple[int, int], int]] = []
    heappush, heappop = heapq.heappush, heapq.heappop

    def fire(t: float, m: int) -> None:
        """Record milestone ``m`` at ``t``; release its dependents and runnable stages."""
        fired[m] = t
        kind = ms[m].kind
        if kind == STAGE_READY:
            s = ms[m].ref
            stage_ready[s] = t
            if not len(durations[s]):
                heappush(events, (t + tails[s], complete_of[s]))
            elif queue is not None:
                queue.add(s)
            else:
                heappush(ready, (priorities[s], s))
        elif kind == STAGE_COMPLETE:
            stage_done[ms[m].ref] = t
        for dep in dependents[m]:
            if t > latest[dep]:
                latest[dep] = t
            remaining[dep] -= 1
            if remaining[dep] == 0:
                heappush(events, (latest[dep] + ms[dep].lag_ms, dep))

    for i, m in enumerate(ms):
        if remaining[i] == 0:
            heappush(events, (m.lag_ms, i))
    while True:
        if queue is not None and (pick := queue.next(cast(list[float], slot_free))):
            st, s = pick
            if events and events[0][0] <= st:
                fire(*heappop(events))
                continue
            queue.take()
            k = next_task[s]
            f = st + durations[s][k]
            heapq.heapreplace(cast(list[float], slot_free), f)
            ends[s][k] = f
            max_finish[s] = max(max_finish[s], f)
            next_task[s] = k + 1
            queue.placed(s, k)
            if k + 1 < len(durations[s]):
                queue.add(s)
            else:
                heappush(events, (max_finish[s] + tails[s], complete_of[s]))
            continue
        if ready:
            if not slot_free:
                raise ReplayError("no executor is left to run the remaining tasks")
            s = ready[0][1]
            r = stage_ready[s]
            head = slot_free[0][0] if mortal else slot_free[0]
            eff = head if head > r else r
            if events and events[0][0] <= eff:
                fire(*heappop(events))
                continue
            limit = events[0][0] if events else inf
            d = durations[s]
            i, mx = place(slot_free, d, next_task[s], r, limit, max_finish[s])
            next_task[s] = i
            max_finish[s] = mx
            if i == len(d):
                heappop(ready)
                heappush(events, (mx + tails[s], complete_of[s]))
        elif events:
            fire(*heappop(events))
        else:
            break
    end = fired[workload.end_milestone]
    if math.isnan(end):
        raise ReplayError("the application's end was never reached in the replay")
    return Timeline(
        end_ms=end, stage_ready_ms=stage_ready, stage_complete_ms=stage_done, milestone_ms=fired
    )


def native_placement() -> bool:
    """Whether replays place tasks with the C loop (~25× the pure-Python one's speed)."""
    return _place_c is not None


def _ordered_arrays(
    durations: Sequence[Sequence[float]] | Sequence[np.ndarray],
) -> list[np.ndarray] | None:
    """The durations as contiguous float arrays for the C loop, or None where one is NaN:
    NaN is unordered, so only Python's own heap reproduces what Python's heap does with it."""
    arrays = [np.ascontiguousarray(d, dtype=np.float64) for d in durations]
    # A sum is NaN if a term is (or if +inf meets -inf: then the exact test decides).
    with np.errstate(invalid="ignore", over="ignore"):
        suspect = any(math.isnan(float(a.sum())) for a in arrays)
    return None if suspect and any(np.isnan(a).any() for a in arrays) else arrays


def _place(
    h: list[float], d: list[float], i: int, r: float, limit: float, mx: float
) -> tuple[int, float]:
    """Give tasks ``d[i:]`` the earliest free slots (heap of free times) until ``limit``."""
    heapreplace = heapq.heapreplace
    n = len(d)
    while i < n:
        st = h[0]
        if st < r:
            st = r
        if st > limit:
            break
        f = st + d[i]
        heapreplace(h, f)
        if f > mx:
            mx = f
        i += 1
    return i, mx


@dataclass(frozen=True, slots=True)
class _Inputs:
    """A stage's `Gates` as lists, for the task-by-task replay."""

    ptr: list[int]
    stage: list[int]
    column: list[int]
    lag_ms: list[float]
    launch_ms: list[float]

    @classmethod
    def of(cls, gates: Gates | None) -> _Inputs:
        if gates is None:
            raise ReplayError("a stage without task inputs among stages with them")
        return cls(
            gates.ptr.tolist(),
            gates.stage.tolist(),
            gates.column.tolist(),
            gates.lag_ms.tolist(),
            gates.launch_ms.tolist(),
        )


class _TaskQueue:
    """The next task of each runnable stage, where tasks wait for other tasks (`Gates`): the
    replay places one task at a time, as a worker runs what is ready. Of those tasks, the
    one that can start first on the earliest free slot goes first, the earlier launched in
    the run on a tie. A task can start once its stage is ready, and the tasks it read have
    ended, plus its observed delay after them; one whose inputs are not placed yet waits
    apart until they are. Heaps keep each choice at O(log n): a task that could start by
    the earliest free slot's time moves to the heap ordered by launch, and, as that time
    only grows, never back."""

    def __init__(
        self,
        inputs: list[_Inputs],
        ends: list[list[float]],
        stage_ready: list[float],
        next_task: list[int],
    ) -> None:
        self.inputs = inputs
        self.ends = ends
        self.stage_ready = stage_ready
        self.next_task = next_task
        self.waiting: list[tuple[float, float, int]] = []  # (can start, launched, stage)
        self.startable: list[tuple[float, int]] = []  # (launched, stage): by the head's time
        self.blocked: dict[tuple[int, int], list[int]] = {}  # an unplaced input → stages

    def add(self, s: int) -> None:
        """Stage ``s``'s next task is a candidate."""
        k = self.next_task[s]
        inp = self.inputs[s]
        t = 0.0
        for j in range(inp.ptr[k], inp.ptr[k + 1]):
            e = self.ends[inp.stage[j]][inp.column[j]]
            if e != e:  # NaN: not placed yet
                self.blocked.setdefault((inp.stage[j], inp.column[j]), []).append(s)
                return
            if e > t:
                t = e
        if inp.ptr[k + 1] > inp.ptr[k]:
            t += inp.lag_ms[k]
        heapq.heappush(self.waiting, (max(t, self.stage_ready[s]), inp.launch_ms[k], s))

    def placed(self, s: int, k: int) -> None:
        """Task ``k`` of stage ``s`` is placed: the tasks waiting for it are candidates."""
        for waiting in self.blocked.pop((s, k), ()):
            self.add(waiting)

    def next(self, free: list[float]) -> tuple[float, int] | None:
        """(start, stage) of the task to place next, or None: none can be placed yet."""
        head = free[0]
        while self.waiting and self.waiting[0][0] <= head:
            _, launched, s = heapq.heappop(self.waiting)
            heapq.heappush(self.startable, (launched, s))
        if self.startable:
            return head, self.startable[0][1]
        if self.waiting:
            return self.waiting[0][0], self.waiting[0][2]
        return None

    def take(self) -> None:
        """Remove the candidate `next` chose."""
        if self.startable:
            heapq.heappop(self.startable)
        else:
            heapq.heappop(self.waiting)


def _place_mortal(
    h: list[tuple[float, float]], d: list[float], i: int, r: float, limit: float, mx: float
) -> tuple[int, float]:
    """As `_place`, on (free time, gone at) slots; a slot whose executor is gone retires."""
    heapreplace, heappop = heapq.heapreplace, heapq.heappop
    n = len(d)
    while i < n:
        st, gone = h[0]
        if st < r:
            st = r
        if st > limit:
            break
        if st >= gone:
            heappop(h)
            if not h:
                break
            continue
        f = st + d[i]
        heapreplace(h, (f, gone))
        if f > mx:
            mx = f
        i += 1
    return i, mx
