"""The critical path: the chain of stage attempts that determined when an application ended."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from perfmodel.dag.model import ApplicationProfile

CRITICAL_SLACK_MS = 5.0
"""Stages finishing this close before another's submission count as having held it up."""


@dataclass(slots=True)
class CriticalPath:
    stage_ids: list[int]
    stage_s: float
    """Wall time of the stages on the path."""
    gaps_s: float
    """Time on the path between one stage's end and the next one's start: driver work,
    job submission, scheduling (and, before the first stage, application start-up)."""


def critical_path(profile: ApplicationProfile) -> CriticalPath:
    """The chain of stage attempts that determined when the application finished.

    Walks back from the last stage to finish: each step goes to the stage that finished
    last before the current one was submitted, preferring the current stage's parents
    (a data dependency) over stages of earlier jobs (a driver-side sequence). What lies
    between the stages on the chain is driver time, reported separately, so the path
    explains the whole run rather than only the stages that happened to be linked.

    One pass in completion order: the candidates of a step are a prefix of the attempts
    sorted by completion time (found by bisection), stages already on the chain are
    skipped through a union-find of "next lower index still free", and the step's choice
    is either one of the current stage's parents (looked up by id) or the best of the
    attempts that finished at the latest time (a per-time queue that only moves forward),
    so a log with 20,000 stages takes milliseconds, not hours.
    """
    ran = [
        s
        for s in profile.stages.values()
        if s.submit_ms is not None and s.complete_ms is not None and s.status != "SKIPPED"
    ]
    if not ran:
        return CriticalPath([], 0.0, 0.0)
    ran.sort(key=lambda s: s.complete_ms or 0.0)  # stable: ties keep the profile's order
    done = [s.complete_ms or 0.0 for s in ran]
    n = len(ran)
    free = list(range(n))  # leads (path halving) to the highest index ≤ i off the chain, or -1

    def highest_free(i: int) -> int:
        while i >= 0 and free[i] != i:
            free[i] = free[free[i]] if free[i] >= 0 else -1
            i = free[i]
        return i

    def take(i: int) -> None:
        free[i] = i - 1

    # Attempts that finished at one time, best first: highest stage id, then earliest in
    # completion order (what max() over the sorted list picks among equal keys).
    same_time: dict[float, list[int]] = {}
    for i, t in enumerate(done):
        same_time.setdefault(t, []).append(i)
    for group in same_time.values():
        group.sort(key=lambda i: (-ran[i].stage_id, i))
    head = dict.fromkeys(same_time, 0)
    on_chain = [False] * n
    positions: dict[int, list[int]] = {}
    for i, s in enumerate(ran):
        positions.setdefault(s.stage_id, []).append(i)

    current = n - 1
    chain = [current]
    on_chain[current] = True
    take(current)
    while True:
        submit = ran[current].submit_ms or 0.0
        top = highest_free(bisect_right(done, submit + CRITICAL_SLACK_MS) - 1)
        if top < 0:
            break
        latest = done[top]
        floor = latest - CRITICAL_SLACK_MS
        best = -1
        for parent in set(ran[current].parent_stage_ids):
            for i in positions.get(parent, ()):
                if on_chain[i] or i > top or done[i] < floor:
                    continue
                if best < 0 or (done[i], ran[i].stage_id, -i) > (
                    done[best],
                    ran[best].stage_id,
                    -best,
                ):
                    best = i
        if best < 0:
            group = same_time[latest]
            k = head[latest]
            while on_chain[group[k]]:
                k += 1
            head[latest] = k
            best = group[k]
        current = best
        chain.append(current)
        on_chain[current] = True
        take(current)
    stages = [ran[i] for i in reversed(chain)]
    stage_ms = sum(s.duration_ms for s in stages)
    gaps_ms = 0.0
    if profile.start_ms is not None and stages[0].submit_ms is not None:
        gaps_ms += max(0.0, stages[0].submit_ms - profile.start_ms)
    for prev, nxt in zip(stages, stages[1:], strict=False):
        gaps_ms += max(0.0, (nxt.submit_ms or 0.0) - (prev.complete_ms or 0.0))
    return CriticalPath([s.stage_id for s in stages], stage_ms / 1000.0, gaps_ms / 1000.0)
