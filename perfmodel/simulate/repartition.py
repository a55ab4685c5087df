"""A what-if on settings that move partitions: each stage's work re-split, then replayed.

Which stages the settings re-partition, into how many partitions of what size, and which
joins change strategy, is the front end's plan (`perfmodel.dag.partition_change`, planned
by `perfmodel.spark.partition_plan` for Spark). Here each such stage's measured work is
re-split into its new partitions (`resplit`), a join's change is priced
(`perfmodel.simulate.join_switch`), and the workload handed back to the replay as it is for
any other what-if:

* **Fixed cost per task.** A stage whose tasks read little
  (`stage_work.TINY_PARTITION_BYTES`) spends its time on being tasks: all of it is per-task
  cost. Otherwise a task's fixed cost is its launch overhead (wall time outside run time:
  launch, deserialisation, result). A stage's i-th task pays what its i-th task paid, in
  launch order: a JVM's first tasks of a stage load classes and compile code, so a stage cut
  to fewer tasks keeps its coldest ones (a 64-task JSON write measured 224 ms a task for
  its first eight, 148 ms for its last 32; the same stage of 2,000 tasks, 57 ms past the
  200th). Tasks beyond its old count pay a warm JVM's cost (`warm_task_ms`), or what
  the stage's own warm tasks paid to launch where that was more (`own_launch_ms`: every
  task deserialises the stage's task binary, which for a stage writing files holds the
  Hadoop configuration). The rest of the stage's time, per component, is shared out by the
  data each task reads.
* **Map side.** A map task writing a shuffle pays per reduce partition it writes, whatever
  its data (the front end's `StageChange.write_ms`: for Spark, a file per partition up to
  the bypass threshold): more partitions make the map stage slower too, and a map stage
  re-split into more tasks pays it once per task. That is what makes a PySpark RDD job
  quadratic in its partition count. A writer that orders records by partition pays per
  record too (`StageChange.record_ms`: for Spark, past the bypass threshold), which follows
  the data.
* **Reduce side.** A task reading a shuffle pays per block it fetches, whatever its bytes
  (the front end's `StageChange.read_ms`: for Spark, a block from each map task holding rows
  for its partitions): a shuffle's blocks are its map tasks times its partitions, so more
  partitions on both sides of a shuffle make its reading quadratic in them.
* **Memory.** A task's working set grows with its data (the stage's working set per byte
  read); whatever outgrows the execution memory a task got in the profiled run (inferred
  from the tasks that spilled, else its share of the executor's unified memory) spills, at
  the stage's measured spill time per byte where it spilled, else at the disk's per-task
  rate (the memory law of `perfmodel.simulate.laws`), and costs
  `laws.SPILL_CPU_NS_PER_BYTE` of CPU per byte.
* **Concurrency.** With fewer tasks than slots fewer run at once: the stage's concurrency
  moves with its mean parallelism, and its CPU, disk and network time with the contention
  and bandwidth laws, as a change of slots would move them.

Stages whose partitioning the settings do not change are left exactly as compiled, so a
what-if that changes nothing predicts the baseline replay.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.partition_change import JoinChange, PartitionPlan, StageChange
from perfmodel.errors import PerfmodelError
from perfmodel.simulate import laws
from perfmodel.simulate.config import ClusterConfig
from perfmodel.simulate.join_switch import ShuffleCost, apply_join_change, shuffle_cost
from perfmodel.simulate.laws import FloatArray
from perfmodel.simulate.rescale import (
    contention_factors,
    mean_parallelism,
    spill_cpu_ms,
    spill_cpu_rate,
    working_set,
)
from perfmodel.simulate.stage_work import (
    CPU,
    CPU_OTHER,
    DISK,
    GC,
    NETWORK,
    SCHEDULING,
    SPILL,
    StageWork,
)
from perfmodel.simulate.workload import Workload

WARM_TASK_MS = 12.0
"""Fixed cost of a task in a stage of many (a warm JVM: code compiled, classes loaded), where
the run itself measured no task's launch at all, and the most a task a re-split adds pays
(`warm_task_ms`): the mean task time of the two later
2,000-task stages of a scratch aggregation (11.0 and 13.3 ms; local[2], this project's study
machine), whose tasks read ~60 bytes each."""
LAUNCH_QUANTILE = 5.0
"""Where a run has no stage of many small tasks, a task it would add pays this percentile of
its tasks' launch overheads: the fastest launches it saw, as the first tasks of a JVM pay
class loading and compilation that a warm one does not (a run of a few dozen tasks is mostly
cold: its lower quartile was 37 ms where its 2,000-task run measured 10 ms; TPC-H's
2,000-task stages launched in 3–8 ms, under the 12 ms of `WARM_TASK_MS`). Chosen on the
settings study of 2026-11-28, whose runs are training data for it (`docs/settings.md`)."""
MANY_TASKS = 20
"""A stage of at least this many tasks (and four per slot) measures the warm fixed cost."""
MAX_TASKS = 20_000_000
"""Most tasks a re-partitioned workload may hold: each is a number per component the replay
keeps (settings asking more are refused)."""


class TooManyTasksError(PerfmodelError, ValueError):
    """A re-partitioning that would make more tasks than the replay holds."""


@dataclass(slots=True)
class Repartitioned:
    """A workload re-split for new settings, and what changed."""

    workload: Workload
    changes: list[StageChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    joins: list[JoinChange] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.joins)


@dataclass(frozen=True, slots=True)
class SlotView:
    """What a stage's concurrency law needs of the configuration it runs on."""

    slots: int
    hosts: int
    slots_per_host: int

    @classmethod
    def of(cls, config: ClusterConfig) -> SlotView:
        return cls(config.slots, config.hosts, config.slots_per_host)


def warm_task_ms(
    workload: Workload, slots: int, writers: frozenset[StageKey] = frozenset()
) -> float:
    """The fixed cost of a task once the JVM is warm: the median, over the run's stages of
    many tasks that were mostly overhead (each read little and ran for less than three
    times its launch overhead), of their median task time. Where the run has no such
    stage: the `LAUNCH_QUANTILE` of its tasks' launch overheads (launch, deserialisation,
    result), the warmest it saw; `WARM_TASK_MS` where it measured none. At most
    `WARM_TASK_MS`: a JVM keeps warming past the few hundred tasks a run shows, so a task
    added to make thousands pays less than the run's warmest (a word count's tiny tasks took
    23 ms past the 64th of 200 and 10 ms past the 200th of 2,000, where the stage before had
    run as many). The cap is the study machine's: a slower machine's warm task costs more.

    ``writers`` (`PartitionPlan.writers`) are left out: a task writing a file pays for the
    file, and deserialises the writer's configuration. A 64-task JSON write whose tasks
    read 254 KiB each took 160 ms a task, and made a "warm" task's cost 95 ms where the
    same run's listing tasks took 31 ms (and 13 ms each at 2,000 files)."""
    medians = []
    launches = []
    for w in workload.stages:
        if not w.n_tasks or w.key in writers:
            continue
        launches.append(w.components[SCHEDULING])
        if w.n_tasks < max(MANY_TASKS, 4 * slots):
            continue
        if not w.tiny_tasks:
            continue
        wall = w.components.sum(axis=0)
        launch = float(np.median(w.components[SCHEDULING]))
        if float(np.median(wall)) - launch < 3.0 * launch:
            medians.append(float(np.median(wall)))
    if medians:
        return min(float(np.median(medians)), WARM_TASK_MS)
    if not launches:
        return WARM_TASK_MS
    warmest = float(np.percentile(np.concatenate(launches), LAUNCH_QUANTILE))
    return min(warmest, WARM_TASK_MS)


def partition_cost_paid(work: StageWork, write_ms: FloatArray | float) -> FloatArray:
    """What each task of a map stage paid for writing its shuffle's partitions: the front
    end's ``write_ms`` (`StageChange.write_ms`), bounded by the CPU, other and disk time the
    task was measured to spend (the cost is mostly the task thread's CPU, some of it a
    Python worker's or the shuffle write's), so a run whose file system writes partitions
    faster than the study machine's is not credited with savings it never paid."""
    c = work.components
    return np.minimum(write_ms, c[CPU] + c[CPU_OTHER] + c[DISK])


def strip_partition_cost(work: StageWork, paid: FloatArray) -> StageWork:
    """``work`` without the per-partition write cost its tasks ``paid``: off their CPU time
    first, then their other and disk time."""
    c = work.components.copy()
    left = np.asarray(paid, dtype=np.float64)
    for row in (CPU, CPU_OTHER, DISK):
        taken = np.minimum(left, c[row])
        c[row] -= taken
        left = left - taken
    return replace(work, components=c)


def add_partition_cost(work: StageWork, cost: FloatArray | float) -> StageWork:
    """``work`` with each task paying ``cost`` more CPU for the partitions it writes (and the
    blocks it fetches)."""
    c = work.components.copy()
    c[CPU] += cost
    return replace(work, components=c)


def split_write_cost(
    work: StageWork, write_ms: tuple[float, float]
) -> tuple[StageWork, FloatArray]:
    """A stage without a per-task cost each task paid for the old counts (``write_ms[0]``:
    a map task's partitions written, or a reduce task's blocks fetched,
    `partition_cost_paid`), and what each would pay for the new ones, in proportion."""
    before, after = write_ms
    paid = partition_cost_paid(work, before)
    return strip_partition_cost(work, paid), paid * (after / before)


def rewrite_map_side(work: StageWork, write_ms: tuple[float, float]) -> StageWork:
    """A map stage whose shuffle now has another partition count: each of its tasks pays
    the new count's write cost (``write_ms[1]``) in place of what it paid for the old."""
    before, after = write_ms
    if before <= 0 or after == before or work.n_tasks == 0:
        return work
    stripped, cost = split_write_cost(work, write_ms)
    return add_partition_cost(stripped, cost)


def reprice_records(work: StageWork, record_ms: tuple[float, float]) -> StageWork:
    """A map stage whose shuffle writer now handles its records otherwise
    (`StageChange.record_ms`: its mean task's cost before and after): the change shared
    out by the bytes each task read, as its records follow its data, added to its CPU or
    taken off what it was measured to spend (`partition_cost_paid`). Done before a re-split,
    it is then shared out with the rest of the stage's data."""
    before, after = record_ms
    n = work.n_tasks
    if n == 0 or after == before:
        return work
    read = work.read_bytes
    total = float(read.sum())
    share = read * (n / total) if total > 0 else np.ones(n)
    change = (after - before) * share
    if after > before:
        return add_partition_cost(work, change)
    return strip_partition_cost(work, partition_cost_paid(work, -change))


def own_launch_ms(work: StageWork, slots: int) -> float:
    """What the stage's own tasks paid to launch once the JVM was warm: the median launch
    overhead (launch, deserialisation, result) of the later half of its tasks, in launch
    order, where it ran at least `MANY_TASKS` tasks and four per slot; 0 otherwise (too few
    tasks to be past the JVM's warm-up).

    Each task deserialises the stage's task binary, so a task a re-split adds pays that as
    its stage's tasks did, however warm the JVM. `warm_task_ms` reads the run's cheapest
    launches, which may come from stages whose binaries are small. Measured on a run that
    writes Parquet from 400 reduce tasks (local[2], 2026-12-01): their launch overheads fell
    from 75 ms (median of the first 50) to 34-36 ms (the last 150), of which 35 ms was
    deserialising the task (the Hadoop configuration the writer carries; 38 ms a task in
    stack samples), where the run's warm cost from its other stages was 26 ms."""
    n = work.n_tasks
    if n < max(MANY_TASKS, 4 * slots):
        return 0.0
    return float(np.median(work.components[SCHEDULING][n // 2 :]))


def resplit(
    work: StageWork,
    data: FloatArray,
    base: ClusterConfig,
    warm: float = WARM_TASK_MS,
    task_fixed_ms: tuple[float, float] = (0.0, 0.0),
    launch_ms: float = 0.0,
) -> StageWork:
    """``work`` re-split into tasks reading ``data`` bytes each (see the module's doc);
    ``warm``: the fixed cost of a task the stage did not have before (`warm_task_ms`), or
    the stage's own warm launch where that is more (`own_launch_ms`), at most what its tasks
    paid;
    ``task_fixed_ms``: what each task paid and pays whatever its data beyond its launch,
    before and after (`StageChange.task_fixed_ms`), every new task included;
    ``launch_ms``: the least a task added pays to launch, by what the stage is
    (`StageChange.launch_ms`), where its own tasks were too few to measure it."""
    c = work.components
    n0 = c.shape[1]
    n1 = len(data)
    old_data = np.asarray(work.read_bytes, dtype=np.float64)
    data = np.asarray(data, dtype=np.float64)
    if n0 == 0:
        return work
    # The share of the stage each new task gets: by data where there is data to go by.
    if float(data.sum()) > 0 and float(old_data.sum()) > 0:
        share = data / float(data.sum())
        scale = float(data.sum()) / float(old_data.sum())
    else:
        share = np.full(n1, 1.0 / max(n1, 1))
        scale = 1.0
    # Spill and the CPU spent spilling come off before the split; they are worked out anew.
    body = c.copy()
    body[SPILL] = 0.0
    spill_cpu = spill_cpu_ms(work)
    thread = body[CPU] - spill_cpu
    body[CPU] = np.maximum(thread, 0.0)
    body[CPU_OTHER] = body[CPU_OTHER] + np.minimum(thread, 0.0)
    totals = body.sum(axis=1)
    wall = float(totals.sum())
    # Each task's fixed cost, with the stage's mix of components: the i-th task pays what
    # the stage's i-th task (in launch order) paid, so a stage cut to fewer tasks keeps its
    # first, coldest ones; tasks beyond its old count pay the warm cost, or the stage's own
    # warm launch where that is more (at most what a task paid on average).
    if work.tiny_tasks:
        per_task = totals / n0
        own = body  # tasks that read little are all fixed cost
    else:
        per_task = np.zeros_like(totals)
        per_task[SCHEDULING] = min(float(np.median(c[SCHEDULING])), totals[SCHEDULING] / n0)
        own = np.zeros_like(body)
        own[SCHEDULING] = body[SCHEDULING]
    variable = totals - own.sum(axis=1)
    fixed = np.repeat(per_task[:, None], n1, axis=1)
    kept = min(n0, n1)
    fixed[:, :kept] = own[:, :kept]
    if n1 > n0 and wall > 0:
        size = float(per_task.sum())
        added = max(warm, own_launch_ms(work, base.slots), launch_ms)
        if work.tiny_tasks:
            added += task_fixed_ms[1]  # its whole time is fixed: its files' too
        fixed[:, n0:] *= min(1.0, added / size) if size > 0 else 0.0
    paid_ms, pays_ms = task_fixed_ms
    if (paid_ms > 0 or pays_ms > 0) and not work.tiny_tasks:
        # Each task's own fixed cost (its output files), in the mix of the time it is in:
        # what it paid (at most what the tasks spent beyond their launch) comes off, and
        # each new task pays the new cost, in the same proportion to what it is charged.
        rest = variable.copy()
        rest[SCHEDULING] = 0.0
        total = float(rest.sum())
        if total > 0:
            paid = min(paid_ms, total / n0)
            variable = variable - paid * n0 * rest / total
            pays = pays_ms * (paid / paid_ms) if paid_ms > 0 else pays_ms
            fixed = fixed + (pays * rest / total)[:, None]
    new = fixed + variable[:, None] * share[None, :] * scale
    # Memory: the working set follows the data; what outgrows the task's memory spills.
    ws0 = working_set(work)
    ws_total = float(np.where(np.isfinite(ws0), ws0, 0.0).sum())
    ws = ws_total * scale * share
    available = _task_memory(work, ws0, base)
    overflow = laws.overflow_bytes(ws, available)
    mem_spill_total = float(work.memory_spill.sum())
    if mem_spill_total > 0:
        ms_per_byte = float(c[SPILL].sum()) / mem_spill_total
        disk_ratio = float(work.disk_spill.sum()) / mem_spill_total
    else:
        disk_ratio = 0.5
        ms_per_byte = 2.0 * disk_ratio * 1000.0 * max(1.0, work.concurrency) / base.disk_bw
    new[SPILL] = overflow * ms_per_byte
    new[CPU] += overflow * spill_cpu_rate(work)
    durations0 = c.sum(axis=0)
    durations1 = new.sum(axis=0)
    view = SlotView.of(base)
    k0 = float(work.concurrency)
    k1 = _new_concurrency(k0, durations0, durations1, view)
    if k1 != k0:
        cf0, cf1 = contention_factors(
            k0,
            k1,
            work.cpu_demand,
            base.host_cores,
            base.host_cores,
            work.taken_cores,
            work.other_cores,
            work.jvm_other_cores,
        )
        cpu_f = float(cf1) / float(cf0)
        for row in (CPU, CPU_OTHER, GC):
            new[row] *= cpu_f
        disk_f = float(
            laws.bandwidth_factor(
                1.0, 1.0, laws.io_streams(k0, work.disk_share), laws.io_streams(k1, work.disk_share)
            )
        )
        net_f = float(
            laws.bandwidth_factor(
                1.0,
                1.0,
                laws.io_streams(k0, work.network_share),
                laws.io_streams(k1, work.network_share),
            )
        )
        new[DISK] *= disk_f
        new[SPILL] *= disk_f
        new[NETWORK] *= net_f
    peak = np.minimum(ws, available) if np.isfinite(available) else ws
    return replace(
        work,
        components=new,
        peak_memory=peak,
        memory_spill=overflow,
        disk_spill=overflow * disk_ratio,
        read_bytes=data,
        concurrency=k1,
    )


def _task_memory(work: StageWork, ws0: FloatArray, base: ClusterConfig) -> float:
    """Execution memory a task of the stage had: what the tasks that spilled held (their
    working set less what they spilled), else its share of the executor's unified memory."""
    spilled = work.memory_spill > 0
    if spilled.any():
        held = ws0[spilled] - work.memory_spill[spilled]
        held = held[np.isfinite(held) & (held > 0)]
        if held.size:
            return float(np.median(held))
    per_exec = max(1.0, work.concurrency / max(base.executors_per_host, 1))
    return laws.usable_memory(base.memory_bytes, base.memory_fraction) / per_exec


def _new_concurrency(
    k0: float, durations0: FloatArray, durations1: FloatArray, view: SlotView
) -> float:
    """The stage's tasks running at once on a host with its new tasks: the observed
    concurrency scaled by its mean parallelism, new over old (`rescale.mean_parallelism`)."""
    p0 = mean_parallelism(durations0, view.slots) / max(view.hosts, 1)
    p1 = mean_parallelism(durations1, view.slots) / max(view.hosts, 1)
    p0, p1 = max(p0, 1.0), max(p1, 1.0)
    if math.isclose(p0, p1):
        return k0
    return float(min(max(1.0, k0 * p1 / p0), max(view.slots_per_host, 1)))


def check_plan(workload: Workload, plan: PartitionPlan) -> None:
    """Refuse a plan that would make more tasks than the replay holds (`MAX_TASKS`), before
    anything is re-split."""
    by_key = {c.key: c.new_partitions for c in plan.changes}
    total = sum(by_key.get(w.key, w.n_tasks) for w in workload.stages)
    if total > MAX_TASKS:
        raise TooManyTasksError(
            f"these settings would make {total:,} tasks; perfmodel replays at most {MAX_TASKS:,}"
        )


def repartition_workload(
    workload: Workload,
    profile: ApplicationProfile,
    plan: PartitionPlan,
    base_config: ClusterConfig,
) -> Repartitioned:
    """The workload with every stage ``plan`` re-partitions re-split and every join it
    switches priced, and notes saying which stages changed and why; stages it leaves alone
    are the compiled ones."""
    check_plan(workload, plan)
    by_key = {c.key: c for c in plan.changes}
    notes = list(plan.notes)
    map_side: dict[StageKey, tuple[float, float]] = {}
    records: dict[StageKey, tuple[float, float]] = {}
    for planned in plan.changes:
        for key, ms in planned.write_ms.items():
            if ms[0] > 0:
                # Kept where the count stays too: a map stage re-split into more tasks (a
                # new file split) has each of them pay for the partitions it writes.
                map_side[key] = ms
        records.update(planned.record_ms)
    switches: list[JoinChange] = []
    if plan.joins:
        cost = shuffle_cost(profile, workload)
        for join in plan.joins:
            if cost is None and join.shuffled_bytes:
                notes.append(
                    f"query {join.query_id}: its {join.before} join would become a {join.after} "
                    "join, but the run has no shuffle-only stage to measure a shuffle's cost "
                    "on: not predicted"
                )
            else:
                switches.append(join)
    else:
        cost = None
    switch_of: dict[StageKey, list[JoinChange]] = defaultdict(list)
    for switch in switches:
        for key in {*switch.shuffled_bytes, *switch.scaled}:
            switch_of[key].append(switch)
    warm = warm_task_ms(workload, base_config.slots, plan.writers)
    works: list[StageWork] = []
    applied: list[StageChange] = []
    for work in workload.stages:
        change = by_key.get(work.key)
        writes = map_side.get(work.key)
        each = 0.0
        if work.key in records:
            work = reprice_records(work, records[work.key])
        if writes is not None and change is not None and work.n_tasks:
            # Re-split and writing a new count: the write cost is a per-task cost, taken
            # off before the stage's time is shared out and paid again by every new task.
            work, paid_anew = split_write_cost(work, writes)
            each = float(paid_anew.mean())
        elif writes is not None:
            work = rewrite_map_side(work, writes)
        if change is not None and change.read_ms[0] > 0 and work.n_tasks:
            # Its blocks' fetching too: a per-task cost by the blocks a task reads, taken off
            # before the split and paid anew by every new task.
            work, fetches_anew = split_write_cost(work, change.read_ms)
            each += float(fetches_anew.mean())
        for switch in switch_of.get(work.key, ()):
            work = apply_join_change(work, switch, cost or _NO_COST)
        if change is None:
            works.append(work)
            continue
        work = resplit(work, change.data, base_config, warm, change.task_fixed_ms, change.launch_ms)
        works.append(add_partition_cost(work, each) if each > 0 else work)
        applied.append(change)
    notes[:0] = [s.why for s in switches]
    if applied:
        # Which stages moved, and how, the caller reports from `Repartitioned.changes`.
        notes.append(
            "a re-split stage's tasks each pay the fixed cost its tasks paid (launch, "
            f"deserialisation, result); tasks beyond its old count pay {warm:.0f} ms (a warm "
            "JVM's), or what the stage's own later tasks paid to launch, or a task writing "
            "output pays to launch, where that was more; "
            "the rest of its time is shared out by data"
        )
    elif not switches:
        notes.insert(0, "no stage's partitions change under these settings")
    new = replace(workload, stages=works, notes=list(workload.notes) + notes)
    return Repartitioned(new, applied, notes, switches)


_NO_COST = ShuffleCost(0.0, 0.0)
"""The cost of a switch that adds no shuffled bytes (it only scales stages)."""
