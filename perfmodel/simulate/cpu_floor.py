"""The least time a run on one host can take: all the CPU its processes use, over its cores.

Why: the replay times each stage from its tasks, and what the JVM's own threads (JIT, GC,
the rest) and the Python driver do between and beside the stages reaches it only as the
driver's gaps and as other load within a stage. Where that work is large, a second slot
finds no free core to run on: the held-out ALS recommender's JIT alone used 22–24 core-s in
a 28 s run on the 2-core study host, and ``local[2]`` was no faster than ``local[1]``.
Whatever the schedule, a run on ``C`` cores that needs ``W`` core-seconds takes at least
``W / C``: the prediction is never below that (docs/predict.md). ``W`` is what the baseline
used, moved by the CPU the target spends spilling more or less
(`perfmodel.simulate.rescale.StageTimes.cpu_work_change_ms`): a what-if that removes an
aggregation's fallback to sorting removes its CPU from the floor too.

Measured in local mode only, from a bundle's per-thread CPU (`perfmodel.profile.thread_cpu`)
over the application's run: the task threads, the JVM's other threads, the Python workers,
daemon and driver; not the recorders' own threads, nor other processes on the host. On a
cluster, each executor's own CPU beside its tasks is `perfmodel.simulate.executor_background`.
"""

from __future__ import annotations

import numpy as np

from perfmodel.profile.thread_cpu import HOST, RECORDING, ThreadCpu
from perfmodel.simulate.config import ClusterConfig


def cpu_by_kind(measured: ThreadCpu, start_ms: float, end_ms: float) -> dict[str, float]:
    """CPU milliseconds each kind of the application's threads used between ``start_ms`` and
    ``end_ms`` (epoch ms), summed over executors: each series' cumulative CPU, interpolated
    at both ends. The host's own rows and the recorders' threads are left out."""
    totals: dict[str, float] = {}
    for (executor, kind), series in measured.series.items():
        if executor == HOST or kind == RECORDING or series.t_ms.size == 0:
            continue
        at = np.interp([start_ms, end_ms], series.t_ms, series.cpu_ms)
        totals[kind] = totals.get(kind, 0.0) + max(0.0, float(at[1] - at[0]))
    return totals


def application_cpu_ms(measured: ThreadCpu, start_ms: float, end_ms: float) -> float:
    """CPU milliseconds the application's own threads used between ``start_ms`` and
    ``end_ms`` (epoch ms): `cpu_by_kind`, all kinds together."""
    return sum(cpu_by_kind(measured, start_ms, end_ms).values())


def floor_ms(app_cpu_ms: float, base: ClusterConfig, target: ClusterConfig) -> float:
    """``W / C`` on the target (``W`` at its core speed); 0 where not measured or not in
    local mode on both sides."""
    if app_cpu_ms <= 0 or not (base.local_mode and target.local_mode):
        return 0.0
    return app_cpu_ms * (base.cpu_speed / target.cpu_speed) / max(target.host_cores, 1)


def floor_note(app_cpu_ms: float, target: ClusterConfig, floor: float) -> str:
    """What the prediction was raised to, and why."""
    return (
        f"the application's processes need {app_cpu_ms / 1000:.0f} core-s of CPU over the run "
        f"(tasks, the JVM's JIT, GC and other threads, Python; measured per thread, less what "
        f"the target spends spilling less): "
        f"{target.host_cores} cores cannot do that in less than {floor / 1000:.1f} s, which "
        "the prediction is raised to"
    )
