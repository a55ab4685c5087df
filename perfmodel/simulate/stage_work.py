"""How each finished task's time is split into resource components: a stage's `StageWork`.

The measured/inferred combination documented in docs/predict.md:

* measured components come straight from task metrics via `decompose_task`: CPU time
  (``cpu``), GC pauses (``gc``), shuffle fetch wait (``network``), shuffle write blocking
  (``disk``) and launch/result overheads (``scheduling``);
* ``network`` becomes what the task's remote shuffle bytes take at its share of the link:
  time they explain beyond the fetch wait is taken from the unattributed time, and a wait
  longer than they explain is latency (``other``);
* the *unattributed* rest is split by the stage's resource vector when one is given:
  each resource gets the part of its vector share not already covered by measured time
  (its deficit), so measured time is never overridden; names other than cpu, disk,
  network and memory go to ``other``, which no law changes; the disk part is bounded by
  what the task's spilled, read and written bytes explain, beyond that it is CPU, and the
  network part is CPU (the bytes' network time is already taken);
* without a vector, spill I/O (``spill``: spilled bytes written and read back at the
  host's per-task disk rate) and input/output I/O (``disk``) are estimated from bytes,
  capped at the unattributed time, and the remainder counts as CPU outside the task
  thread (``cpu_other``: PySpark's Python workers, (de)serialisation), which is what
  unattributed time mostly is in practice. The estimate is visible as its own component;
* where per-thread CPU was measured, what it leaves off CPU is not CPU
  (`perfmodel.simulate.off_cpu`): bytes bound its I/O part, a vector says which other
  resource it waited on, and the rest is ``other``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from perfmodel.dag.model import StageKey, StageNode
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.segments import segment_sums
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.host_usage import StageCpu
from perfmodel.simulate.laws import FloatArray
from perfmodel.simulate.off_cpu import off_cpu_ms, split_off_cpu
from perfmodel.simulate.shared_machine import Window
from perfmodel.simulate.thread_demand import StageThreadCpu

if TYPE_CHECKING:
    from perfmodel.dag.tasks import TaskTable
    from perfmodel.simulate.app_tasks import AppTasks

COMPONENTS: tuple[str, ...] = (
    "cpu",
    "cpu_other",
    "gc",
    "network",
    "disk",
    "spill",
    "scheduling",
    "other",
)
"""Rows of `StageWork.components`, in this order."""
CPU, CPU_OTHER, GC, NETWORK, DISK, SPILL, SCHEDULING, OTHER = range(len(COMPONENTS))


@dataclass(frozen=True, slots=True)
class Gates:
    """Per task (column) of a stage, the tasks of earlier stages whose output it read: pairs
    (``stage[j]``, ``column[j]``), an index into `Workload.stages` and a column there, for
    ``j`` in ``ptr[k]:ptr[k + 1]``. A replay starts the task no earlier than the latest of
    their ends, so stages that ran side by side (a Dask graph's) keep their chains, and
    places such a workload's tasks one at a time across its stages
    (`perfmodel.simulate.scheduler`)."""

    ptr: np.ndarray
    stage: np.ndarray
    column: np.ndarray
    lag_ms: np.ndarray
    """Per task, the observed delay from its inputs' end to when it could start
    (`perfmodel.dag.model.TaskInputs.lag_ms`), kept after their ends in the replay."""
    launch_ms: np.ndarray
    """Per task, when it was launched in the run (ms since the application's start): which
    of two tasks that could start at once the replay runs first."""


@dataclass(slots=True)
class StageWork:
    """One stage attempt, ready to be rescaled and scheduled."""

    key: StageKey
    name: str
    priority: tuple[int, int]
    """FIFO order: (first job id, stage id), as Spark's default scheduler orders stages."""
    components: FloatArray
    """Milliseconds, shape (len(COMPONENTS), n_tasks); columns in launch order."""
    peak_memory: FloatArray
    """Per task: execution memory it held at peak (bytes)."""
    memory_spill: FloatArray
    """Per task: in-memory size of the data it spilled (bytes)."""
    disk_spill: FloatArray
    """Per task: on-disk size of the data it spilled (bytes)."""
    read_bytes: FloatArray
    """Per task: bytes it read (input plus shuffle), as stored (serialised, compressed)."""
    concurrency: float
    """Baseline: mean number of tasks running on the same host while these ran (≥ 1)."""
    cpu_demand: float
    """Cores one running task keeps busy when it has the host to itself: measured from the
    host's CPU use where the profile has it, else CPU-like components ÷ run time."""
    disk_share: float
    network_share: float
    observed_ms: float
    ready_milestone: int
    complete_milestone: int
    tail_ms: float
    """Observed gap from the last task's end to the stage's completion."""
    vector: dict[str, float] = field(default_factory=dict)
    other_cores: float = 0.0
    """Cores other load on the host (other processes, the JVM's GC, JIT and other threads)
    asked for beside the stage's tasks, where measured per-thread CPU shows the tasks waited
    for cores, or what the JVM's own threads used beside tasks that did not: what makes
    their observed slowdown (`laws.contention_factor`). 0 where nothing was measured."""
    jvm_other_cores: float = 0.0
    """Of `other_cores`, what the JVM's own GC, JIT and other threads used while the stage's
    tasks ran: work of a fixed amount, which the target spreads over the stage's time there
    (`laws.other_load_on_target`); the rest is kept on the target as it is."""
    taken_cores: float = 0.0
    """Cores load of a higher priority than the application's took on the host while the
    stage's tasks waited (it takes, rather than shares: `rescale.free_cores`); kept on the
    target. 0 where not measured, where they did not wait, or the application was not
    niced."""
    executor_background: float = 0.0
    """ρ: CPU each executor JVM spent beside its tasks at its ceiling, per unit of task CPU
    (`perfmodel.simulate.executor_background`); 0 where not measured."""
    fallback_ns_per_byte: float = 0.0
    """CPU its tasks spent per byte spilled in an aggregation's fallback to sorting, beyond
    `laws.SPILL_CPU_NS_PER_BYTE`: measured from stack samples where the bundle has them
    (`perfmodel.dag.fallback_samples`); 0 elsewhere."""
    co_running: float = 0.0
    """γ of `laws.co_running_factor` where the tasks' demand was measured per thread, which
    sees waits for cores but not CPU time that grows beside other tasks; 0 elsewhere (a bare
    log's contention fit reads the slowdown off run times, which include it)."""
    lock_share: float = 0.0
    """g of `laws.lock_factor`: the share of a task's CPU work that holds its process's
    interpreter lock, where an executor's task threads share one (`interpreter_lock`); 0
    elsewhere (a JVM's task threads, or nothing measured it)."""
    lock_stretch: float = 1.0
    """Where ``lock_share`` was measured: what the baseline's CPU work took, with its waits
    for the lock and for cores, per unit of its thread CPU (≥ 1)."""
    setup: FloatArray | None = None
    """Per task, the part of its scheduling time that was the stage's set-up on its executor
    (`stage_setup`): the first task of a stage on each executor deserialises the stage's
    task binary (fetched as a broadcast) and loads the classes it needs; None: none."""
    setup_executors: int = 0
    """Executors that paid that set-up (ran the stage's tasks) at the baseline."""
    fetch_latency_share: float = 0.0
    """Of the stage's ``other`` time, the share that was its tasks waiting for remote data
    beyond what the bytes take at the link (the serving side's delay, a Dask worker's event
    loop serialising the data): kept by a bandwidth change, gone where the target has one
    peer and nothing is fetched remotely (`laws.fetch_latency_factor`)."""
    machine: Window | None = None
    """Where the executors shared one machine (`perfmodel.simulate.shared_machine`): how
    crowded it was while the stage's tasks ran; None elsewhere."""
    machine_cores: float = 0.0
    """That machine's cores (0: the executors' hosts are their own)."""
    gates: Gates | None = None
    """The tasks of earlier stages each task read, where the profile has them task by task
    (`perfmodel.dag.model.TaskInputs`); None: the stage barrier says what it waits for."""

    @property
    def n_tasks(self) -> int:
        return int(self.components.shape[1])

    @property
    def tiny_tasks(self) -> bool:
        """Its tasks read less than `TINY_PARTITION_BYTES` each on average: its time is
        being tasks (launch, set-up), not data."""
        return bool(self.n_tasks) and float(self.read_bytes.mean()) < TINY_PARTITION_BYTES


TINY_PARTITION_BYTES = 256 << 10
"""A stage whose tasks read less than this each (on average) spends its time on per-task
overhead, not on data."""
SATURATED = 0.85
"""Host utilisation above which tasks are taken to have been CPU-starved: their measured
cores per task is then a lower bound of what they would use alone."""


def measured_demand(cpu: StageCpu, thread_cpu_ms: float) -> float:
    """Cores a task of the stage would keep busy alone, from what the host measured.

    Below saturation the measured cores per task is the demand. On a saturated host it is
    only a lower bound; the task is then taken as two pipelined lanes — its thread (CPU time
    from task metrics) and everything else it caused (a Python worker, GC and JIT threads) —
    which alone run side by side, so the longer lane bounds its time.
    """
    observed = cpu.cores_per_task
    if cpu.utilisation < SATURATED or cpu.cpu_ms <= 0:
        return observed
    longest = max(thread_cpu_ms, cpu.cpu_ms - thread_cpu_ms)  # ≥ cpu_ms / 2 > 0
    return max(observed, cpu.cpu_ms / longest)


def stage_works(
    stages: list[StageNode],
    owners: list[int | None],
    tasks: AppTasks,
    baseline: ClusterConfig,
    concurrency: np.ndarray,
    vectors: Mapping[StageKey, ResourceVector] | None,
    measured: Mapping[StageKey, StageCpu],
    threaded: Mapping[StageKey, StageThreadCpu] | None = None,
) -> list[StageWork]:
    """Every replayed stage's `StageWork`, computed as application-wide arrays (one column
    per ended task attempt, stage after stage) and handed to each stage as views of its
    columns: the same figures, to the last bit, as the per-stage loop this replaced, which
    spent ~30 numpy calls on each of a many-job log's thousands of small stages.

    ``threaded``: stages whose CPU was measured per thread. There the unattributed time
    the measurement leaves off CPU (`off_cpu_share`) is not taken for CPU: bytes say how
    much of it is I/O, a code vector which resource it waits on, and the rest is ``other``.
    """
    positions = [tasks.position[s.key] for s in stages]
    f_starts, f_counts = tasks.finished_bounds
    counts = f_counts[positions] if positions else np.zeros(0, dtype=np.int64)
    rows = (
        np.concatenate([tasks.finished_rows(s) for s in stages])
        if stages
        else np.zeros(0, dtype=np.int64)
    )
    rows = rows.astype(np.int64, copy=False)
    starts = (np.cumsum(counts) - counts).astype(np.int64)
    n = len(rows)
    parts = tasks.parts
    t = tasks.table
    comp = np.zeros((len(COMPONENTS), n), dtype=np.float64)
    comp[CPU] = parts.cpu[rows]
    comp[GC] = parts.gc[rows]
    comp[NETWORK] = parts.network[rows]
    comp[DISK] = parts.disk[rows]
    comp[SCHEDULING] = parts.scheduling[rows]
    unattributed = parts.unattributed[rows]
    input_bytes = t.col("input_bytes")[rows]
    io_bytes = (input_bytes + t.col("output_bytes")[rows]).astype(np.float64)
    peak = t.col("peak_execution_memory")[rows].astype(np.float64)
    mem_spill = t.col("memory_spill_bytes")[rows].astype(np.float64)
    disk_spill = t.col("disk_spill_bytes")[rows].astype(np.float64)
    read = (input_bytes + t.col("shuffle_read_bytes")[rows]).astype(np.float64)
    remote = t.col("shuffle_remote_read_bytes")[rows].astype(np.float64)
    k = concurrency[rows]
    wall = comp.sum(axis=0) + unattributed
    # A one-task stage's (8, 1) matrix was summed as one contiguous run of 8 (pairwise, in
    # numpy), not row after row: the same here, so its figures stay the same to the bit.
    single = starts[counts == 1]
    if single.size:
        wall[single] = np.ascontiguousarray(comp[:, single].T).sum(axis=1) + unattributed[single]
    wall_sum = segment_sums(wall, starts, counts)
    k_weighted = segment_sums(k * wall, starts, counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        k_stage = np.where((counts > 0) & (wall_sum > 0), k_weighted / wall_sum, 1.0)
    # Bytes → time at the per-task share of the host's disk bandwidth (ms per byte).
    ms_per_byte = 1000.0 * np.maximum(1.0, k_stage) / baseline.disk_bw
    net_ms_per_byte = 1000.0 * np.maximum(1.0, k_stage) / baseline.net_bw
    stage_vectors = [vectors.get(s.key) if vectors else None for s in stages]
    split = [v is not None and bool(v.shares) for v in stage_vectors]
    per_row = np.repeat(ms_per_byte, counts)
    net_per_row = np.repeat(net_ms_per_byte, counts)
    by_bytes = np.repeat(~np.array(split, dtype=bool), counts) if stages else np.ones(0, bool)
    # The link: a task's remote shuffle bytes take their time at its share of the host's
    # link whatever part of it Spark's fetch wait shows (the fetch overlaps the task's work,
    # and the wait counts only the time its iterator was blocked). Time the bytes explain
    # beyond the wait is network, taken from the unattributed time; a wait longer than the
    # bytes explain is latency and the serving side's delay, which no bandwidth changes.
    wire = remote * net_per_row
    fetch_wait = comp[NETWORK]
    beyond = np.minimum(np.maximum(wire - fetch_wait, 0.0), unattributed)
    latency = np.maximum(fetch_wait - wire, 0.0)
    comp[NETWORK] = fetch_wait + beyond - latency
    # Where the thread's CPU was measured, the wire time was part of its time off CPU.
    off = off_cpu_ms([s.key for s in stages], threaded or {}, unattributed, starts, counts)
    off = np.maximum(off - beyond, 0.0)
    unattributed = unattributed - beyond
    spill = np.minimum(unattributed, disk_spill * 2 * per_row)
    rest = unattributed - spill
    measured_off = np.isfinite(off)
    # What can be I/O: all the rest, or where the measurement says, only what was off CPU
    # (beyond the spill); of that, what bytes do not explain is `other`, not CPU.
    pool = np.where(measured_off, np.clip(off - spill, 0.0, rest), rest)
    io = np.minimum(pool, io_bytes * per_row)
    idle = np.where(measured_off, pool - io, 0.0)
    comp[SPILL] = np.where(by_bytes, spill, 0.0)
    comp[DISK] += np.where(by_bytes, io, 0.0)
    comp[OTHER] = np.where(by_bytes, idle, 0.0) + latency
    comp[CPU_OTHER] = np.where(by_bytes, rest - io - idle, 0.0)
    bounds = list(zip(starts.tolist(), (starts + counts).tolist(), strict=True))
    for i, vector in enumerate(stage_vectors):
        if not split[i] or vector is None:
            continue
        lo, hi = bounds[i]
        # Code says which resource; bytes bound how much of it can be I/O.
        caps = (disk_spill[lo:hi] * 2 * per_row[lo:hi], io_bytes[lo:hi] * per_row[lo:hi])
        c = comp[:, lo:hi]
        if threaded and stages[i].key in threaded:
            blocked = np.clip(off[lo:hi] - spill[lo:hi], 0.0, rest[lo:hi])
            disk, memory, other = split_off_cpu(blocked, vector, caps[1])
            c[DISK] += disk
            c[SPILL] = spill[lo:hi] + memory
            c[OTHER] += other
            c[CPU_OTHER] = rest[lo:hi] - blocked
        else:
            _split_by_vector(c, unattributed[lo:hi], vector, caps)

    setup, setup_executors = stage_setup(
        t.col("executor")[rows],
        t.col("deserialize_ms")[rows],
        input_records_of(t, rows),
        comp,
        starts,
        counts,
    )
    sums = {c: segment_sums(comp[c], starts, counts) for c in range(len(COMPONENTS))}
    latency_sum = segment_sums(latency, starts, counts).tolist()
    other_sum = sums[OTHER].tolist()
    cpu_like = (sums[CPU] + sums[CPU_OTHER] + sums[GC]).tolist()
    run_total = (wall_sum - sums[SCHEDULING]).tolist()
    cpu_sum = sums[CPU].tolist()
    disk_sum = (sums[DISK] + sums[SPILL]).tolist()
    network_sum = sums[NETWORK].tolist()
    totals = wall_sum.tolist()
    k_list = k_stage.tolist()
    works: list[StageWork] = []
    for i, stage in enumerate(stages):
        lo, hi = bounds[i]
        total = totals[i]
        stage_measured = measured.get(stage.key)
        if stage_measured is not None:
            demand = measured_demand(stage_measured, cpu_sum[i])
        else:
            demand = cpu_like[i] / run_total[i] if run_total[i] > 0 else 0.0
        vector = stage_vectors[i]
        job_id = owners[i]
        works.append(
            StageWork(
                key=stage.key,
                name=stage.name,
                priority=(job_id if job_id is not None else 1 << 30, stage.stage_id),
                components=comp[:, lo:hi],
                peak_memory=peak[lo:hi],
                memory_spill=mem_spill[lo:hi],
                disk_spill=disk_spill[lo:hi],
                read_bytes=read[lo:hi],
                concurrency=k_list[i],
                cpu_demand=demand,
                disk_share=disk_sum[i] / total if total > 0 else 0.0,
                network_share=network_sum[i] / total if total > 0 else 0.0,
                fetch_latency_share=(
                    min(1.0, latency_sum[i] / other_sum[i]) if other_sum[i] > 0 else 0.0
                ),
                observed_ms=stage.duration_ms,
                ready_milestone=-1,
                complete_milestone=-1,
                tail_ms=0.0,
                vector=dict(vector.shares) if vector is not None else {},
                setup=setup[:, lo:hi] if setup_executors[i] else None,
                setup_executors=setup_executors[i],
            )
        )
    return works


def input_records_of(t: TaskTable, rows: np.ndarray) -> FloatArray:
    """Records each task read (input plus shuffle)."""
    read = t.col("input_records")[rows] + t.col("shuffle_read_records")[rows]
    return read.astype(np.float64)


def stage_setup(
    executor: np.ndarray,
    deserialize_ms: np.ndarray,
    records: np.ndarray,
    comp: FloatArray,
    starts: np.ndarray,
    counts: np.ndarray,
) -> tuple[FloatArray, list[int]]:
    """Per task (stages laid end to end, each in launch order), the part of its time that
    was its stage's set-up on its executor, per component ((len(COMPONENTS), n), zero but
    for the first task of each stage on each executor), and per stage the executors that
    paid it.

    The first task of a stage on an executor deserialises the stage's task binary (a
    broadcast it fetches from the driver) and loads the classes the stage's code needs, and
    runs that code before the JIT has compiled it; later tasks there find all of it done.
    Measured on the namespace cluster's sort (200 MB, 8 workers at a quarter of a core,
    2026-11-28, docs/cluster.md): in the first stage the first task on each of 2 executors
    took 16.6 s on average (5.5 s of it deserialising), the 15 after them 1.6 s; on 8
    executors the first tasks took 34.3 s (12.2 s), the 9 after them 3.8 s. So what
    a first task took beyond the stage's other tasks (per record read, where they read any)
    is a cost per executor, which another executor count pays another number of times
    (`perfmodel.simulate.rescale`): its deserialisation beyond theirs (scheduling time),
    then the rest from its other components in proportion. A stage whose tasks were all
    first on their executor has nothing to compare with: only their deserialisation is
    taken as set-up."""
    n = len(executor)
    stages = len(counts)
    parts = np.zeros((len(COMPONENTS), n), dtype=np.float64)
    if n == 0:
        return parts, [0] * stages
    group = np.repeat(np.arange(stages), counts)
    key = group * (int(executor.max()) + 1) + executor.astype(np.int64)
    _, first_at = np.unique(key, return_index=True)
    first = np.zeros(n, dtype=bool)
    first[first_at] = True
    later = ~first
    deser = np.nan_to_num(deserialize_ms.astype(np.float64))
    duration = comp.sum(axis=0)
    rec = np.maximum(records.astype(np.float64), 0.0)

    def later_mean(values: np.ndarray) -> np.ndarray:
        total = np.bincount(group[later], weights=values[later], minlength=stages)
        many = np.bincount(group[later], minlength=stages)
        return np.where(many > 0, total / np.maximum(many, 1), 0.0)

    sched = np.maximum(comp[SCHEDULING], 0.0)
    setup_sched = np.clip(deser - later_mean(deser)[group], 0.0, sched)
    parts[SCHEDULING] = np.where(first, setup_sched, 0.0)
    has_later = np.bincount(group[later], minlength=stages) > 0
    later_rec = np.bincount(group[later], weights=rec[later], minlength=stages)
    later_dur = np.bincount(group[later], weights=duration[later], minlength=stages)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_record = np.where(later_rec > 0, later_dur / np.maximum(later_rec, 1.0), np.nan)
    expected = np.where(
        np.isfinite(per_record[group]) & (rec > 0),
        per_record[group] * rec,
        later_mean(duration)[group],
    )
    excess = np.where(first & has_later[group], np.maximum(0.0, duration - expected), 0.0)
    rest = np.maximum(0.0, excess - parts[SCHEDULING])
    run = duration - sched
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(run > 0, np.minimum(rest, run) / np.where(run > 0, run, 1.0), 0.0)
    for row in range(len(COMPONENTS)):
        if row != SCHEDULING:
            parts[row] = np.maximum(comp[row], 0.0) * share
    paid = np.bincount(group[first], minlength=stages)
    has = np.bincount(group, weights=parts.sum(axis=0), minlength=stages) > 0
    return parts, [int(p) if h else 0 for p, h in zip(paid.tolist(), has.tolist(), strict=True)]


def _split_by_vector(
    comp: np.ndarray,
    unattributed: np.ndarray,
    vector: ResourceVector,
    disk_caps: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    """Give each resource the unattributed time its vector share still lacks (its deficit).

    ``disk_caps``: per task, the most spill and input/output disk time its bytes explain (at
    the per-task disk rate). The disk part is spill first (so the memory law still sees it),
    then input/output; beyond both it is CPU outside the task thread, as without a vector.
    Code tells what a frame does, not how many bytes reached a device: a read from the page
    cache runs the same code as one from the disk.

    A vector's network part is CPU outside the task thread: the network time a task's remote
    shuffle bytes explain at its share of the baseline's link is network already (taken
    before any vector, in `stage_works`), and beyond it the frames of a sort-merge join or
    an exchange (Netty, block fetch iterators) spend their time decoding rows, not waiting
    for bytes (taken as network, a 10× slower link multiplied that CPU time tenfold).
    """
    rows = {"cpu": CPU_OTHER, "network": CPU_OTHER, "disk": DISK, "memory": SPILL}
    for name, part in _vector_parts(comp, unattributed, vector).items():
        if name == "disk" and disk_caps is not None:
            spill = np.minimum(part, disk_caps[0])
            io = np.minimum(part - spill, disk_caps[1])
            comp[SPILL] += spill
            comp[DISK] += io
            comp[CPU_OTHER] += part - spill - io
            continue
        comp[rows.get(name, OTHER)] += part


def _vector_parts(
    comp: np.ndarray, unattributed: np.ndarray, vector: ResourceVector
) -> dict[str, np.ndarray]:
    """Per resource the vector names, per task, its part of ``unattributed``: in proportion
    to the deficits (its share of run time less what is measured for it), or to the shares
    where nothing lacks."""
    run = comp[[CPU, GC, NETWORK, DISK]].sum(axis=0) + unattributed
    measured = {
        "cpu": comp[CPU],
        "network": comp[NETWORK],
        "disk": comp[DISK],
        "memory": comp[GC],
    }
    deficits: dict[str, np.ndarray] = {}
    for name, share in vector.shares.items():
        have = measured.get(name, 0.0)
        deficits[name] = np.maximum(0.0, share * run - have)
    total = sum(deficits.values())
    if isinstance(total, float) or not np.any(total > 0):
        weights = {name: np.full_like(run, share) for name, share in vector.shares.items()}
        total = sum(weights.values())
    else:
        weights = deficits
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            name: np.where(total > 0, unattributed * w / total, 0.0) for name, w in weights.items()
        }
