"""Re-splitting a stage's work into other partitions, on hand-built stages with known answers:
skew survives, each task pays its fixed cost, a partition that outgrows its memory spills."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.dag.concurrency import task_concurrency
from perfmodel.dag.partition_change import PartitionPlan, StageChange
from perfmodel.simulate.app_tasks import AppTasks
from perfmodel.simulate.config import baseline_config
from perfmodel.simulate.repartition import (
    MANY_TASKS,
    WARM_TASK_MS,
    own_launch_ms,
    repartition_workload,
    reprice_records,
    resplit,
    rewrite_map_side,
    warm_task_ms,
)
from perfmodel.simulate.stage_work import (
    CPU,
    CPU_OTHER,
    DISK,
    SCHEDULING,
    SPILL,
    StageWork,
    stage_works,
)
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import Workload
from perfmodel.spark.partition_plan import partition_contents
from perfmodel.spark.partition_rules import (
    BLOCK_READ_MS,
    FILE_PER_PARTITION_MS,
    JVM_RDD_WRITER,
    PYTHON_WRITER,
    SORTED_PARTITION_MS,
    SORTED_RECORD_MS,
    SQL_WRITER,
    blocks_per_task,
    files_per_task,
    partition_write_ms,
    partitions_written,
    records_after,
    sorted_record_ms,
)

MB = 1 << 20


def _stage(tasks: list[TaskSpec], memory: int = 1 << 30) -> tuple[StageWork, object]:
    profile = build_synthetic([[StageSpec(0, tasks)]], 1, memory_bytes=memory)
    base = baseline_config(profile)
    app = AppTasks.of(profile)
    (work,) = stage_works(
        [profile.stages[(0, 0)]], [0], app, base, task_concurrency(app.table), None, {}
    )
    return work, base


def test_a_hot_key_stays_whole_whatever_the_partition_count() -> None:
    sizes = np.array([10, 11, 9, 10, 10, 12, 10, 200], dtype=np.float64) * MB
    contents = partition_contents(sizes, exact=True, planned=8)
    assert contents.hot.size == 1
    assert contents.hot[0] == pytest.approx(190 * MB, rel=0.02)
    for n in (2, 8, 64, 1000):
        parts = contents.sizes_at(n)
        assert parts.sum() == pytest.approx(sizes.sum())
        # The hot mass lands whole in one partition: that partition holds at least it.
        assert parts.max() >= contents.hot[0]
    # At the measured count the measured sizes are used as they are.
    assert contents.sizes_at(8).tolist() == sizes.tolist()


def test_even_data_has_no_hot_mass_and_spreads_evenly() -> None:
    sizes = np.full(16, 5 * MB, dtype=np.float64)
    contents = partition_contents(sizes, exact=True, planned=16)
    assert contents.hot.size == 0
    assert contents.sizes_at(4) == pytest.approx([20 * MB] * 4)


def test_coalesced_reads_give_the_spread_over_the_planned_partitions() -> None:
    # AQE read 200 planned partitions as 4 tasks of ~25 MB, one of them holding a hot key.
    tasks = np.array([25, 24, 26, 125], dtype=np.float64) * MB
    contents = partition_contents(tasks, exact=False, planned=200)
    assert contents.measured is None
    assert contents.hot.size == 1
    assert contents.hot[0] > 100 * MB


def test_each_task_pays_its_fixed_cost() -> None:
    task = TaskSpec(run_ms=900, cpu_ms=900, overhead_ms=100, input_bytes=64 * MB)
    work, base = _stage([task] * 4)
    assert work.components.sum() == pytest.approx(4000)
    more = resplit(work, np.full(40, 16 * MB / 1.0 * 0.4), base)  # same 256 MB in 40 tasks
    # The four tasks' fixed cost stays; the 36 new ones pay a warm task's; the work moves.
    assert more.n_tasks == 40
    assert more.components.sum() == pytest.approx(4 * 100 + 36 * WARM_TASK_MS + 3600, rel=1e-6)
    fewer = resplit(work, np.array([256.0 * MB]), base)
    assert fewer.n_tasks == 1
    assert fewer.components.sum() == pytest.approx(100 + 3600, rel=1e-6)
    assert fewer.components[CPU].sum() == pytest.approx(3600, rel=1e-6)
    assert fewer.components[SCHEDULING].sum() == pytest.approx(100, rel=1e-6)
    # Data decides each task's share.
    skewed = resplit(work, np.array([192.0, 64.0]) * MB, base)
    assert skewed.components.sum(axis=0) == pytest.approx([100 + 2700, 100 + 900], rel=1e-6)


def test_a_task_added_pays_the_warmest_launch_the_run_saw() -> None:
    # A run of a dozen big tasks, mostly cold: launches of 40-60 ms, and two warm ones of 6 ms.
    # A task a re-split adds runs in a warm JVM: it pays the fastest launches (the 5th
    # percentile), not the lower quartile (40 ms), nor a 12 ms floor.
    launches = [60, 55, 50, 48, 45, 44, 42, 41, 40, 40, 6, 6]
    tasks = [
        TaskSpec(run_ms=900, cpu_ms=900, overhead_ms=ms, input_bytes=64 * MB) for ms in launches
    ]
    work, _ = _stage(tasks)
    workload = Workload("app", 10_000.0, [work], [], 0)
    assert warm_task_ms(workload, slots=2) == pytest.approx(6.0)
    # A run that measured no launch at all falls back on the measured constant.
    assert warm_task_ms(Workload("app", 1.0, [], [], 0), slots=2) == WARM_TASK_MS


def test_a_task_added_pays_its_stage_s_own_warm_launch_where_that_is_more() -> None:
    # A stage of 40 tasks writing files: each deserialises a large task binary, so its launches
    # fall from 75 ms (cold) to 35 ms and stay there; the run's warmest launch elsewhere was
    # 6 ms. A task a re-split adds pays the 35 ms its stage's warm tasks paid.
    launches = [75.0] * 20 + [35.0] * 20
    tasks = [
        TaskSpec(run_ms=100, cpu_ms=100, overhead_ms=ms, input_bytes=1 * MB) for ms in launches
    ]
    work, base = _stage(tasks)
    assert own_launch_ms(work, slots=2) == pytest.approx(35.0)
    more = resplit(work, np.full(80, 40 * MB / 80), base, warm=6.0)
    # The 40 tasks keep their median launch (55 ms), the 40 new ones pay 35 ms, and the
    # rest of the stage's time (6,200 - 40 x 55 ms) is shared out by data.
    assert more.components[SCHEDULING][40:].sum() == pytest.approx(40 * 35.0, rel=1e-6)
    assert more.components.sum() == pytest.approx(40 * 55 + 40 * 35 + (6200 - 40 * 55), rel=1e-6)
    # Where the run's warm cost is the higher one, it stands; and a stage of too few tasks to
    # be past the JVM's warm-up measures no launch of its own.
    assert resplit(work, np.full(80, 40 * MB / 80), base, warm=50.0).components[SCHEDULING][
        40:
    ].sum() == pytest.approx(40 * 50.0, rel=1e-6)
    few, _ = _stage(tasks[: MANY_TASKS - 1])
    assert own_launch_ms(few, slots=2) == 0.0


def test_stages_that_wrote_files_do_not_measure_a_warm_task() -> None:
    # Two stages of 40 tiny tasks: one writing a file each (160 ms a task, 68 ms of it its
    # launch), one listing files (8 ms). A task that writes a file pays for it, so only the
    # listing measures what a bare task costs a warm JVM; and a run's warm cost is at most
    # the measured floor (a JVM keeps warming past the tasks a run shows).
    writer = [TaskSpec(run_ms=92, cpu_ms=50, overhead_ms=68, input_bytes=200_000)] * 40
    lister = [TaskSpec(run_ms=1, cpu_ms=1, overhead_ms=7, input_bytes=0)] * 40
    profile = build_synthetic([[StageSpec(0, writer), StageSpec(1, lister)]], 2)
    app = AppTasks.of(profile)
    base = baseline_config(profile)
    stages = [profile.stages[(0, 0)], profile.stages[(1, 0)]]
    works = stage_works(stages, [0, 1], app, base, task_concurrency(app.table), None, {})
    workload = Workload("app", 10_000.0, works, [], 0)
    assert all(w.tiny_tasks for w in works)
    assert warm_task_ms(workload, slots=2) == pytest.approx(WARM_TASK_MS)  # (160 + 8) / 2
    assert warm_task_ms(workload, slots=2, writers=frozenset({(0, 0)})) == pytest.approx(8)


def test_tiny_tasks_are_all_fixed_cost() -> None:
    # Tasks reading a few KB spend their time on being tasks: fewer of them save it all.
    task = TaskSpec(run_ms=20, cpu_ms=10, overhead_ms=10, input_bytes=4096)
    work, base = _stage([task] * 200)
    fewer = resplit(work, np.full(4, 200 * 4096 / 4), base)
    assert fewer.components.sum() == pytest.approx(4 * 30)


def test_a_stage_cut_to_fewer_tasks_keeps_its_first_coldest_ones() -> None:
    # A JVM's first tasks of a stage load classes and compile code: 200 tiny tasks, the first
    # 20 at 100 ms, the rest warm at 30 ms. Cut to 10 tasks, the stage runs only cold ones:
    # they pay what its first ten paid, not the stage's mean (37 ms).
    tasks = [TaskSpec(run_ms=90, cpu_ms=90, overhead_ms=10, input_bytes=4096)] * 20
    tasks += [TaskSpec(run_ms=20, cpu_ms=20, overhead_ms=10, input_bytes=4096)] * 180
    work, base = _stage(tasks)
    assert work.tiny_tasks
    fewer = resplit(work, np.full(10, 200 * 4096 / 10), base)
    assert fewer.components.sum() == pytest.approx(10 * 100, rel=1e-6)
    # A stage of big tasks keeps its first tasks' launches; its run time follows the data.
    launches = [75.0] * 20 + [35.0] * 20
    big = [TaskSpec(run_ms=100, cpu_ms=100, overhead_ms=ms, input_bytes=1 * MB) for ms in launches]
    work, base = _stage(big)
    fewer = resplit(work, np.full(10, 40 * MB / 10), base)
    assert fewer.components[SCHEDULING].sum() == pytest.approx(10 * 75.0, rel=1e-6)
    assert fewer.components.sum() == pytest.approx(10 * 75.0 + 40 * 100, rel=1e-6)


def test_a_task_added_to_a_stage_writing_output_pays_the_writer_s_launch() -> None:
    # Eight cold writer tasks (90 ms launches), too few to show their own warm launch, in a
    # run whose warmest launch was 6 ms: the 72 tasks a re-split adds pay the writer's warm
    # launch (40 ms here), never more than the stage's tasks paid.
    task = TaskSpec(run_ms=500, cpu_ms=500, overhead_ms=90, input_bytes=8 * MB)
    work, base = _stage([task] * 8)
    assert own_launch_ms(work, slots=2) == 0.0
    data = np.full(80, 64 * MB / 80)
    plain = resplit(work, data, base, warm=6.0)
    writer = resplit(work, data, base, warm=6.0, launch_ms=40.0)
    assert plain.components[SCHEDULING][8:] == pytest.approx(6.0)
    assert writer.components[SCHEDULING][8:] == pytest.approx(40.0)
    assert writer.components[SCHEDULING][:8] == pytest.approx(90.0)
    capped = resplit(work, data, base, warm=6.0, launch_ms=500.0)
    assert capped.components[SCHEDULING][8:] == pytest.approx(90.0)


def test_a_task_added_to_a_tiny_writer_pays_for_its_file_too() -> None:
    # 10 tiny tasks writing a file each (150 ms: 60 ms launch, 90 ms running), too few to
    # show their own warm launch: all fixed cost. A task a re-split adds pays a writer's warm
    # launch (30 ms) and its file (22 ms), never more than the tasks paid.
    task = TaskSpec(run_ms=90, cpu_ms=90, overhead_ms=60, input_bytes=4096)
    work, base = _stage([task] * 10)
    assert work.tiny_tasks
    data = np.full(100, 10 * 4096 / 100)
    more = resplit(work, data, base, warm=6.0, task_fixed_ms=(22.0, 22.0), launch_ms=30.0)
    assert more.components[:, 10:].sum(axis=0) == pytest.approx(30.0 + 22.0)
    launch_only = resplit(work, data, base, warm=6.0, launch_ms=30.0)
    assert launch_only.components[:, 10:].sum(axis=0) == pytest.approx(30.0)
    capped = resplit(work, data, base, warm=6.0, task_fixed_ms=(200.0, 200.0), launch_ms=30.0)
    assert capped.components[:, 10:].sum(axis=0) == pytest.approx(150.0)


def test_a_partition_that_outgrows_its_memory_spills() -> None:
    # 512 MiB heap: (512 - 300) MiB x 0.6 = 127 MiB of execution memory for the one task.
    task = TaskSpec(run_ms=1000, cpu_ms=1000, input_bytes=64 * MB, peak_memory=100 * MB)
    work, base = _stage([task] * 4, memory=512 * MB)
    assert work.components[SPILL].sum() == 0
    one = resplit(work, np.array([256.0 * MB]), base)
    # Working set 4 x 100 MiB in one task: 400 - 127.2 MiB overflow, spilled and read back.
    overflow = 400 * MB - (512 - 300) * MB * 0.6
    assert one.memory_spill[0] == pytest.approx(overflow, rel=1e-6)
    assert one.components[SPILL][0] > 0
    assert one.components[CPU][0] > 4000 * 1.0 - 1e-6  # spilling costs CPU too
    many = resplit(work, np.full(8, 32.0 * MB), base)
    assert many.memory_spill.sum() == 0 and many.components[SPILL].sum() == 0


def test_a_stage_that_spilled_spills_at_its_own_rate() -> None:
    task = TaskSpec(
        run_ms=2000,
        cpu_ms=1500,
        input_bytes=64 * MB,
        peak_memory=50 * MB,
        memory_spill=100 * MB,
        disk_spill=40 * MB,
    )
    work, base = _stage([task] * 2)
    per_byte = work.components[SPILL].sum() / work.memory_spill.sum()
    two_halves = resplit(work, np.full(4, 32.0 * MB), base)
    # Working set 150 MiB per old task; held 50 MiB: each new task (75 MiB) spills 25 MiB.
    assert two_halves.memory_spill == pytest.approx([25 * MB] * 4, rel=1e-6)
    assert two_halves.components[SPILL] == pytest.approx([25 * MB * per_byte] * 4, rel=1e-6)
    assert two_halves.disk_spill.sum() == pytest.approx(100 * MB * 0.4, rel=1e-6)


def test_map_tasks_pay_for_the_partitions_they_put_rows_in() -> None:
    sql = FILE_PER_PARTITION_MS[SQL_WRITER]
    # Many records fill every partition; a dozen (a partial aggregation over a dozen keys)
    # fill at most a dozen, whatever the count; none fill none.
    assert partitions_written(200, 1e6) == pytest.approx(200)
    assert partitions_written(2000, 12) == pytest.approx(12, rel=0.01)
    assert partitions_written(2000, 12) < 12
    assert partitions_written(200, 200) == pytest.approx(200 * (1 - (1 - 1 / 200) ** 200))
    assert partitions_written(200, 0) == 0.0
    assert partitions_written(200, None) == 200
    assert partitions_written(1, 5) == 1.0  # one partition: filled by any record
    assert partition_write_ms(200, SQL_WRITER, 1e6) == pytest.approx(200 * sql)
    assert partition_write_ms(2000, SQL_WRITER, 12) == pytest.approx(
        12 * SORTED_PARTITION_MS, rel=0.01
    )
    assert partition_write_ms(200, SQL_WRITER, 12) == pytest.approx(12 * sql, rel=0.05)


def test_a_write_partitioned_by_its_own_exchange_writes_a_file_per_value() -> None:
    # Rows repartitioned by the partition column itself hold each value in one task: 5
    # channels wrote 5 files from 8 tasks and from 2,000. The run's own count places the
    # write there, where rows spread evenly would have made 40 and 10,000.
    spread = 8 * files_per_task(8, 700_000, 5)
    assert spread == pytest.approx(40)
    for tasks in (8, 64, 2000):
        assert tasks * files_per_task(tasks, 700_000, 5, (5, 8)) == pytest.approx(5)


def test_map_tasks_pay_for_the_partitions_they_write() -> None:
    sql, python = FILE_PER_PARTITION_MS[SQL_WRITER], FILE_PER_PARTITION_MS[PYTHON_WRITER]
    assert partition_write_ms(200, SQL_WRITER) == pytest.approx(200 * sql)
    assert partition_write_ms(200, PYTHON_WRITER) == pytest.approx(200 * python)
    # Beyond the bypass threshold, one sorted file whatever the writer.
    assert partition_write_ms(201, PYTHON_WRITER) == pytest.approx(201 * SORTED_PARTITION_MS)
    assert partition_write_ms(100, JVM_RDD_WRITER) == pytest.approx(100 * SORTED_PARTITION_MS)
    assert partition_write_ms(0, SQL_WRITER) == 0.0
    task = TaskSpec(run_ms=1500, cpu_ms=600, shuffle_write_ms=400, input_bytes=MB)
    work, _ = _stage([task] * 3)
    cpu, disk = work.components[CPU], work.components[DISK]
    write = (8 * python, 200 * python)
    more = rewrite_map_side(work, write)
    assert more.components[CPU] == pytest.approx(cpu + 192 * python)
    assert (more.components[DISK] == disk).all()
    fewer = rewrite_map_side(work, write[::-1])
    assert fewer.components[CPU] == pytest.approx(cpu - 192 * python)
    # A task never paid more for its partitions than its CPU, other and disk time: with
    # 150 ms of them, 200 partitions (420 ms at the study machine's rate) cost all 150.
    small, _ = _stage([TaskSpec(run_ms=150, cpu_ms=100, shuffle_write_ms=50)] * 2)
    c = small.components
    held = c[CPU] + c[CPU_OTHER] + c[DISK]
    assert held == pytest.approx([150, 150])
    cut = rewrite_map_side(small, (200 * python, 8 * python))
    kept = cut.components[CPU] + cut.components[CPU_OTHER] + cut.components[DISK]
    assert kept == pytest.approx(held * 8 / 200)
    assert rewrite_map_side(work, (write[0], write[0])) is work
    assert (more.components[SCHEDULING] == work.components[SCHEDULING]).all()


def test_a_re_split_map_stage_pays_for_its_partitions_once_per_task() -> None:
    # 4 map tasks writing 8 partitions become 40 writing 200: the write cost is per task, so
    # all 40 pay 200 partitions' worth, not the old 4 tasks' cost shared out by data.
    per = FILE_PER_PARTITION_MS[PYTHON_WRITER]
    task = TaskSpec(run_ms=2000, cpu_ms=1000, shuffle_write_ms=100, input_bytes=4 * MB)
    work, base = _stage([task] * 4)
    profile = build_synthetic([[StageSpec(0, [task] * 4)]], 1)
    change = StageChange(
        (0, 0),
        "default-parallelism",
        "spark.default.parallelism",
        4,
        40,
        np.full(40, 0.4 * MB),
        "40 partitions",
        [(0, 0)],
        (8, 200),
        {(0, 0): (8 * per, 200 * per)},
    )
    workload = Workload("app", 10_000.0, [work], [], 0)
    out = repartition_workload(workload, profile, PartitionPlan([change]), base)
    (new,) = out.workload.stages
    assert new.n_tasks == 40
    # Each new task: a tenth of a task's data CPU, plus 200 partitions' writes.
    data_cpu = float(work.components[CPU].mean()) - 8 * per
    assert new.components[CPU] == pytest.approx(data_cpu / 10 + 200 * per, rel=0.05)


def test_each_task_pays_its_own_output_file() -> None:
    # 4 tasks of 400 ms (beyond launch) each writing an output file: with 100 ms a file,
    # re-split into 40 tasks, each pays the 100 ms and a tenth of the other 300 ms.
    task = TaskSpec(run_ms=400, cpu_ms=400, input_bytes=4 * MB)
    work, base = _stage([task] * 4)
    sched = float(work.components[SCHEDULING].mean())
    body = float(work.components.sum(axis=0).mean()) - sched
    data = np.full(40, 0.4 * MB)
    plain = resplit(work, data, base)
    files = resplit(work, data, base, task_fixed_ms=(100.0, 100.0))
    assert files.n_tasks == plain.n_tasks == 40
    without = plain.components.sum(axis=0) - plain.components[SCHEDULING]
    with_files = files.components.sum(axis=0) - files.components[SCHEDULING]
    assert without == pytest.approx(body / 10, rel=0.05)
    assert with_files == pytest.approx(100.0 + (body - 100.0) / 10, rel=0.05)
    # Never more than the tasks spent beyond their launch.
    capped = resplit(work, data, base, task_fixed_ms=(10_000.0, 10_000.0))
    spent = capped.components.sum(axis=0) - capped.components[SCHEDULING]
    assert spent == pytest.approx(body, rel=0.05)


def test_a_reduce_task_fetches_a_block_from_each_map_task_holding_its_rows() -> None:
    # Item-affinity's last stage at 2,000 partitions: 2,000 map tasks of 1,857 records each;
    # the log counted 1,203 blocks a task.
    assert blocks_per_task(2000, 1857, 2000, 2000) == pytest.approx(1210, rel=0.01)
    # Records enough to fill every partition: a block from every map task.
    assert blocks_per_task(8, 1e6, 8, 8) == pytest.approx(8)
    # Coalesced to 100 tasks, each reads 20 partitions: a map task of 1,857 records holds
    # rows for nearly every task's range, and its contiguous blocks are fetched as one.
    assert blocks_per_task(2000, 1857, 2000, 100) == pytest.approx(2000, rel=0.01)
    # A skewed partition split in two pieces: each piece reads half of the map tasks.
    assert blocks_per_task(10, 1e6, 4, 8) == pytest.approx(5)
    assert blocks_per_task(10, 0, 4, 4) == 0.0
    assert blocks_per_task(10, None, 4, 4) == 10.0
    assert blocks_per_task(0, 100, 4, 4) == 0.0


def test_a_map_task_cut_smaller_writes_more_than_its_share_of_keys() -> None:
    # Item-affinity's map tasks at 8 tasks read 736,347 records and wrote 34,692 keys each.
    at_2000 = records_after(736_347, 34_692, 2_945)
    assert 2_945 * 34_692 / 736_347 < at_2000 < 2_945
    assert at_2000 == pytest.approx(2_824, rel=0.01)
    # Back at the run's own share it writes what it wrote; with more records, at most its keys.
    assert records_after(736_347, 34_692, 736_347) == pytest.approx(34_692, rel=1e-6)
    more = records_after(736_347, 34_692, 10 * 736_347)
    assert 34_692 < more < 34_692 * 1.001
    # A task that did not combine writes in proportion to what it reads.
    assert records_after(1_560, 1_502, 48_736) == pytest.approx(1_502 * 48_736 / 1_560)
    assert records_after(0, 100, 50) == 100
    assert records_after(100, 0, 50) == 0


def test_a_re_split_reduce_stage_pays_for_its_blocks_once_per_task() -> None:
    # 4 reduce tasks fetching 8 blocks each become 40 fetching 2,000: each of the 40 pays for
    # its 2,000 blocks, beside a tenth of a task's data CPU.
    task = TaskSpec(run_ms=2000, cpu_ms=1000, input_bytes=4 * MB)
    work, base = _stage([task] * 4)
    profile = build_synthetic([[StageSpec(0, [task] * 4)]], 1)
    read_ms = (8 * BLOCK_READ_MS, 2000 * BLOCK_READ_MS)
    change = StageChange(
        (0, 0),
        "shuffle-partitions",
        "spark.sql.shuffle.partitions",
        4,
        40,
        np.full(40, 0.4 * MB),
        "40 partitions",
        read_ms=read_ms,
    )
    workload = Workload("app", 10_000.0, [work], [], 0)
    (new,) = repartition_workload(workload, profile, PartitionPlan([change]), base).workload.stages
    plain = resplit(work, np.full(40, 0.4 * MB), base)
    assert new.n_tasks == 40
    # The stage's tasks paid 0.16 ms for their blocks: a tenth of that is gone from each.
    expected = plain.components[CPU] - read_ms[0] / 10 + read_ms[1]
    assert new.components[CPU] == pytest.approx(expected, rel=1e-6)


def test_a_sorted_writer_pays_per_record_where_a_file_per_partition_writer_does_not() -> None:
    # A SQL exchange sorts past the bypass threshold; a JVM RDD shuffle is taken as sorted at
    # any count, so its cost never moves; unknown records cost nothing.
    assert sorted_record_ms(200, SQL_WRITER, 1e6) == 0.0
    assert sorted_record_ms(201, SQL_WRITER, 1e6) == pytest.approx(1e6 * SORTED_RECORD_MS)
    assert sorted_record_ms(8, JVM_RDD_WRITER, 1e6) == sorted_record_ms(2000, JVM_RDD_WRITER, 1e6)
    assert sorted_record_ms(2000, SQL_WRITER, None) == 0.0
    # Two map tasks, the second reading three times the first's bytes: its records, and
    # their sorting, are three times as many.
    tasks = [
        TaskSpec(run_ms=1000, cpu_ms=800, input_bytes=MB),
        TaskSpec(run_ms=3000, cpu_ms=2400, input_bytes=3 * MB),
    ]
    work, _ = _stage(tasks)
    cpu = work.components[CPU]
    sorting = reprice_records(work, (0.0, 100.0))
    assert sorting.components[CPU] == pytest.approx(cpu + [50.0, 150.0])
    unsorted = reprice_records(sorting, (100.0, 0.0))
    assert unsorted.components[CPU] == pytest.approx(cpu)
    # Never more taken off than the task's CPU, other and disk time.
    c = work.components
    floor = reprice_records(work, (1e6, 0.0)).components
    assert (floor[CPU] + floor[CPU_OTHER] + floor[DISK]).sum() == pytest.approx(0.0, abs=1e-6)
    assert (floor[SCHEDULING] == c[SCHEDULING]).all()
    assert reprice_records(work, (5.0, 5.0)) is work


def test_a_re_split_map_stage_shares_its_records_sorting_out_by_data() -> None:
    # 4 map tasks become 40 and now sort: the sorting follows the records, so each of the 40
    # pays a tenth of what one of the 4 would, not a whole task's worth.
    task = TaskSpec(run_ms=2000, cpu_ms=1000, input_bytes=4 * MB)
    work, base = _stage([task] * 4)
    profile = build_synthetic([[StageSpec(0, [task] * 4)]], 1)
    change = StageChange(
        (0, 0),
        "shuffle-partitions",
        "spark.sql.shuffle.partitions",
        4,
        40,
        np.full(40, 0.4 * MB),
        "40 partitions",
        record_ms={(0, 0): (0.0, 300.0)},
    )
    workload = Workload("app", 10_000.0, [work], [], 0)
    (new,) = repartition_workload(workload, profile, PartitionPlan([change]), base).workload.stages
    plain = resplit(work, np.full(40, 0.4 * MB), base)
    assert new.n_tasks == 40
    assert new.components[CPU] == pytest.approx(plain.components[CPU] + 30.0, rel=1e-6)
