"""Task times under a what-if configuration: the runtime laws applied to one stage's arrays.

Kept apart from the scheduler so each can be tested alone: this module answers "how long
would each task of this stage take on that configuration", the replay answers "when".
For the baseline configuration every factor is exactly 1, which is what makes the
baseline replay reproduce the observed task times.

Stage times are also shared between the configurations of one workload (a search's many
replays): a stage's task times are a function of a few numbers (its factors, its expected
concurrency, the memory per task), so `StageTimesCache` keeps them by those numbers, and two
replays whose stages all share them and whose slots are equal share the timeline too
(`perfmodel.simulate.replay.BaselineReplay.schedule`).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perfmodel.simulate import interpreter_lock, laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.laws import FloatArray
from perfmodel.simulate.stage_work import (
    COMPONENTS,
    CPU,
    CPU_OTHER,
    DISK,
    GC,
    NETWORK,
    OTHER,
    SCHEDULING,
    SPILL,
    StageWork,
)


@dataclass(slots=True)
class StageTimes:
    """Per-task durations of one stage under a configuration, and where they went."""

    durations: FloatArray
    """Milliseconds per task, in launch order."""
    component_ms: FloatArray
    """Task-time per component (summed over tasks), in `COMPONENTS` order."""
    concurrency: float
    """Expected tasks running at once on a host under this configuration."""
    cpu_work_change_ms: float = 0.0
    """CPU work (at the baseline's core speed, summed over tasks) the target adds to the
    baseline's, or takes from it (< 0): the CPU spent spilling, which changes with the
    spill, and what tasks running side by side add (`laws.co_running_factor`); the
    application's CPU floor moves by it (`perfmodel.simulate.cpu_floor`)."""
    key: tuple[object, ...] | None = None
    """What the times were computed from, where a `StageTimesCache` holds them: two
    replays whose stages have equal keys and equal slots have equal timelines."""


def mean_parallelism(durations: FloatArray, slots: int) -> float:
    """Average number of this stage's tasks running at once on ``slots`` slots.

    Total task time over the stage's makespan, with the makespan bounded below by both
    the longest task and perfect packing. Skew matters: four tasks of which one is long
    keep four slots busy only briefly, so the extra slots add little contention.
    """
    total = float(durations.sum())
    if total <= 0 or durations.size == 0:
        return 1.0
    makespan = max(float(durations.max()), total / max(slots, 1))
    return max(1.0, total / makespan)


def base_totals(work: StageWork) -> tuple[float, float]:
    """The stage's total and longest baseline task time (ms)."""
    durations = work.components.sum(axis=0)
    total = float(durations.sum()) if durations.size else 0.0
    longest = float(durations.max()) if durations.size else 0.0
    return total, longest


def scaled_concurrency(
    k0: FloatArray | float,
    total_ms: FloatArray | float,
    longest_ms: FloatArray | float,
    base: ClusterConfig,
    slots: FloatArray | float,
    hosts: FloatArray | float,
    slots_per_host: FloatArray | float,
) -> FloatArray:
    """`stages_concurrency` from a stage's total and longest task time, for one or many
    targets at once (arrays of slots, hosts and slots per host; the search's lower bounds
    ask it of thousands of configurations), or for many stages at once (arrays of ``k0``,
    totals and longest times; a replay asks it of every stage)."""
    slots = np.asarray(slots, dtype=np.float64)
    hosts = np.asarray(hosts, dtype=np.float64)
    k0 = np.asarray(k0, dtype=np.float64)
    total = np.asarray(total_ms, dtype=np.float64)
    positive = total > 0
    total = np.where(positive, total, 1.0)  # a stage without task time keeps k0 (below)
    p0 = _parallelism(total, longest_ms, float(base.slots)) / max(base.hosts, 1)
    p1 = _parallelism(total, longest_ms, slots) / np.maximum(hosts, 1.0)
    p0, p1 = np.maximum(p0, 1.0), np.maximum(p1, 1.0)
    scaled = np.minimum(np.maximum(1.0, k0 * p1 / p0), np.maximum(slots_per_host, 1.0))
    same = (slots == base.slots) & (hosts == base.hosts)
    return np.where(same | (p1 == p0) | ~positive, k0, scaled)


def stages_concurrency(
    works: Sequence[StageWork],
    k0: FloatArray,
    base: ClusterConfig,
    new: ClusterConfig,
    totals: Sequence[tuple[float, float] | None],
) -> FloatArray:
    """Tasks of each stage running at once on one host under ``new``, scaled from the
    observed baseline ``k0`` (each stage's `StageWork.concurrency`), all stages in one
    array pass.

    The observed mean concurrency (which includes overlapping stages) is scaled by how
    much more (or less) of its own parallelism the stage can use on the new slots, given
    its task durations: per host, mean_parallelism(slots) / hosts. ``totals``: each stage's
    `base_totals` where the caller keeps them, else None.
    """
    if new.slots == base.slots and new.hosts == base.hosts:
        return k0
    pairs = [t if t is not None else base_totals(w) for w, t in zip(works, totals, strict=True)]
    total = np.array([t for t, _ in pairs], dtype=np.float64)
    longest = np.array([m for _, m in pairs], dtype=np.float64)
    return scaled_concurrency(
        k0, total, longest, base, new.slots, new.hosts, new.slots_per_host
    ).astype(np.float64, copy=False)


def _parallelism(
    total_ms: FloatArray | float, longest_ms: FloatArray | float, slots: FloatArray | float
) -> FloatArray:
    """`mean_parallelism` from the stage's total and longest task time (total > 0)."""
    makespan = np.maximum(longest_ms, total_ms / np.maximum(slots, 1.0))
    return np.maximum(1.0, total_ms / makespan)


def free_cores(host_cores: FloatArray | float, taken: FloatArray | float) -> FloatArray:
    """Cores left to the application where load of a higher priority takes ``taken`` (it does
    not share them: `StageWork.taken_cores`); never less than a tenth of the host. Exactly
    the host's cores where nothing is taken."""
    cores = np.asarray(host_cores, dtype=np.float64)
    return np.maximum(cores - np.asarray(taken, dtype=np.float64), 0.1 * cores)


def contention_factors(
    k0: FloatArray | float,
    k1: FloatArray | float,
    demand: FloatArray | float,
    base_cores: FloatArray | float,
    new_cores: FloatArray | float,
    taken: FloatArray | float,
    other: FloatArray | float,
    jvm_other: FloatArray | float,
) -> tuple[FloatArray, FloatArray]:
    """`laws.contention_factor` on the baseline and on the target, the target's other load
    from `laws.other_load_on_target`: the one place `all_stage_times` and the recommender's
    bounds (`perfmodel.simulate.bounds`) both take them from."""
    free0 = free_cores(base_cores, taken)
    free1 = free_cores(new_cores, taken)
    d = np.asarray(demand, dtype=np.float64)
    busy0 = np.minimum(np.multiply(k0, d), free0)
    busy1 = np.minimum(np.multiply(k1, d), free1)
    other1 = laws.other_load_on_target(other, jvm_other, busy0, busy1)
    return (
        laws.contention_factor(k0, d, free0, other),
        laws.contention_factor(k1, d, free1, other1),
    )


def all_stage_times(
    works: Sequence[StageWork],
    base: ClusterConfig,
    new: ClusterConfig,
    cache: StageTimesCache | None = None,
) -> list[StageTimes]:
    """Every law applied to each stage's task components: the laws' factors for all stages
    in one array pass, then one multiplication per stage (not ~20 scalar numpy calls per
    stage per replay). With a ``cache``, a stage whose inputs it has seen is not
    computed again."""
    if not works:
        return []
    if cache is not None:
        cache.prepare(works, base)
        totals: Sequence[tuple[float, float] | None] = cache.totals
    else:
        totals = [None] * len(works)
    k0 = np.array([w.concurrency for w in works], dtype=np.float64)
    k1 = stages_concurrency(works, k0, base, new, totals)
    demand = np.array([w.cpu_demand for w in works], dtype=np.float64)
    disk_share = np.array([w.disk_share for w in works], dtype=np.float64)
    net_share = np.array([w.network_share for w in works], dtype=np.float64)
    other = np.array([w.other_cores for w in works], dtype=np.float64)
    jvm = np.array([w.jvm_other_cores for w in works], dtype=np.float64)
    taken = np.array([w.taken_cores for w in works], dtype=np.float64)
    cf0, cf1 = contention_factors(
        k0, k1, demand, base.host_cores, new.host_cores, taken, other, jvm
    )
    lock = np.array([w.lock_share for w in works], dtype=np.float64)
    locked = lock > 0
    if locked.any():
        # Threads of one process sharing an interpreter lock: the larger of the two waits.
        # The baseline's stretch is the one measured (`interpreter_lock.measure`).
        stretch0 = np.array([w.lock_stretch for w in works], dtype=np.float64)
        lf1 = laws.lock_factor(interpreter_lock.config_tasks_per_process(k1, new), lock)
        cf0 = np.where(locked, np.maximum(cf0, stretch0), cf0)
        cf1 = np.where(locked, np.maximum(cf1, lf1), cf1)
    background = np.array([w.executor_background for w in works], dtype=np.float64)
    machine = machine_factors(works, base, new)
    co_running = np.array([w.co_running for w in works], dtype=np.float64)
    co_f = laws.co_running_factor(co_running, k0, k1, base.host_cores, new.host_cores)
    background_f = laws.executor_background_factor(background, base.executors, new.executors)
    cpu_f = (
        laws.compute_factor(base.cpu_speed, new.cpu_speed)
        * cf1
        / cf0
        * background_f
        * co_f
        * machine
    )
    # CPU work (not waits for a core) that co-running adds or takes: the floor moves by it.
    co_added = (co_f - 1.0) / cf0
    gc_f = cpu_f * laws.gc_factor(base.memory_bytes, new.memory_bytes)
    disk_f = laws.bandwidth_factor(
        base.disk_bw,
        new.disk_bw,
        laws.io_streams(k0, disk_share),
        laws.io_streams(k1, disk_share),
    )
    net_f = laws.bandwidth_factor(
        base.net_bw,
        new.net_bw,
        laws.io_streams(k0, net_share),
        laws.io_streams(k1, net_share),
    ) * laws.remote_share_factor(base.peers, new.peers)
    factors = np.ones((len(works), len(COMPONENTS)), dtype=np.float64)
    factors[:, CPU] = cpu_f
    factors[:, CPU_OTHER] = cpu_f
    factors[:, GC] = gc_f
    # The baseline's wait for the lock is off CPU (`OTHER`): it scales as the CPU work does.
    factors[locked, OTHER] = cpu_f[locked]
    # Its wait for remote data beyond the wire goes where nothing is fetched remotely.
    latency = np.array([w.fetch_latency_share for w in works], dtype=np.float64)
    latency_f = laws.fetch_latency_factor(base.peers, new.peers)
    factors[:, OTHER] = (1.0 - latency) * factors[:, OTHER] + latency * latency_f
    factors[:, NETWORK] = net_f
    factors[:, DISK] = disk_f
    # Launching, deserialising and returning a task is CPU work too, on a shared machine.
    factors[:, SCHEDULING] = machine
    setups = setup_payers(works, base, new)
    out_list: list[StageTimes] = []
    background_fs = background_f.tolist()
    k0s, k1s, disk_fs = k0.tolist(), k1.tolist(), disk_f.tolist()
    cpu_fs, gc_fs, net_fs = cpu_f.tolist(), gc_f.tolist(), net_f.tolist()
    co_addeds = co_added.tolist()  # Python floats: a prediction's figures are plain floats
    for i, work in enumerate(works):
        key = None
        if cache is not None:
            f = [cpu_fs[i], gc_fs[i], disk_fs[i], net_fs[i]]
            key = cache.key(i, work, new, k0s[i], k1s[i], f)
            if key is not None and setups[i] is not None:
                key = (*key, setups[i], background_fs[i])
        hit = cache.get(key) if cache is not None and key is not None else None
        if hit is not None:
            out_list.append(hit)
            continue
        busy = setups[i]
        c = work.components
        if busy is not None and work.setup is not None:
            # The stage's set-up is paid once on each executor it runs on: by its first
            # tasks, one per executor the target keeps busy. It is each executor's own
            # work, beside its own JVM's warming up: the other executors' background
            # (`laws.executor_background_factor`) does not stretch it, so its CPU is
            # entered here divided by that factor, which the rest carries.
            setup = np.zeros_like(c)
            setup[:, :busy] = (work.setup.sum(axis=1) / work.setup_executors)[:, None]
            setup[[CPU, CPU_OTHER, GC]] /= max(background_fs[i], 1e-9)
            c = c - work.setup + setup
        out = c * factors[i][:, None]
        cpu_change = 0.0
        if cache is not None and cache.spill_free(key):
            out[SPILL] = 0.0  # what `_spill_ms` × the disk factor gives here (`spill_free`)
        else:
            ws = cache.working_sets[i] if cache is not None else None
            spill_ms, spill_cpu_change = _spill_ms(work, base, new, k0s[i], k1s[i], ws)
            out[SPILL] = spill_ms * disk_fs[i]
            # Spilling CPU is taken from the task thread's CPU first, then from the CPU
            # beside it (a Python worker's spills count in the same metric).
            thread = c[CPU] + spill_cpu_change
            out[CPU] = np.maximum(thread, 0.0) * cpu_fs[i]
            out[CPU_OTHER] = (c[CPU_OTHER] + np.minimum(thread, 0.0)) * cpu_fs[i]
            cpu_change = float(spill_cpu_change.sum())
        if co_addeds[i] != 0.0 and cpu_fs[i] > 0:
            cpu_change += float(out[CPU].sum() + out[CPU_OTHER].sum()) / cpu_fs[i] * co_addeds[i]
        times = StageTimes(
            durations=out.sum(axis=0),
            component_ms=out.sum(axis=1),
            concurrency=k1s[i],
            cpu_work_change_ms=cpu_change,
        )
        if cache is not None and key is not None:
            times.key = key
            cache.put(key, times)
        out_list.append(times)
    return out_list


def machine_factors(
    works: Sequence[StageWork], base: ClusterConfig, new: ClusterConfig
) -> FloatArray:
    """Per stage, t'/t of its CPU work where the executors shared one machine
    (`perfmodel.simulate.shared_machine`): the machine's pressure with the executors the
    target keeps busy over the baseline's. 1 for a stage without a measured machine, and for
    every stage when the executor count is kept."""
    out = np.ones(len(works), dtype=np.float64)
    if base.executors == new.executors:
        return out
    per0 = max(1, base.executor_cores // max(base.task_cpus, 1))
    per1 = max(1, new.executor_cores // max(new.task_cpus, 1))
    for i, work in enumerate(works):
        window = work.machine
        if window is None or not window.executors or work.machine_cores <= 0:
            continue
        n = work.n_tasks
        busy0 = max(1, min(base.executors, math.ceil(n / per0)))
        busy1 = max(1, min(new.executors, math.ceil(n / per1)))
        out[i] = laws.shared_machine_factor(
            window.executors,
            window.executors * busy1 / busy0,
            window.wanted,
            window.other,
            work.machine_cores,
        )
    return out


def setup_payers(
    works: Sequence[StageWork], base: ClusterConfig, new: ClusterConfig
) -> list[int | None]:
    """Per stage, how many of its first tasks pay its set-up (`stage_work.stage_setup`) on
    the target: one per executor the target keeps busy; None where it is paid as observed
    (the executor count kept, or no set-up measured).

    Only where every executor runs one task at a time, at the baseline and the target: there
    the first task on an executor is the one that paid its set-up, and the target's first
    tasks in launch order are one per executor. Where an executor runs several tasks at once
    its first wave shares the set-up (each deserialises, all wait on the class loading), so
    which of them paid what is not in the log; it is paid as observed."""
    out: list[int | None] = [None] * len(works)
    if base.executors == new.executors:
        return out
    if base.executor_cores // max(base.task_cpus, 1) > 1:
        return out
    if new.executor_cores // max(new.task_cpus, 1) > 1:
        return out
    for i, work in enumerate(works):
        if work.setup is None or work.setup_executors <= 0:
            continue
        out[i] = min(work.n_tasks, max(1, new.executors))
    return out


READ_EXPANSION = 3.0
"""In-memory bytes per byte read (deserialised rows and their pointers vs. compressed,
serialised input): bounds a task's working set where its peak memory says too much."""


def working_set(work: StageWork) -> FloatArray:
    """Bytes each task would hold in execution memory if it had all it wanted.

    A task that spilled needed what it held plus what it spilled. One that did not is
    bounded by its peak, but a hash aggregation or join grows its maps into whatever
    memory it is given, so with ample memory the peak overstates the need; the data it
    read, deserialised (`READ_EXPANSION`), bounds it too (where the task read anything).
    """
    return working_set_of(work.peak_memory, work.memory_spill, work.read_bytes)


def working_set_of(
    peak_memory: FloatArray, memory_spill: FloatArray, read_bytes: FloatArray
) -> FloatArray:
    """`working_set` from per-task arrays: one stage's, or many stages' laid end to end."""
    spilled = peak_memory + memory_spill
    cap = np.where(read_bytes > 0, read_bytes * READ_EXPANSION, np.inf)
    return np.where(memory_spill > 0, spilled, np.minimum(peak_memory, cap))


def spill_cpu_rate(work: StageWork) -> float:
    """Milliseconds of CPU per byte a task of the stage spills (in memory):
    `laws.SPILL_CPU_NS_PER_BYTE`, plus what an aggregation's fallback to sorting took where
    stack samples measured it (`StageWork.fallback_ns_per_byte`)."""
    return (laws.SPILL_CPU_NS_PER_BYTE + work.fallback_ns_per_byte) / 1e6


def spill_cpu_ms(work: StageWork) -> FloatArray:
    """Per task, the part of its CPU time spent spilling: `spill_cpu_rate` per byte it
    spilled (in memory), at most its CPU time, its thread's and the CPU beside it (Spark
    adds a PySpark worker's own spills to the same metric)."""
    c = work.components
    return np.minimum(c[CPU] + c[CPU_OTHER], spill_cpu_rate(work) * work.memory_spill)


def _spill_ms(
    work: StageWork,
    base: ClusterConfig,
    new: ClusterConfig,
    k0: float,
    k1: float,
    ws: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Spill time under new memory, by the reversed roofline on each task's working set,
    and the change in the task's CPU time spent spilling (`spill_cpu_ms`; before the
    CPU factors).

    A task's share of execution memory is the executor's usable memory divided by the
    tasks running in it. Where the baseline spilled, the memory it actually had is
    inferred as (working set − spilled bytes), so the baseline reproduces exactly and
    the what-if moves along the line from there. ``ws``: the stage's `working_set`, where
    the caller keeps it.
    """
    base_spill = work.components[SPILL]
    if (base.memory_bytes, base.memory_fraction) == (new.memory_bytes, new.memory_fraction) and (
        k0 == k1
    ):
        return base_spill, np.zeros_like(base_spill)
    if ws is None:
        ws = working_set(work)
    per_exec0 = max(1.0, k0 / base.executors_per_host)
    per_exec1 = max(1.0, k1 / new.executors_per_host)
    a0 = laws.usable_memory(base.memory_bytes, base.memory_fraction) / per_exec0
    a1 = laws.usable_memory(new.memory_bytes, new.memory_fraction) / per_exec1
    spilled = work.memory_spill > 0
    a0_eff = np.where(spilled, ws - work.memory_spill, np.maximum(a0, ws))
    overflow0 = ws - a0_eff
    overflow1 = laws.overflow_bytes(ws, a0_eff * (a1 / a0))
    # Bytes on disk per byte of overflow: what this stage compressed to, else one half.
    total_mem = float(work.memory_spill.sum())
    ratio = float(work.disk_spill.sum()) / total_mem if total_mem > 0 else 0.5
    ms_per_byte = 2.0 * ratio * 1000.0 * max(1.0, k0) / base.disk_bw
    cpu0 = spill_cpu_ms(work)
    cpu1 = laws.spill_time(cpu0, overflow0, overflow1, spill_cpu_rate(work))
    return laws.spill_time(base_spill, overflow0, overflow1, ms_per_byte), cpu1 - cpu0


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
        disk_f: float | None = disk
        if never_spilled and _spill_free(self.base, new, k0, k1, disk):
            spill: tuple[float, float, float] | None = None
            disk_f = _unused(disk, disk_idle)
        else:
            spill = (
                float(new.memory_bytes),
                float(new.executors_per_host),
                float(new.memory_fraction),
            )
        return (
            i,
            # Idle CPU rows still take the spilling CPU a new overflow adds (`_spill_ms`).
            _unused(cpu, cpu_idle and spill is None),
            _unused(gc, gc_idle),
            disk_f,
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
    if (base.memory_bytes, base.memory_fraction) == (new.memory_bytes, new.memory_fraction) and (
        k0 == k1
    ):
        return True
    a0 = laws.usable_memory(base.memory_bytes, base.memory_fraction) / max(
        1.0, k0 / base.executors_per_host
    )
    a1 = laws.usable_memory(new.memory_bytes, new.memory_fraction) / max(
        1.0, k1 / new.executors_per_host
    )
    return a0 > 0 and a1 >= a0
