"""Spark's dynamic allocation policy, replayable: when executors are asked for, come and go.

With ``spark.dynamicAllocation.enabled`` the executors an application runs on are not a
given but an outcome: Spark's ExecutorAllocationManager asks the cluster manager for more
when tasks wait and gives executors back when they idle, and how fast it does either is set
by a handful of settings. A what-if on ``maxExecutors`` or on the executor size changes
*when* executors arrive, not only how many there are, so the replay has to run the policy
itself. This module is that policy, as data and a deterministic state machine whose clock
is passed in:

- `AllocationSettings` (`perfmodel.simulate.allocation_settings`): the settings it runs
  with, read from the log with Spark's defaults, each with its source;
- `AllocationManager`: Spark's rules (ExecutorAllocationManager and its ExecutorMonitor,
  Spark 3.x/4.x): the target starts at ``initialExecutors``; a stage submitted starts the
  backlog timer (``schedulerBacklogTimeout``), and each round that finds tasks still
  waiting (every ``sustainedSchedulerBacklogTimeout``) raises the target by 1, 2, 4, ...
  executors, never past ``maxExecutors`` nor past ``ceil((pending + running) ×
  executorAllocationRatio ÷ tasks per executor)``; when fewer are needed the target drops
  (to no less than ``minExecutors``). An executor idle for ``executorIdleTimeout`` (or
  ``cachedExecutorIdleTimeout`` when it caches blocks, ``shuffleTracking.timeout`` when it
  holds shuffle files and shuffle tracking is on) is killed, unless that would leave fewer
  than the target or ``minExecutors``; one holding shuffle files a running job still
  needs is never killed. Decisions fall on Spark's 100 ms polling ticks.
- `executor_timeline`: the policy as a pure function of a backlog over time (stages
  submitted, tasks started on executors and ended) → `ExecutorTimeline`, for hand-built
  backlogs and for reading back what Spark asked for in a real log.

The replay drives the same `AllocationManager` with the tasks it places
(`perfmodel.simulate.allocation_replay`). What the cluster manager adds — how long an
executor takes to start, to get its first task, to go once killed — is measured from the
log (`perfmodel.simulate.allocation_costs`), never a constant.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from perfmodel.simulate.allocation_settings import INT_MAX, AllocationError, AllocationSettings

POLL_MS = 100.0
"""Spark's ExecutorAllocationManager runs its schedule() every 100 ms (fixed delay)."""
INF = math.inf


# ---------------------------------------------------------------------------------------------
# Costs the cluster manager adds, and the policy's output


@dataclass(frozen=True, slots=True)
class AllocationCosts:
    """What the cluster manager adds to the policy's decisions, measured from a log
    (`perfmodel.simulate.allocation_costs`); all ms."""

    request_ms: float = 0.0
    """From a request to the executor's registration (container or JVM start-up)."""
    ready_ms: float = 0.0
    """When the driver first asks for executors (ms since the application's start): its
    allocation manager starts once the driver has registered its own block manager."""
    initial_ms: tuple[float, ...] = ()
    """When the executors asked for at the driver's start registered, in order (ms since
    the application's start); any beyond them take the last one's time."""
    first_task_ms: float = 0.0
    """From an executor's registration to its first task when tasks were waiting."""
    kill_ms: float = 0.0
    """From the decision to kill an idle executor to its removal."""
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def initial_arrival(self, k: int) -> float:
        """When the ``k``-th executor asked for at the start registers (ms since start)."""
        if not self.initial_ms:
            return self.ready_ms + self.request_ms
        return self.initial_ms[min(k, len(self.initial_ms) - 1)]


@dataclass(frozen=True, slots=True)
class ExecutorSpan:
    """One executor's life under the policy (ms since the application's start; NaN:
    not known, inf: not within the replay)."""

    requested_ms: float
    added_ms: float
    kill_ms: float = INF
    """When the policy decided to remove it (idle)."""
    removed_ms: float = INF


@dataclass(slots=True)
class ExecutorTimeline:
    """The executors a policy brought and let go, with its target over time."""

    executors: list[ExecutorSpan]
    targets: list[tuple[float, int]]
    """(time, target) each time the target changed, from the start."""
    requests: list[tuple[float, int]]
    """(time, executors asked for) each time the policy asked the cluster manager for more."""
    kill_latency_ms: list[float] = field(default_factory=list)
    """Observed mode: kill decision → logged removal of each executor the policy killed."""

    def alive_at(self, t: float) -> int:
        """Executors registered and not yet removed at ``t``."""
        return sum(1 for e in self.executors if e.added_ms <= t < e.removed_ms)

    def peak(self, running: bool = True) -> int:
        """The most executors at once (an O(E log E) sweep): able to run tasks (registered,
        not yet killed), or with ``running=False`` registered and not yet removed (what
        the cluster holds: a killed executor takes a while to go)."""
        ends = [min(e.kill_ms, e.removed_ms) if running else e.removed_ms for e in self.executors]
        points = sorted(
            [(e.added_ms, 1) for e in self.executors]
            + [(end, -1) for end in ends if math.isfinite(end)]
        )
        alive = best = 0
        for _, d in points:
            alive += d
            best = max(best, alive)
        return best

    def executor_ms(self, end_ms: float) -> float:
        """Executor-milliseconds held up to ``end_ms`` (what a cluster bills)."""
        return sum(
            max(0.0, min(e.removed_ms, end_ms) - e.added_ms)
            for e in self.executors
            if e.added_ms < end_ms
        )


class Backlog(Protocol):
    """The scheduler's view the policy reads at a decision: tasks waiting and running."""

    def at(self, t: float) -> tuple[int, int]:
        """(pending, running) tasks at ``t``; never called with a ``t`` earlier than before."""
        ...

    def next_finish(self, t: float) -> float:
        """When the next running task ends after ``t`` (inf: none runs)."""
        ...

    def last_end(self, t: float) -> float:
        """When the latest task that ended by ``t`` ended (-inf: none has)."""
        ...


@dataclass(slots=True)
class Changes:
    """What a step of the policy did that the scheduler must apply."""

    arrived: list[tuple[int, float]] = field(default_factory=list)
    """(executor, when its slots take a first task) for each executor that registered."""
    killed: list[int] = field(default_factory=list)
    """Executors the policy killed: they take no task from now on."""


def tick(t: float) -> float:
    """The first of Spark's 100 ms polls at or after ``t`` (ms since the start)."""
    return math.ceil(t / POLL_MS - 1e-9) * POLL_MS


# Internal event kinds, in the order they are handled at one time.
_GONE, _ARRIVE, _DEADLINE, _ADD, _UPDATE, _RETRY = range(6)


class AllocationManager:
    """Spark's ExecutorAllocationManager and ExecutorMonitor as a state machine.

    The scheduler reports what Spark's listener would hear (`stage_submitted`,
    `queue_empty`, `task_placed`, `job_started`, `job_ended`) and calls `step` whenever
    `next_time` comes; the policy answers with the executors that registered or were
    killed (`Changes`). In *observed* mode the executors are the log's
    (`executor_added`, `executor_removed`): the policy's requests and kills are recorded
    against them (what Spark asked for, and how long the cluster manager took), and
    nothing arrives by itself.
    """

    def __init__(
        self,
        settings: AllocationSettings,
        tasks_per_executor: int,
        costs: AllocationCosts,
        *,
        capacity: int | None = None,
        observed: bool = False,
    ) -> None:
        if tasks_per_executor < 1:
            raise AllocationError(
                "an executor must run at least one task (spark.executor.cores below "
                "spark.task.cpus)"
            )
        self.s = settings
        self.tpe = tasks_per_executor
        self.costs = costs
        self.capacity = INT_MAX if capacity is None else max(0, capacity)
        self.observed = observed
        self.target = settings.initial_executors
        self.to_add = 1
        self.add_time = math.nan
        self._add_version = 0
        self.initializing = True
        # Per executor (index = registration order).
        self.requested: list[float] = []
        self.added: list[float] = []
        self.busy: list[float] = []
        """When the last task placed on the executor ends (its registration while none)."""
        self.kill: list[float] = []
        self.removed: list[float] = []
        self.shuffles: list[set[int] | None] = []
        self.cached: list[bool] = []
        self._check: list[float] = []
        """When each executor's idleness is next checked (one live check per executor)."""
        self.keys: dict[str, int] = {}
        self.registered = 0
        self.removing = 0
        # Requests not yet registered: id → (requested, arrival).
        self._requests: list[tuple[float, float]] = []
        self._outstanding: list[int] = []
        self._active: dict[int, int] = {}
        self._holders: dict[int, list[int]] = {}
        self._refused: list[int] = []
        self._retry_at = INF
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = 0
        self._changes = Changes()
        self.targets: list[tuple[float, int]] = [(0.0, self.target)]
        self.requests_log: list[tuple[float, int]] = []
        self.kill_latency_ms: list[float] = []

    # -- the clock ------------------------------------------------------------------------------

    def start(self, t: float = 0.0) -> Changes:
        """The manager starts with the application: it asks for the initial executors."""
        self._sync(t, start=True)
        return self._take_changes()

    def next_time(self) -> float:
        """When the policy next has something to do by itself (inf: nothing planned)."""
        return self._heap[0][0] if self._heap else INF

    def step(self, backlog: Backlog) -> Changes:
        """Handle everything due at `next_time` (the scheduler has caught up to it)."""
        if not self._heap:
            return Changes()
        t = self._heap[0][0]
        due: list[int] = []
        decide = False
        while self._heap and self._heap[0][0] <= t:
            _, kind, _, ref = heapq.heappop(self._heap)
            if kind == _GONE:
                self._gone(t, ref)
            elif kind == _ARRIVE:
                self._arrive(t, ref)
            elif kind == _DEADLINE:
                if self._check[ref] != t:
                    continue  # superseded by an earlier check
                self._check[ref] = INF
                if self._deadline_due(t, ref):
                    due.append(ref)
                    decide = True
            elif kind == _ADD:
                decide = decide or ref == self._add_version
            elif kind == _UPDATE:
                decide = True
            elif kind == _RETRY:
                self._retry_at = INF
                decide = decide or bool(self._refused)
        if decide:
            self._schedule(t, backlog, due)
        return self._take_changes()

    # -- what the listener hears ----------------------------------------------------------------

    def stage_submitted(self, t: float, backlog: Backlog) -> None:
        """A stage's tasks are about to wait (``backlog`` does not count them yet): start
        the backlog timer if it is not running.

        Spark lowers its target at every 100 ms poll when fewer executors are needed, and
        between two submissions the need only falls (tasks end, none arrive), so the
        lowest it reached is the need just before this submission: the target is lowered
        to it here, as Spark's polls would have done meanwhile (if one came between the
        last task's end and this submission)."""
        last = backlog.last_end(t)
        if not math.isfinite(last) or tick(last) < t:
            self._lower_target(t, backlog)
        self.initializing = False
        if math.isnan(self.add_time):
            self.add_time = t + self.s.backlog_timeout_ms
            self._add_version += 1
            self._push(tick(self.add_time), _ADD, self._add_version)
        self._push(tick(t), _UPDATE, 0)

    def queue_empty(self) -> None:
        """The last waiting task started: the backlog timer stops and the ramp restarts at 1."""
        self.add_time = math.nan
        self._add_version += 1
        self.to_add = 1

    def task_placed(self, e: int, finish: float) -> None:
        """A task runs on executor ``e`` until ``finish`` (reported when it starts)."""
        if finish > self.busy[e]:
            self.busy[e] = finish
        if self.observed and self.kill[e] < INF and self.removed[e] == INF:
            # The logged executor ran a task after the policy would have killed it: Spark
            # did not kill it then, so neither does the record.
            self.kill[e] = INF
            self.removing -= 1

    def holds_data(self, e: int, shuffle: int, caches: bool) -> None:
        """Executor ``e`` ran a task that writes shuffle ``shuffle`` (-1: none) or caches
        blocks: its idle timeout becomes the shuffle or cache one."""
        changed = False
        if shuffle >= 0 and self.s.shuffle_tracking:
            held = self.shuffles[e]
            if held is None:
                held = self.shuffles[e] = set()
                changed = True
            if shuffle not in held:
                held.add(shuffle)
                self._holders.setdefault(shuffle, []).append(e)
        if caches and not self.cached[e]:
            self.cached[e] = True
            changed = True
        if changed:
            self._push_deadline(e, self.busy[e])

    def job_started(self, shuffles: Sequence[int]) -> None:
        """A job starts: the shuffles it reads or writes are in use until it ends."""
        if not self.s.shuffle_tracking:
            return
        for sh in shuffles:
            self._active[sh] = self._active.get(sh, 0) + 1

    def job_ended(self, t: float, shuffles: Sequence[int]) -> None:
        """A job ended: executors holding only shuffles no job uses may now go when idle."""
        if not self.s.shuffle_tracking:
            return
        for sh in shuffles:
            left = self._active.get(sh, 0) - 1
            self._active[sh] = max(0, left)
            if left > 0:
                continue
            for e in self._holders.get(sh, ()):
                if self.kill[e] == INF and not self._has_active_shuffle(e):
                    self._push_deadline(e, t)

    def executor_added(self, t: float, key: str) -> int:
        """Observed mode: the log's executor ``key`` registered at ``t``."""
        requested = math.nan
        if self._outstanding:
            requested = self._requests[self._outstanding.pop(0)][0]
        e = self._register(t, requested)
        self.keys[key] = e
        return e

    def executor_removed(self, t: float, key: str) -> None:
        """Observed mode: the log's executor ``key`` was removed at ``t``."""
        e = self.keys.get(key)
        if e is None or self.removed[e] < INF:
            return
        if self.kill[e] < INF:
            self.kill_latency_ms.append(t - self.kill[e])
        else:
            self.kill[e] = t  # lost or killed otherwise: it no longer counts either way
            self.removing += 1
        self._gone(t, e)

    def timeline(self) -> ExecutorTimeline:
        return ExecutorTimeline(
            executors=[
                ExecutorSpan(r, a, k, x)
                for r, a, k, x in zip(
                    self.requested, self.added, self.kill, self.removed, strict=True
                )
            ],
            targets=list(self.targets),
            requests=list(self.requests_log),
            kill_latency_ms=list(self.kill_latency_ms),
        )

    # -- Spark's rules --------------------------------------------------------------------------

    def _schedule(self, t: float, backlog: Backlog, due: list[int]) -> None:
        """Spark's schedule(): find timed-out executors, update the target, remove."""
        candidates = sorted(set(due) | set(self._refused))
        timed_out = [e for e in candidates if self._timed_out(t, e)]
        if timed_out:
            self.initializing = False
        self._update_target(t, backlog)
        self._refused = []
        if timed_out:
            self._remove(t, timed_out, backlog)

    def _needed(self, t: float, backlog: Backlog) -> int:
        """Spark's maxNumExecutorsNeeded: executors to run every pending and running task."""
        pending, running = backlog.at(t)
        return math.ceil((pending + running) * self.s.allocation_ratio / self.tpe - 1e-9)

    def _lower_target(self, t: float, backlog: Backlog) -> bool:
        """Lower the target to the need where it is above it; whether it was above."""
        if self.initializing:
            return False
        needed = self._needed(t, backlog)
        if needed >= self.target:
            return False
        old = self.target
        self.target = max(needed, self.s.min_executors)
        self.to_add = 1
        if self.target < old:
            self.targets.append((t, self.target))
        return True

    def _update_target(self, t: float, backlog: Backlog) -> None:
        """Spark's updateAndSyncNumExecutorsTarget: lower the target to the need, or, when
        the backlog timer has expired, raise it by this round's number."""
        if self.initializing or self._lower_target(t, backlog):
            return
        needed = self._needed(t, backlog)
        if not math.isnan(self.add_time) and t >= self.add_time:
            if self.target >= self.s.max_executors:
                self.to_add = 1
                return
            new = max(self.target, self.registered) + self.to_add
            new = min(new, needed)
            new = max(min(new, self.s.max_executors), self.s.min_executors)
            delta = new - self.target
            self.target = new
            if delta <= 0:
                self.to_add = 1
                return
            self.targets.append((t, self.target))
            self.to_add = self.to_add * 2 if delta == self.to_add else 1
            self.add_time = t + self.s.sustained_backlog_timeout_ms
            self._add_version += 1
            self._push(tick(self.add_time), _ADD, self._add_version)
            self._sync(t)

    def _remove(self, t: float, timed_out: list[int], backlog: Backlog) -> None:
        total = self.registered - self.removing
        refused: list[int] = []
        for e in timed_out:
            if total - 1 < self.s.min_executors or total - 1 < self.target:
                refused.append(e)
                continue
            total -= 1
            self.kill[e] = t
            self.removing += 1
            self._changes.killed.append(e)
            if not self.observed:
                self._push(t + self.costs.kill_ms, _GONE, e)
        self._refused = refused
        if refused:
            self._plan_retry(backlog.next_finish(t))

    def _plan_retry(self, when: float) -> None:
        """Refused executors are tried again when the target may have fallen (a task ends)
        or the executors grew (an arrival)."""
        if not math.isfinite(when):
            return
        at = tick(when)
        if at < self._retry_at:
            self._retry_at = at
            self._push(at, _RETRY, 0)

    def _sync(self, t: float, start: bool = False) -> None:
        """Tell the cluster manager the target: ask for what is missing, as capacity
        allows. A request once made is kept: an executor that is no longer wanted when it
        registers idles out (most of a request's wait is the executor's own start, which
        a lower target does not stop)."""
        alive = self.registered - self.removing
        wanted = self.target - alive - len(self._outstanding)
        if wanted > 0:
            room = self.capacity - self.registered - len(self._outstanding)
            n = min(wanted, max(0, room))
            if n <= 0:
                return
            self.requests_log.append((t, n))
            for _ in range(n):
                k = len(self._requests)
                arrival = self.costs.initial_arrival(k) if start else t + self.costs.request_ms
                self._requests.append((t, max(t, arrival)))
                self._outstanding.append(k)
                if not self.observed:
                    self._push(max(t, arrival), _ARRIVE, k)

    def _arrive(self, t: float, rid: int) -> None:
        self._outstanding.remove(rid)
        e = self._register(t, self._requests[rid][0])
        self._changes.arrived.append((e, t + self.costs.first_task_ms))
        if self._refused:
            self._plan_retry(t)

    def _register(self, t: float, requested: float) -> int:
        e = len(self.added)
        self.requested.append(requested)
        self.added.append(t)
        self.busy.append(t)
        self.kill.append(INF)
        self.removed.append(INF)
        self.shuffles.append(None)
        self.cached.append(False)
        self._check.append(INF)
        self.registered += 1
        self._push_deadline(e, t)
        return e

    def _gone(self, t: float, e: int) -> None:
        if self.removed[e] < INF:
            return
        self.removed[e] = t
        self.registered -= 1
        self.removing -= 1
        if not self.observed:
            self._sync(t)

    # -- idleness -------------------------------------------------------------------------------

    def _timeout(self, e: int) -> float:
        held = self.shuffles[e]
        if self.cached[e] or held:
            cache = self.s.cached_idle_timeout_ms if self.cached[e] else INF
            shuffle = self.s.shuffle_timeout_ms if held else INF
            return min(cache, shuffle)
        return self.s.idle_timeout_ms

    def _has_active_shuffle(self, e: int) -> bool:
        held = self.shuffles[e]
        return bool(held) and any(self._active.get(sh, 0) > 0 for sh in held or ())

    def _deadline(self, e: int) -> float:
        return max(self.added[e], self.busy[e]) + self._timeout(e)

    def _push_deadline(self, e: int, now: float) -> None:
        deadline = self._deadline(e)
        if math.isfinite(deadline):
            self._check_at(e, tick(max(now, deadline)))

    def _check_at(self, e: int, at: float) -> None:
        """Check ``e``'s idleness at ``at`` unless a check is planned before then (that one
        finds the later deadline and plans its own check)."""
        if at < self._check[e]:
            self._check[e] = at
            self._push(at, _DEADLINE, e)

    def _deadline_due(self, t: float, e: int) -> bool:
        """Whether executor ``e`` timed out at ``t``; if it will later, check again then."""
        if self.kill[e] < INF:
            return False
        deadline = self._deadline(e)
        if deadline > t:
            if math.isfinite(deadline):
                self._check_at(e, tick(deadline))
            return False
        return not self._has_active_shuffle(e)

    def _timed_out(self, t: float, e: int) -> bool:
        return (
            self.kill[e] == INF
            and self.busy[e] <= t
            and self._deadline(e) <= t
            and not self._has_active_shuffle(e)
        )

    # -- plumbing -------------------------------------------------------------------------------

    def _push(self, t: float, kind: int, ref: int) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, kind, self._seq, ref))

    def _take_changes(self) -> Changes:
        out, self._changes = self._changes, Changes()
        return out


# ---------------------------------------------------------------------------------------------
# The policy as a pure function of a backlog


@dataclass(frozen=True, slots=True)
class BacklogStage:
    """A stage attempt as the policy sees it: when its tasks were submitted and how many."""

    submit_ms: float
    n_tasks: int
    shuffle: int = -1
    """The shuffle its tasks write (-1: none; a result stage)."""
    caches: bool = False
    """Whether its tasks cache blocks on their executors."""
    complete_ms: float = INF
    """When it completed: tasks it did not start by then are no longer waiting."""


@dataclass(frozen=True, slots=True)
class BacklogTask:
    """A task of ``stage`` (index into the stages) on ``executor`` from start to finish.

    ``executor`` is an index into the executors in registration order (policy mode) or the
    log's executor id (observed mode)."""

    stage: int
    executor: int | str
    start_ms: float
    finish_ms: float


@dataclass(frozen=True, slots=True)
class BacklogJob:
    submit_ms: float
    end_ms: float
    shuffles: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class LoggedExecutor:
    """Observed mode: an executor as the log records it."""

    key: str
    added_ms: float
    removed_ms: float = INF


class _CountedBacklog:
    """Pending tasks from the events processed so far; running ones are those started
    whose end is after the time asked about (a task ending at ``t`` no longer runs)."""

    def __init__(self) -> None:
        self.pending = 0
        self.finishes: list[float] = []
        self.last = -INF

    def _catch_up(self, t: float) -> None:
        while self.finishes and self.finishes[0] <= t:
            self.last = heapq.heappop(self.finishes)

    def at(self, t: float) -> tuple[int, int]:
        self._catch_up(t)
        return max(0, self.pending), len(self.finishes)

    def next_finish(self, t: float) -> float:
        self._catch_up(t)
        return self.finishes[0] if self.finishes else INF

    def last_end(self, t: float) -> float:
        self._catch_up(t)
        return self.last


# External event kinds, in the order Spark's listener would hear them at one time.
_X_ADDED, _X_JOB, _X_STAGE, _X_START, _X_STAGE_END, _X_JOB_END, _X_REMOVED = range(7)
"""(_X_START is the tasks' place in that order; tasks are merged in from their columns.)"""


@dataclass(frozen=True, slots=True)
class TaskColumns:
    """A backlog's tasks as columns (one row per task attempt, any order): what
    `executor_timeline` runs on, built from a log's task table without a Python object per
    task. ``executor`` holds, per task, the executor's index (policy mode: registration
    order) or its position in ``logged`` (observed mode); -1 for none."""

    stage: np.ndarray
    executor: np.ndarray
    start_ms: np.ndarray
    finish_ms: np.ndarray

    @classmethod
    def of(
        cls, tasks: Sequence[BacklogTask], logged: Sequence[LoggedExecutor] | None = None
    ) -> TaskColumns:
        """Columns of hand-built tasks (observed mode: executors named by the log's ids)."""
        if logged is not None:
            position = {x.key: i for i, x in enumerate(logged)}
            executor = [position.get(str(t.executor), -1) for t in tasks]
        else:
            executor = []
            for t in tasks:
                if not isinstance(t.executor, int) or t.executor < 0:
                    raise AllocationError(
                        f"a task at {t.start_ms:g} ms names executor {t.executor!r}: give its index"
                    )
                executor.append(t.executor)
        return cls(
            np.array([t.stage for t in tasks], dtype=np.int64),
            np.array(executor, dtype=np.int64),
            np.array([t.start_ms for t in tasks], dtype=np.float64),
            np.array([t.finish_ms for t in tasks], dtype=np.float64),
        )


def executor_timeline(
    stages: Sequence[BacklogStage],
    tasks: Sequence[BacklogTask] | TaskColumns,
    settings: AllocationSettings,
    costs: AllocationCosts,
    tasks_per_executor: int,
    *,
    jobs: Sequence[BacklogJob] = (),
    logged: Sequence[LoggedExecutor] | None = None,
    capacity: int | None = None,
    start_ms: float = 0.0,
    end_ms: float,
) -> ExecutorTimeline:
    """The executors Spark's policy brings for this backlog (a pure function).

    Without ``logged`` the executors are the policy's own, arriving ``costs`` after they
    are asked for, and each task names the executor (by registration order) it runs on:
    one that is not registered, or already killed, when the task starts is an error in the
    backlog. With ``logged`` (observed mode) the executors are the log's and tasks name
    them by id: the timeline then records when the policy asked for executors and killed
    them, and how long the logged executors took to come and go after that. The policy
    starts at ``start_ms`` (when the driver could first ask for executors) and runs until
    ``end_ms`` (the application's end). O((tasks + stages) log tasks)."""
    if settings.min_executors > settings.max_executors:
        raise AllocationError("minExecutors above maxExecutors")
    cols = tasks if isinstance(tasks, TaskColumns) else TaskColumns.of(tasks, logged)
    n = len(cols.stage)
    if n and (cols.stage.min() < 0 or cols.stage.max() >= len(stages)):
        bad = int(np.flatnonzero((cols.stage < 0) | (cols.stage >= len(stages)))[0])
        raise AllocationError(f"task {bad}: no stage {int(cols.stage[bad])}")
    backwards = cols.finish_ms < cols.start_ms
    if backwards.any():
        raise AllocationError(f"task {int(np.flatnonzero(backwards)[0])}: ends before it starts")
    events: list[tuple[float, int, int]] = []
    for i, st in enumerate(stages):
        if st.n_tasks < 0:
            raise AllocationError(f"stage {i}: a negative task count")
        events.append((st.submit_ms, _X_STAGE, i))
        if math.isfinite(st.complete_ms):
            events.append((st.complete_ms, _X_STAGE_END, i))
    for j, job in enumerate(jobs):
        events.append((job.submit_ms, _X_JOB, j))
        events.append((job.end_ms, _X_JOB_END, j))
    if logged is not None:
        for x, ex in enumerate(logged):
            events.append((ex.added_ms, _X_ADDED, x))
            if math.isfinite(ex.removed_ms):
                events.append((ex.removed_ms, _X_REMOVED, x))
    events.sort()
    order = np.argsort(cols.start_ms, kind="stable")
    t_start = cols.start_ms[order].tolist()
    t_finish = cols.finish_ms[order].tolist()
    t_stage = cols.stage[order].tolist()
    t_exec = cols.executor[order].tolist()
    observed = logged is not None
    mgr = AllocationManager(
        settings, tasks_per_executor, costs, capacity=capacity, observed=observed
    )
    backlog = _CountedBacklog()
    mgr.start(start_ms)
    manager_of: list[int] = [-1] * (len(logged) if logged is not None else 0)
    """Observed mode: each logged executor's index in the policy (once registered)."""
    left = [0] * len(stages)
    """Tasks of each stage not started yet (a retried or speculative attempt starts none)."""
    marks = [(st.shuffle, st.caches) if st.shuffle >= 0 or st.caches else None for st in stages]
    finishes = backlog.finishes
    heappush = heapq.heappush
    busy, kill, pending_heap = mgr.busy, mgr.kill, mgr._heap
    i = j = 0
    n_events = len(events)
    while True:
        t_task = t_start[i] if i < n else INF
        t_event = events[j][0] if j < n_events else INF
        t_mgr = pending_heap[0][0] if pending_heap else INF
        # At one instant: the policy first, then what the listener hears before a task
        # starts (executors, jobs, stages), then task starts, then the rest.
        event_first = j < n_events and (
            t_event < t_task or (t_event == t_task and events[j][1] < _X_START)
        )
        t_ext = t_event if event_first else t_task
        if t_mgr <= t_ext:
            if t_mgr > end_ms:
                break
            mgr.step(backlog)
            continue
        if t_ext == INF:
            break
        if not event_first:
            t, s, f, ref = t_task, t_stage[i], t_finish[i], t_exec[i]
            i += 1
            if left[s] > 0:
                left[s] -= 1
                backlog.pending -= 1
                if backlog.pending <= 0:
                    mgr.queue_empty()
            heappush(finishes, f)
            e = manager_of[ref] if observed and ref >= 0 else ref
            if e < 0:
                continue
            if not observed:
                _check_executor(mgr, e, t)
            if f > busy[e]:
                busy[e] = f
            if observed and kill[e] < INF:
                mgr.task_placed(e, f)  # un-kills it: the logged executor ran on
            mark = marks[s]
            if mark is not None:
                mgr.holds_data(e, mark[0], mark[1])
            continue
        t, kind, ref = events[j]
        j += 1
        if kind == _X_ADDED:
            manager_of[ref] = mgr.executor_added(t, logged[ref].key)  # type: ignore[index]
        elif kind == _X_REMOVED:
            mgr.executor_removed(t, logged[ref].key)  # type: ignore[index]
        elif kind == _X_JOB:
            mgr.job_started(jobs[ref].shuffles)
        elif kind == _X_JOB_END:
            mgr.job_ended(t, jobs[ref].shuffles)
        elif kind == _X_STAGE:
            left[ref] = stages[ref].n_tasks
            mgr.stage_submitted(t, backlog)
            backlog.pending += left[ref]
        elif kind == _X_STAGE_END:
            backlog.pending -= left[ref]
            left[ref] = 0
            if backlog.pending <= 0:
                mgr.queue_empty()
    return mgr.timeline()


def _check_executor(mgr: AllocationManager, e: int, t: float) -> None:
    if e >= len(mgr.added) or mgr.added[e] > t:
        raise AllocationError(
            f"a task at {t:g} ms runs on executor {e}, which the policy has not started by then"
        )
    if mgr.kill[e] <= t:
        raise AllocationError(
            f"a task at {t:g} ms runs on executor {e}, which the policy killed at "
            f"{mgr.kill[e]:g} ms"
        )


__all__ = [
    "POLL_MS",
    "AllocationCosts",
    "AllocationManager",
    "Backlog",
    "BacklogJob",
    "BacklogStage",
    "BacklogTask",
    "Changes",
    "ExecutorSpan",
    "ExecutorTimeline",
    "LoggedExecutor",
    "TaskColumns",
    "executor_timeline",
    "tick",
]
