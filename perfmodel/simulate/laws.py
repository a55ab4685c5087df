"""Per-resource runtime laws: how one resource's share of a task's time responds to change.

Each law maps a measured time under the baseline to a time under the what-if
configuration and works on numpy arrays (one element per task), so a stage's tasks are
rescaled in a handful of vector operations rather than a Python loop. Laws return
*factors* or *times*, never schedule anything: the replay decides when tasks run.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

RESERVED_HEAP_BYTES = 300 << 20
"""Spark reserves 300 MiB of every heap for its own objects (``RESERVED_SYSTEM_MEMORY``)."""
MEMORY_FRACTION = 0.6
"""``spark.memory.fraction`` default: share of (heap − reserved) for execution and storage."""


def compute_factor(base_speed: float, new_speed: float) -> float:
    """CPU time scales with core speed: t' = t · s/s'."""
    return base_speed / new_speed


def contention_factor(
    concurrency: FloatArray | float,
    demand_per_task: FloatArray | float,
    host_cores: FloatArray | float,
    other_cores: FloatArray | float = 0.0,
) -> FloatArray:
    """Slowdown of CPU work when the tasks on a host want more cores than it has.

    ``demand_per_task`` is the number of cores one running task keeps busy: the task
    thread's share of its wall time on CPU plus work it causes outside the thread (a
    PySpark task's Python worker, the JVM's GC threads). With ``k`` tasks running, the
    host is asked for ``k·d`` cores; beyond ``C`` cores processor sharing stretches
    every task's CPU work by ``k·d / C``. Slots are not cores: this is why a second
    slot on a two-core host does not halve a PySpark stage. ``other_cores``: what other load
    on the host (other processes, the JVM's GC, JIT and other threads) asks for beside the
    tasks, sharing the cores with them (the scheduler gives runnable threads of equal
    priority equal shares).
    """
    k = np.asarray(concurrency, dtype=np.float64)
    d = np.asarray(demand_per_task, dtype=np.float64)
    asked = k * d + np.asarray(other_cores, dtype=np.float64)
    return np.maximum(1.0, asked / np.maximum(np.asarray(host_cores, dtype=np.float64), 1e-9))


def other_load_on_target(
    other_cores: FloatArray | float,
    jvm_cores: FloatArray | float,
    base_busy: FloatArray | float,
    new_busy: FloatArray | float,
) -> FloatArray:
    """Cores other load asks for beside a stage's tasks on the target (`contention_factor`).

    Load from outside the application (other processes) is a rate, and is kept. The JVM's
    own GC, JIT and other threads (``jvm_cores`` of ``other_cores``) do work of a fixed
    amount for the stage (the code it runs compiled once, the garbage its data makes
    collected once) in the background, at no more than the rate they ran at on the
    baseline. Where the target keeps fewer cores busy with the stage's tasks
    (``new_busy`` < ``base_busy``, each ``min(k·d, C)``), the stage takes about
    ``base_busy/new_busy`` as long and that work asks for proportionally fewer cores while
    it runs: one slot fewer frees what the JIT took from the second task. Where it keeps
    more busy, the work does not hurry to fit a shorter stage: compilation is
    asynchronous, and what is left runs on after it, so the baseline's rate is kept (the fit
    workloads of the local study predicted ``local[2]`` from ``local[1]`` worse, sort, SQL join
    and PageRank 4–13 points slower, when the work was made to fit; docs/predict.md).
    """
    other = np.asarray(other_cores, dtype=np.float64)
    jvm = np.minimum(np.asarray(jvm_cores, dtype=np.float64), other)
    b0 = np.asarray(base_busy, dtype=np.float64)
    b1 = np.asarray(new_busy, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where((b0 > 0) & (b1 > 0), b1 / np.where(b0 > 0, b0, 1.0), 1.0)
    return other - jvm + jvm * np.minimum(ratio, 1.0)


def lock_factor(per_process: FloatArray | float, lock_share: FloatArray | float) -> FloatArray:
    """Slowdown of a task's CPU work when the threads of one process that run tasks share one
    interpreter lock (CPython's GIL): ``g`` of every task's CPU work holds the lock, so ``k``
    tasks running at once in one process ask the lock for ``k·g`` of its time, and beyond
    one (a lock serves one thread at a time) every task's work stretches by ``k·g``. Pure
    Python (``g`` = 1) gains nothing from a second thread in a process and everything from a
    second process; code that releases the lock (numpy, ``g`` ≈ 0) scales with threads.
    Independent of the host's cores (`contention_factor`): the replay takes the larger."""
    k = np.asarray(per_process, dtype=np.float64)
    return np.maximum(1.0, k * np.asarray(lock_share, dtype=np.float64))


CO_RUNNING_CPU = 0.10
"""γ: the share by which a task's CPU time grows for each other task running beside it on
the host's other cores (memory bus, caches, whatever a VM's cores share). Measured, not
tuned: the median over the fit workloads' pairs of runs that differ only in cores,
`perfmodel.experiment.co_running` (0.100 on 10 pairs of the 2026-11-25 08:12 fit store,
0.101 on the 04:12 one; per workload 0.06–0.26), which `perfmodel experiment calibrate`
prints. A property of the study machine: another host may differ."""


def co_running_load(concurrency: FloatArray | float, host_cores: FloatArray | float) -> FloatArray:
    """Tasks side by side on a host, as `co_running_factor` counts them: ``1 + (min(k, C) −
    1) / max(C − 1, 1)``, one plus the share of the host's other cores that other tasks keep
    busy. On one or two cores it is ``min(k, C)``, the tasks running on their own cores.

    Why a share and not a count: ``γ`` is measured on the 2-core study machine, where one
    other task fills the host (`CO_RUNNING_CPU`). Taken per co-running task, it would make
    each of 16 tasks on a 16-core host use 1 + 15γ (2.5 times) the CPU it uses alone, far
    beyond anything measured; taken per share of the host, a full host of any size grows a
    task's CPU by ``γ``, as the full 2-core host did."""
    k = np.asarray(concurrency, dtype=np.float64)
    cores = np.asarray(host_cores, dtype=np.float64)
    others = np.maximum(np.minimum(k, cores) - 1.0, 0.0)
    return 1.0 + others / np.maximum(cores - 1.0, 1.0)


def co_running_factor(
    gamma: FloatArray | float,
    base_concurrency: FloatArray | float,
    new_concurrency: FloatArray | float,
    base_cores: FloatArray | float,
    new_cores: FloatArray | float,
) -> FloatArray:
    """t'/t of CPU work when a different number of tasks run side by side on a host.

    ``min(k, C)`` tasks run at once on their own cores; each of them takes
    ``1 + γ·(n − 1)`` times the CPU it would alone, ``n`` the `co_running_load` (``min(k, C)``
    on up to two cores). Beyond ``C`` they wait for cores instead (`contention_factor`), which
    does not add to their CPU time.
    """

    def side_by_side(k: FloatArray | float, cores: FloatArray | float) -> FloatArray:
        return 1.0 + np.asarray(gamma, dtype=np.float64) * (co_running_load(k, cores) - 1.0)

    return side_by_side(new_concurrency, new_cores) / side_by_side(base_concurrency, base_cores)


def io_streams(concurrency: FloatArray | float, io_share: FloatArray | float) -> FloatArray:
    """Expected number of tasks on a host doing this kind of I/O at one moment (≥ 1)."""
    k = np.asarray(concurrency, dtype=np.float64)
    s = np.asarray(io_share, dtype=np.float64)
    return np.maximum(1.0, k * s)


def bandwidth_factor(
    base_bw: float,
    new_bw: float,
    base_streams: FloatArray | float,
    new_streams: FloatArray | float,
) -> FloatArray:
    """t'/t for I/O on a bandwidth shared by concurrent streams: t' = t · (B/B') · (n'/n).

    Each of ``n`` concurrent streams gets ``B/n``; so an I/O-bound stage does not finish
    sooner with more slots (each task slows as much as parallelism grows), and a faster
    device or link helps in proportion to its bandwidth.
    """
    n0 = np.asarray(base_streams, dtype=np.float64)
    n1 = np.asarray(new_streams, dtype=np.float64)
    return (base_bw / new_bw) * (n1 / np.maximum(n0, 1e-9))


def remote_share_factor(base_peers: float, new_peers: FloatArray | float) -> FloatArray:
    """t'/t of shuffle network time when the same shuffle is spread over more or fewer peers
    (`ClusterConfig.peers`: hosts, or executors where they exchange data over sockets even
    on one host, as Dask's workers do).

    Hash partitioning spreads each map task's output evenly over the reducers, so a reducer
    on one of ``h`` alike peers fetches ``(h − 1)/h`` of its input over the network and the
    rest from its own peer: a second peer puts half the shuffle on the wire, a third two
    thirds, and one peer alone fetches nothing. Each peer's link is its own, so per-task
    network time grows with that share (the streams sharing a link are counted by
    `io_streams`). A one-peer baseline measured no remote fetch to scale, so its network
    time is kept as it is.
    """
    h1 = np.maximum(np.asarray(new_peers, dtype=np.float64), 1.0)
    if base_peers <= 1:
        return np.ones_like(h1)
    return ((h1 - 1.0) / h1) / ((base_peers - 1.0) / base_peers)


def fetch_latency_factor(base_peers: float, new_peers: FloatArray | float) -> FloatArray:
    """t'/t of the wait for remote data beyond what its bytes take at the link: 0 where the
    baseline fetched from other peers and the target has one, whose tasks find every input
    at home (a Dask worker alone gathers nothing; a Spark host alone reads its shuffle
    locally); else 1. How that wait grows with more peers is not measured, so it is kept."""
    h1 = np.asarray(new_peers, dtype=np.float64)
    if base_peers <= 1:
        return np.ones_like(h1)
    return np.where(h1 <= 1.0, 0.0, 1.0)


def executor_background_factor(
    ratio: FloatArray | float, base_executors: float, new_executors: FloatArray | float
) -> FloatArray:
    """t'/t of task CPU work when ``E`` executors become ``E'`` and each executor JVM pays a
    fixed CPU cost beside its tasks (`perfmodel.simulate.executor_background`).

    ``ratio`` is that cost per unit of task CPU at the baseline, ρ = B/(W/E). Where the
    executor's CPU is the limit, time goes with the work it does: ``W/E + B`` before,
    ``W/E' + B`` after, so each unit of task work carries ``1 + ρ·E'/E`` instead of
    ``1 + ρ``. 1 where nothing was measured (ρ = 0) or the count is unchanged.
    """
    e1 = np.asarray(new_executors, dtype=np.float64)
    rho = np.asarray(ratio, dtype=np.float64)
    return (1.0 + rho * e1 / max(float(base_executors), 1.0)) / (1.0 + rho)


def machine_pressure(
    executors: FloatArray | float,
    wanted: FloatArray | float,
    other: FloatArray | float,
    machine_cores: FloatArray | float,
) -> FloatArray:
    """How many times what it wants each runnable thread of a shared machine waits for:
    ``P = max(1, (E·w + O)/M)``, with ``E`` executors each wanting ``w`` cores (up to its
    CPU limit) and the rest of the machine's load wanting ``O``, its ``M`` cores shared in
    proportion to what each wants (`perfmodel.simulate.shared_machine`)."""
    e = np.asarray(executors, dtype=np.float64)
    asked = e * np.asarray(wanted, dtype=np.float64) + np.asarray(other, dtype=np.float64)
    return np.maximum(1.0, asked / np.maximum(np.asarray(machine_cores, dtype=np.float64), 1e-9))


def shared_machine_factor(
    base_executors: FloatArray | float,
    new_executors: FloatArray | float,
    wanted: FloatArray | float,
    other: FloatArray | float,
    machine_cores: FloatArray | float,
) -> FloatArray:
    """t'/t of CPU work on executors that share one machine when ``E`` of them busy become
    ``E'``: ``P(E')/P(E)`` (`machine_pressure`). More executors than the machine holds each
    get less of a core; fewer get what their limit allows. 1 where the count is kept."""
    p0 = machine_pressure(base_executors, wanted, other, machine_cores)
    p1 = machine_pressure(new_executors, wanted, other, machine_cores)
    return p1 / p0


def usable_memory(heap_bytes: float, fraction: float = MEMORY_FRACTION) -> float:
    """Bytes of a heap that Spark's unified memory manager gives to execution and storage
    (``fraction``: ``spark.memory.fraction``)."""
    return max(heap_bytes - RESERVED_HEAP_BYTES, heap_bytes * 0.25) * fraction


def overflow_bytes(working_set: FloatArray, available: FloatArray | float) -> FloatArray:
    """The reversed roofline: data that does not fit falls linearly as memory grows, then 0."""
    return np.maximum(0.0, working_set - np.asarray(available, dtype=np.float64))


def spill_time(
    base_spill_ms: FloatArray,
    base_overflow: FloatArray,
    new_overflow: FloatArray,
    ms_per_overflow_byte: FloatArray | float,
) -> FloatArray:
    """Time spent spilling under the new memory: proportional to the data that overflows.

    Where the baseline spilled, its spill time is scaled by the overflow ratio (so the
    baseline reproduces itself exactly); where it did not, the new overflow is charged at
    ``ms_per_overflow_byte`` (writing and reading it back at the disk's per-task rate).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(base_overflow > 0, base_spill_ms * new_overflow / base_overflow, 0.0)
    fresh = np.where(base_overflow > 0, 0.0, new_overflow * ms_per_overflow_byte)
    return scaled + fresh


SPILL_CPU_NS_PER_BYTE = 1.2
"""CPU a task spends per byte it spills (in memory: Spark's ``memoryBytesSpilled``):
serialising, compressing and merging the spilled records back, in the task's thread (or its
PySpark worker), so a log counts it in the task's CPU time and not as spill. Measured, not
tuned: the median over the fit workloads' stages whose spill differs between runs that
differ only in memory, `perfmodel.experiment.spill_cpu` (1.24 over 16 (pair, stage) values of
the 2026-11-25 04:12 and 08:12 fit stores pooled; 1.87 and 0.43 on each alone: run-to-run CPU
noise is of the effect's size), which `perfmodel experiment calibrate` prints. A property of the
study machine and Spark's serialisers: another host may differ."""


def gc_factor(base_heap: float, new_heap: float) -> float:
    """GC time scales with collection frequency, which is inverse to heap size.

    For a fixed allocation rate and live set, a young generation twice as large is
    collected half as often; this is the standard first-order model and bounded to
    [0.25, 4] because the live set, not the heap, dominates at the extremes.
    """
    return float(min(4.0, max(0.25, base_heap / new_heap)))
