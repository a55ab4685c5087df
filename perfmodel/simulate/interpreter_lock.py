"""How much of a stage's CPU work holds an interpreter lock its executor's task threads share.

Why: where a front end's executor runs its tasks as threads of one Python process (a Dask
worker), those threads share CPython's global interpreter lock. Pure-Python tasks then run
one at a time in a process however many threads it has, while a second process runs them
side by side; numpy and pandas code that releases the lock scales with threads. The host's
cores (`laws.contention_factor`) do not say this, and the time a thread spends waiting for
the lock is off CPU and not runnable: the per-thread measurement files it as ``other``
time, which the replay otherwise keeps as it is.

Measured, not assumed: where the baseline ran ``k`` > 1 tasks at once in one process, a
stage's CPU work took ``s`` = (its on-CPU time, CPU beside it and off-CPU ``other`` time) ÷
its thread CPU time to run; with a lock held ``g`` of the time, ``k`` tasks stretch by
``max(1, k·g)`` (`laws.lock_factor`), so ``g`` = min(1, s/k). The baseline's stretch is
then ``s`` as measured (it may exceed ``k·g`` where the host's cores were short too), and a
target's is the larger of its lock's and its cores' (`laws.contention_factor`).

A baseline that ran one task per process never waited for the lock, so its run times say
nothing of ``g``. Where the front end probed the lock instead (`LOCK_HELD_MS`: how long it
was held while the stage's tasks ran; Dask's workers), ``g`` = that time ÷ the stage's
thread CPU time (at most 1: on a host short of cores a thread holding the lock may be
waiting for a core, which the probes count as held), and the baseline's stretch is the
law's own ``max(1, k·g)``. Elsewhere ``g`` is left at 0 (no lock modelled), and the
prediction says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfmodel.simulate import laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.stage_work import CPU, CPU_OTHER, OTHER, StageWork

MIN_PER_PROCESS = 1.5
"""Mean tasks running at once in one process above which a stage's stretch is read as the
lock's: below it most of its tasks ran alone in their process."""


def tasks_per_process(
    concurrency: np.ndarray | float,
    executors_per_host: np.ndarray | float,
    threads: np.ndarray | float,
) -> np.ndarray:
    """Tasks running at once in one executor process, from those running at once on its
    host: shared among the host's executors, never more than an executor's ``threads``.
    Arrays for a search's many targets at once (`perfmodel.simulate.bounds`)."""
    k = np.asarray(concurrency, dtype=np.float64)
    per = k / np.maximum(executors_per_host, 1.0)
    return np.clip(per, 1.0, np.maximum(threads, 1.0))


def config_tasks_per_process(concurrency: np.ndarray | float, config: ClusterConfig) -> np.ndarray:
    """`tasks_per_process` on one configuration's layout."""
    return tasks_per_process(concurrency, config.executors_per_host, config.executor_cores)


def measure(
    works: Sequence[StageWork], baseline: ClusterConfig, held_ms: Mapping[int, float]
) -> str | None:
    """Set each stage's `StageWork.lock_share` where the baseline measured it, from its
    waits or from ``held_ms`` (`LOCK_HELD_MS`, by stage id); a note for the prediction, or
    None where neither measured it."""
    measured: list[float] = []
    stretches: list[float] = []
    unmetered: list[StageWork] = []
    probed: list[float] = []
    for work in works:
        per_process = float(config_tasks_per_process(work.concurrency, baseline))
        c = work.components
        cpu = float(c[CPU].sum())
        if per_process < MIN_PER_PROCESS:
            held = held_ms.get(work.key[0])
            if held is not None and cpu > 0:
                work.lock_share = min(1.0, held / cpu)
                work.lock_stretch = float(laws.lock_factor(per_process, work.lock_share))
                probed.append(work.lock_share)
            continue
        if cpu <= 0:
            if float((c[CPU_OTHER] + c[OTHER]).sum()) > 0:
                unmetered.append(work)
            continue
        stretch = max(float((c[CPU] + c[CPU_OTHER] + c[OTHER]).sum()) / cpu, 1.0)
        work.lock_share = min(1.0, stretch / per_process)
        work.lock_stretch = stretch
        measured.append(work.lock_share)
        stretches.append(stretch)
    if measured:
        # A stage whose tasks' work ran off their own thread (no thread CPU to measure: a
        # shuffle's transfers on the event loop) shared the same processes at the same
        # time as the measured ones: it takes their median.
        share, stretch = float(np.median(measured)), float(np.median(stretches))
        for work in unmetered:
            work.lock_share, work.lock_stretch = share, stretch
    notes = []
    if measured:
        notes.append(
            f"measured for {len(measured)} stage(s) that ran several tasks at once in one "
            f"process, {np.median(measured):.0%} of a task's CPU work holds it (median; "
            f"{min(measured):.0%}–{max(measured):.0%}; {len(unmetered)} stage(s) without "
            "thread CPU take the median)"
        )
    if probed:
        notes.append(
            f"probed for {len(probed)} stage(s) that ran one task at a time per process, "
            f"{np.median(probed):.0%} of a task's CPU work holds it (median; "
            f"{min(probed):.0%}–{max(probed):.0%})"
        )
    if not notes:
        return None
    return (
        "interpreter lock: an executor's task threads share one (Python threads); "
        + "; ".join(notes)
        + ": its time off CPU scales with tasks per process"
    )


def unmeasured_note(works: Sequence[StageWork]) -> str | None:
    """A note where the executors' threads share a lock but no stage measured it."""
    if any(w.lock_share > 0 for w in works):
        return None
    return (
        "interpreter lock: an executor's task threads share one (Python threads), but the "
        "baseline ran one task at a time per process and was not probed, so it cannot say "
        "how much of the work holds it; not modelled (a target with more threads per "
        "process may be slower than predicted)"
    )
