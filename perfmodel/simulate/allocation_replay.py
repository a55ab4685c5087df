"""The replay on executors that come and go: Spark's allocation policy drives the task slots.

A configuration with dynamic allocation does not have a fixed set of slots: its executors
arrive when Spark's policy asks for them (after the start-up the log measured) and leave
when they idle, and both depend on the backlog the replay itself produces. So the policy
(`perfmodel.simulate.allocation.AllocationManager`) runs inside the replay's event loop:
the loop tells it what Spark's listener would hear (a stage submitted, a task placed on an
executor, the queue drained, a job started or ended), and the policy's own moments (the
backlog timer, idle deadlines, an executor registering or going) are events beside the
driver's milestones. Event-driven throughout: no time stepping; O((tasks + stages) log
tasks) — tasks are placed by a Python loop on a heap of (free time, slot) that also
notes, per executor, when its last task ends.

Which slots a configuration gets (`slot_plan_for`):

- a target with dynamic allocation whose policy or executor size differs from the
  baseline's: the policy (`DynamicPlan`);
- the baseline's own dynamic allocation unchanged: the executors the log shows, arriving
  and leaving when they did (the self-check follows the recorded timeline);
- a static target of a dynamic baseline: its executors are all asked for at the start and
  register as the log's first executors did;
- anything else: the static slots of `perfmodel.simulate.replay.slot_plan`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.simulate.allocation import (
    AllocationCosts,
    AllocationManager,
    Changes,
    ExecutorTimeline,
)
from perfmodel.simulate.allocation_settings import AllocationSettings
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.scheduler import ReplayError, Timeline, milestone_graph, run_schedule
from perfmodel.simulate.workload import (
    JOB_COMPLETE,
    JOB_SUBMIT,
    STAGE_COMPLETE,
    STAGE_READY,
    Workload,
)


@dataclass(frozen=True, slots=True)
class DynamicPlan:
    """Slots that follow the allocation policy (hashable: replays are cached by it)."""

    settings: AllocationSettings
    tasks_per_executor: int
    costs: AllocationCosts
    capacity: int | None = None


SlotPlan = list[tuple[float, float]] | DynamicPlan
"""Static slots as (available from, gone at), or the policy."""


def uses_policy(base: ClusterConfig, target: ClusterConfig) -> bool:
    """Whether ``target``'s executors come from the policy rather than from the log."""
    if target.local_mode or not target.allocation.enabled:
        return False
    if not base.allocation.enabled:
        return True
    return (
        target.allocation != base.allocation
        or target.executor_cores != base.executor_cores
        or target.task_cpus != base.task_cpus
    )


def slot_plan_for(
    workload: Workload, base: ClusterConfig, target: ClusterConfig
) -> SlotPlan | None:
    """The slots of ``target`` where allocation decides them; None: the static slot plan."""
    facts = workload.allocation
    if facts is None or target.local_mode or not workload.executors:
        return None
    per_executor = max(1, target.executor_cores // max(target.task_cpus, 1))
    if uses_policy(base, target):
        return DynamicPlan(target.allocation, per_executor, facts.costs, facts.capacity)
    if base.allocation.enabled and not target.allocation.enabled:
        # Static executors are all asked for at the start.
        # Only the earliest slots, as many as there are tasks, can ever be taken: the plan
        # is bounded by the data, whatever the executor count.
        most = max(1, workload.n_tasks)
        plan: list[tuple[float, float]] = []
        for arrival in sorted(facts.costs.initial_arrival(i) for i in range(target.executors)):
            if len(plan) >= most:
                break
            plan += [(arrival, math.inf)] * min(per_executor, most)
        return plan[:most]
    return None


Durations = Sequence[Sequence[float]] | Sequence[np.ndarray]
"""Per stage, its tasks' durations (ms): lists or float arrays, as `run_schedule` takes."""


def run_plan(workload: Workload, durations: Durations, plan: SlotPlan) -> Timeline:
    """`run_schedule` on static slots, `run_dynamic` on the policy's."""
    return run_plan_with_executors(workload, durations, plan)[0]


def run_plan_with_executors(
    workload: Workload, durations: Durations, plan: SlotPlan
) -> tuple[Timeline, ExecutorTimeline | None]:
    """As `run_plan`, with the policy's executors (None on static slots)."""
    if isinstance(plan, DynamicPlan):
        return run_dynamic(workload, durations, plan)
    return run_schedule(workload, durations, plan), None


class _ReplayBacklog:
    """Tasks waiting and running as the replay has placed them (Spark's listener counts)."""

    __slots__ = ("finishes", "last", "pending")

    def __init__(self) -> None:
        self.pending = 0
        self.finishes: list[float] = []
        """Ends of placed tasks not yet reached (a heap): the running tasks."""
        self.last = -math.inf

    def _catch_up(self, t: float) -> None:
        f = self.finishes
        while f and f[0] <= t:
            self.last = heapq.heappop(f)

    def at(self, t: float) -> tuple[int, int]:
        self._catch_up(t)
        return self.pending, len(self.finishes)

    def next_finish(self, t: float) -> float:
        self._catch_up(t)
        return self.finishes[0] if self.finishes else math.inf

    def last_end(self, t: float) -> float:
        self._catch_up(t)
        return self.last


def run_dynamic(
    workload: Workload,
    durations: Durations,
    plan: DynamicPlan,
    trace: list[tuple[int, int, float, float]] | None = None,
) -> tuple[Timeline, ExecutorTimeline]:
    """Replay ``workload`` with the policy bringing and removing executors.

    Milestones fire as in `perfmodel.simulate.scheduler.run_schedule`; tasks of the
    highest-priority runnable stage take the earliest free slot of a live executor; a task
    started runs to its end (the policy only removes idle executors). At one instant the
    policy acts first, then the driver's milestones, then tasks start (the order
    `perfmodel.simulate.allocation.executor_timeline` hears them in, so the executors this
    replay reports are the policy's answer to its own backlog). ``trace`` gets (stage,
    executor, start, finish) of every task placed, for checks and tools."""
    facts = workload.allocation
    shuffle_of = facts.stage_shuffle if facts else [-1] * len(workload.stages)
    caches_of = facts.stage_caches if facts else [False] * len(workload.stages)
    job_shuffles = facts.job_shuffles if facts else {}
    mgr = AllocationManager(
        plan.settings, plan.tasks_per_executor, plan.costs, capacity=plan.capacity
    )
    # An executor never runs more tasks at once than the workload has: its slots past that
    # count are never taken (exact), and a claim of 10,000 cores sizes nothing.
    per_executor = min(plan.tasks_per_executor, max(1, workload.n_tasks))
    slots: list[tuple[float, int]] = []
    """Heap of (free time, slot id) of registered executors' slots. Executor ``e`` owns
    slot ids ``e * per_executor`` onwards (registration order, as ties are broken); its
    untaken slots are one entry, the next pushed only when one is taken, so the heap holds
    the tasks placed plus one entry per executor, however many slots the executors claim
    (100,000 executors of 10,000 cores are 100,000 entries, not 10^9)."""
    fresh: list[int] = []
    """Per executor, the id of its first slot never taken."""
    arrived_free: list[float] = []
    dead: list[bool] = []
    busy = mgr.busy  # the policy's per-executor "last task ends", updated in place
    backlog = _ReplayBacklog()
    heappush, heappop = heapq.heappush, heapq.heappop

    def apply(changes: Changes) -> None:
        for e, free in changes.arrived:
            while len(dead) <= e:
                dead.append(False)
                fresh.append(len(fresh) * per_executor)
                arrived_free.append(math.inf)
            arrived_free[e] = free
            heappush(slots, (free, fresh[e]))
        for e in changes.killed:
            dead[e] = True

    apply(mgr.start(plan.costs.ready_ms))
    lists = [d.tolist() if isinstance(d, np.ndarray) else list(d) for d in durations]
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
    events: list[tuple[float, int]] = []
    ready: list[tuple[tuple[int, int], int]] = []

    def fire(t: float, m: int) -> None:
        fired[m] = t
        kind = ms[m].kind
        if kind == STAGE_READY:
            s = ms[m].ref
            stage_ready[s] = t
            n = len(lists[s])
            if n:
                mgr.stage_submitted(t, backlog)
                backlog.pending += n
                heappush(ready, (priorities[s], s))
            else:
                heappush(events, (t + tails[s], complete_of[s]))
        elif kind == STAGE_COMPLETE:
            stage_done[ms[m].ref] = t
        elif kind == JOB_SUBMIT:
            mgr.job_started(job_shuffles.get(ms[m].ref, ()))
        elif kind == JOB_COMPLETE:
            mgr.job_ended(t, job_shuffles.get(ms[m].ref, ()))
        for dep in dependents[m]:
            if t > latest[dep]:
                latest[dep] = t
            remaining[dep] -= 1
            if remaining[dep] == 0:
                heappush(events, (latest[dep] + ms[dep].lag_ms, dep))

    for i, m in enumerate(ms):
        if remaining[i] == 0:
            heappush(events, (m.lag_ms, i))
    inf = math.inf
    while True:
        t_ms = events[0][0] if events else inf
        t_mgr = mgr.next_time()
        if ready:
            while slots and dead[slots[0][1] // per_executor]:
                heappop(slots)  # a killed executor's slot retires
            s = ready[0][1]
            r = stage_ready[s]
            head = slots[0][0] if slots else inf
            eff = head if head > r else r
            nxt = t_ms if t_ms < t_mgr else t_mgr
            if nxt <= eff:
                if nxt == inf:
                    raise ReplayError(
                        "no executor is left to run the remaining tasks and the allocation "
                        "policy asks for none"
                    )
                if t_mgr <= t_ms:
                    apply(mgr.step(backlog))
                else:
                    fire(*heappop(events))
                continue
            d = lists[s]
            i0 = next_task[s]
            mark = shuffle_of[s] >= 0 or caches_of[s]
            placed: list[tuple[int, float, float]] | None = [] if trace is not None else None
            i, mx, touched = _place(
                slots,
                d,
                i0,
                r,
                nxt,
                max_finish[s],
                _Slots(per_executor, fresh, arrived_free),
                dead,
                busy,
                backlog.finishes,
                mark,
                placed,
            )
            if trace is not None and placed:
                trace.extend((s, e, st, f) for e, st, f in placed)
            next_task[s] = i
            max_finish[s] = mx
            backlog.pending -= i - i0
            for e in touched:
                mgr.holds_data(e, shuffle_of[s], caches_of[s])
            if backlog.pending == 0:
                mgr.queue_empty()
            if i == len(d):
                heappop(ready)
                heappush(events, (mx + tails[s], complete_of[s]))
        elif events:
            if t_mgr <= t_ms:
                apply(mgr.step(backlog))
            else:
                fire(*heappop(events))
        else:
            break
    end = fired[workload.end_milestone]
    if math.isnan(end):
        raise ReplayError("the application's end was never reached in the replay")
    line = Timeline(
        end_ms=end, stage_ready_ms=stage_ready, stage_complete_ms=stage_done, milestone_ms=fired
    )
    return line, mgr.timeline()


@dataclass(frozen=True, slots=True)
class _Slots:
    """Which executor owns a slot id, and each executor's untaken slots (see `run_dynamic`)."""

    per_executor: int
    fresh: list[int]
    arrived_free: list[float]


def _place(
    h: list[tuple[float, int]],
    d: list[float],
    i: int,
    r: float,
    limit: float,
    mx: float,
    owners: _Slots,
    dead: list[bool],
    busy: list[float],
    finishes: list[float],
    mark: bool,
    placed: list[tuple[int, float, float]] | None = None,
) -> tuple[int, float, set[int]]:
    """Give tasks ``d[i:]`` the earliest free slots of live executors before ``limit``;
    note each executor's last task end, each running task's end, (``mark``) the
    executors that ran a task of this stage and (``placed``) each task's executor, start
    and end."""
    heapreplace, heappop, heappush = heapq.heapreplace, heapq.heappop, heapq.heappush
    touched: set[int] = set()
    n = len(d)
    per, fresh, arrived_free = owners.per_executor, owners.fresh, owners.arrived_free
    while i < n and h:
        st, slot = h[0]
        e = slot // per
        if dead[e]:
            heappop(h)
            continue
        if st < r:
            st = r
        if st >= limit:
            break
        f = st + d[i]
        heapreplace(h, (f, slot))
        if slot == fresh[e]:
            # The executor's next untaken slot becomes visible, free since its arrival.
            fresh[e] = slot + 1
            if fresh[e] < (e + 1) * per:
                heappush(h, (arrived_free[e], fresh[e]))
        heappush(finishes, f)
        if f > busy[e]:
            busy[e] = f
        if mark:
            touched.add(e)
        if placed is not None:
            placed.append((e, st, f))
        if f > mx:
            mx = f
        i += 1
    return i, mx, touched


def allocation_note(timeline: ExecutorTimeline, end_ms: float, plan: DynamicPlan) -> str:
    """What the policy did in a prediction, for the user."""
    s = plan.settings
    cap = f"max {s.max_executors}" if s.bounded else "no max"
    first = min((e.added_ms for e in timeline.executors), default=math.nan)
    return (
        f"dynamic allocation replayed (min {s.min_executors}, {cap}, initial "
        f"{s.initial_executors}, idle timeout {s.idle_timeout_ms / 1000:g} s): "
        f"{len(timeline.executors)} executor(s) started, at most {timeline.peak()} running "
        f"at once, "
        f"the first after {first / 1000:.1f} s; "
        f"{timeline.executor_ms(end_ms) / 1000:.0f} executor-seconds; start-up "
        f"{plan.costs.request_ms / 1000:.1f} s from the request (measured from the log)"
    )


__all__ = [
    "DynamicPlan",
    "SlotPlan",
    "allocation_note",
    "run_dynamic",
    "run_plan",
    "run_plan_with_executors",
    "slot_plan_for",
    "uses_policy",
]
