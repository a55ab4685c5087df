"""What per-thread CPU says about the time Spark's task metrics leave unattributed.

A task's run time beyond its thread's CPU, GC and shuffle waits is what Spark's metrics do
not break down. Without more, the model takes what bytes do not explain for CPU outside the
task thread (`perfmodel.simulate.stage_work`). A bundle recorded with per-thread CPU
(`perfmodel.simulate.thread_demand`) measures most of it: the Python workers' CPU, and the
time the task thread or its worker sat runnable waiting for a core (run-queue delay, which
cgroup throttling adds to as well). What is left was off CPU and not waiting for a core:
blocked on I/O, a lock or another thread. That part does not grow or shrink with contention
for cores, so it is not CPU; bytes say how much of it can be I/O, a code vector which
resource it waited on, and the rest is ``other``, which no law changes.

Evidence (docs/predict.md): on the two fit studies (training figures) bundles went from
4.44% to 4.07% and from 6.77% to 6.34% mean error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.segments import segment_sums
from perfmodel.simulate.thread_demand import StageThreadCpu


def off_cpu_share(m: StageThreadCpu, unattributed_ms: float) -> float:
    """Share of a stage's unattributed task time (``unattributed_ms``, summed over its
    tasks) that its per-thread measurement leaves off CPU. The longer of the thread's and
    the worker's waits counts, as in `StageThreadCpu.alone_ms`: the two lanes run side by
    side."""
    if unattributed_ms <= 0:
        return 0.0
    on_cpu = m.python_cpu_ms + max(m.thread_wait_ms, m.python_wait_ms)
    return max(0.0, 1.0 - on_cpu / unattributed_ms)


def off_cpu_ms(
    keys: Sequence[StageKey],
    threaded: Mapping[StageKey, StageThreadCpu],
    unattributed: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
) -> np.ndarray:
    """Per task (stage after stage, ``starts``/``counts`` its rows), its unattributed time
    that was off CPU: the stage's `off_cpu_share` of it; +inf in stages not measured."""
    shares = np.full(len(keys), np.inf)
    sums = segment_sums(unattributed, starts, counts)
    for i, key in enumerate(keys):
        m = threaded.get(key)
        if m is not None:
            shares[i] = off_cpu_share(m, float(sums[i]))
    per_row = np.repeat(shares, counts)
    finite = np.isfinite(per_row)
    return np.where(finite, unattributed * np.where(finite, per_row, 0.0), np.inf)


def split_off_cpu(
    blocked: np.ndarray, vector: ResourceVector, io_cap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(disk, memory, other) per task: ``blocked`` (the measured off-CPU time left beyond
    spill and network) split among the vector's resources other than CPU and network, in
    proportion to their shares. Disk is bounded by what the task's input/output bytes
    explain (``io_cap``); the rest goes to ``other``. A vector that names none of them
    leaves it to bytes, as without a vector.

    Measurement says how much was off CPU; code says what it waited on.
    """
    shares = {n: v for n, v in vector.shares.items() if n not in ("cpu", "network") and v > 0}
    total = sum(shares.values())
    if total <= 0:
        shares, total = {"disk": 1.0}, 1.0
    disk = np.zeros_like(blocked)
    memory = np.zeros_like(blocked)
    other = np.zeros_like(blocked)
    for name, share in shares.items():
        part = blocked * (share / total)
        if name == "disk":
            kept = np.minimum(part, io_cap)
            disk += kept
            other += part - kept
        elif name == "memory":
            memory += part
        else:
            other += part
    return disk, memory, other
