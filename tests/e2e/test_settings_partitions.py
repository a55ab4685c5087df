"""Which knob sets each stage's partitions, read from plans Spark wrote, and Spark's own
partition counts predicted from another run of the same input.

The logs are real (tests/data/settings/make_logs.py regenerates them with pyspark; what
each holds is in its docstring and MANIFEST.json). Where a query set its own settings
(``spark.conf.set``) the log's ``modifiedConfigs`` say so, which is how one application
holds a source query and the queries to predict.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zstandard

import perfmodel
from perfmodel.analysis.settings_whatif import predict_settings, settings_target, split_settings
from perfmodel.dag.model import ApplicationProfile
from perfmodel.simulate.config import ConfigError
from perfmodel.simulate.whatif import parse_change
from perfmodel.spark.load import build_profile
from perfmodel.spark.partition_plan import (
    _with_output_files,
    file_change,
    parallelism_change,
    rdd_writer,
    shuffle_change,
)
from perfmodel.spark.partition_rules import (
    BLOCK_READ_MS,
    JVM_RDD_WRITER,
    OUTPUT_FILE_MS,
    PYTHON_WRITER,
    SORTED_RECORD_MS,
    SQL_WRITER,
    WRITER_LAUNCH_MS,
    files_per_task,
    partition_write_ms,
    records_after,
)
from perfmodel.spark.partitioning import (
    CODE,
    FILE_SPLITS,
    INPUT,
    RDD_PARALLELISM,
    SHUFFLE_SETTING,
    SINGLE,
    Partitioning,
    StagePartitioning,
    derive_partitioning,
    partition_sizes,
)
from perfmodel.spark.settings import SettingError, SettingNotPredictedError, parse_settings

LOGS = Path(__file__).resolve().parents[1] / "data" / "settings"


def _load(name: str) -> tuple[ApplicationProfile, Partitioning]:
    profile = build_profile(LOGS / name).profile
    return profile, derive_partitioning(profile)


@pytest.fixture(scope="module")
def plans() -> tuple[ApplicationProfile, Partitioning]:
    return _load("plans.zstd")


def _query_stages(
    part: Partitioning, profile: ApplicationProfile, query: int, control: str
) -> list[StagePartitioning]:
    return [
        sp
        for key, sp in sorted(part.stages.items())
        if sp.query_id == query
        and sp.control == control
        and profile.stages[key].status != "SKIPPED"
    ]


def test_hash_exchange_under_aqe_follows_the_setting_and_aqe(plans) -> None:
    profile, part = plans
    (agg,) = _query_stages(part, profile, 0, SHUFFLE_SETTING)
    assert agg.planned == 8  # spark.sql.shuffle.partitions of the application
    assert agg.shuffles[0].origin == "ENSURE_REQUIREMENTS"
    assert agg.shuffles[0].adaptive_read == "coalesced"
    assert agg.partitions == agg.shuffles[0].adaptive_partitions == 1
    assert agg.setting == "spark.sql.shuffle.partitions"
    # repartition("k") is a hash exchange of the setting's count too (REPARTITION_BY_COL).
    (by_col,) = _query_stages(part, profile, 3, SHUFFLE_SETTING)
    assert by_col.shuffles[0].origin == "REPARTITION_BY_COL" and by_col.planned == 8


def test_repartition_and_coalesce_are_the_codes(plans) -> None:
    profile, part = plans
    # (spark.range(0, n, 1, 4) in the test's code is a count the code gives too.)
    (rep,) = [s for s in _query_stages(part, profile, 1, CODE) if "range" not in s.code]
    assert rep.partitions == 5 and rep.code.startswith("repartition(5)")
    assert "REPARTITION_BY_NUM" in rep.reason
    (coal,) = [s for s in _query_stages(part, profile, 2, CODE) if "range" not in s.code]
    assert coal.partitions == 3 and coal.code.startswith("coalesce(3)")
    assert coal.setting is None and rep.setting is None


def test_file_scans_and_joins(plans) -> None:
    profile, part = plans
    (scan,) = _query_stages(part, profile, 5, FILE_SPLITS)
    assert [(s.format, s.files) for s in scan.scans] == [("parquet", 6)]
    assert scan.scans[0].bytes and scan.scans[0].bytes > 1_000_000
    broadcast = [j for j in part.joins if j.strategy == "broadcast-hash"]
    merge = [j for j in part.joins if j.strategy == "sort-merge"]
    assert len(broadcast) == 1 and broadcast[0].broadcast_rows == 200
    assert broadcast[0].join_type == "Inner" and broadcast[0].stages
    assert len(merge) == 1 and all(merge[0].side_stages)
    # The sort-merge join's query turned broadcasts off for itself: the log says so.
    modified = profile.queries[merge[0].query_id].modified_configs
    assert modified["spark.sql.autoBroadcastJoinThreshold"] == "-1"
    assert (
        part.settings_for(part.stages[merge[0].stages[0]]).get(
            "spark.sql.autoBroadcastJoinThreshold"
        )
        == -1
    )


def test_rdd_shuffles_follow_the_parallelism_unless_the_code_says(plans) -> None:
    profile, part = plans
    rdd = [
        sp
        for key, sp in sorted(part.stages.items())
        if sp.query_id is None and profile.stages[key].name.startswith("collect")
    ]
    controls = [(sp.control, sp.partitions) for sp in rdd]
    # reduceByKey without a count: spark.default.parallelism (unset: its largest parent's 4);
    # reduceByKey(..., 3): the code's.
    assert (RDD_PARALLELISM, 4) in controls and (CODE, 3) in controls


def test_a_pyspark_shuffle_is_priced_as_pyspark_writes_it(plans) -> None:
    # PySpark's reduceByKey combines in Python and hands the JVM a PairwiseRDD: no map-side
    # combine, so up to 200 partitions a file each, at PySpark's cost per file.
    profile, part = plans
    (sp,) = [
        sp
        for key, sp in sorted(part.stages.items())
        if sp.query_id is None and sp.control == RDD_PARALLELISM
    ]
    change = parallelism_change(profile, sp, 200)
    assert change is not None and change.map_stages
    assert rdd_writer(profile, change.map_stages) == PYTHON_WRITER
    assert change.planned == (4, 200)
    # Each map stage pays for the partitions its tasks put rows in, from what they wrote.
    assert set(change.write_ms) == set(change.map_stages)
    for key, (before, after) in change.write_ms.items():
        t = profile.stages[key].table
        records = float(np.median(t.col("shuffle_write_records")[t.ended]))
        assert records > 0
        assert before == partition_write_ms(4, PYTHON_WRITER, records)
        assert after == partition_write_ms(200, PYTHON_WRITER, records)
        assert 0 < after <= partition_write_ms(200, PYTHON_WRITER)
    # A stage of a SQL query runs no PairwiseRDD: not PySpark's writer.
    sql_stage = next(k for k, s in part.stages.items() if s.query_id is not None)
    assert rdd_writer(profile, [sql_stage]) == JVM_RDD_WRITER


def test_without_aqe_each_task_reads_one_partition() -> None:
    profile, part = _load("aqe_off.zstd")
    agg = _query_stages(part, profile, 0, SHUFFLE_SETTING)[0]
    assert agg.partitions == agg.planned == 8 and not agg.adaptive
    assert len(partition_sizes(profile.stages[agg.key])[0]) == 8
    (final,) = _query_stages(part, profile, 1, SINGLE)  # count(): one partition, always
    assert final.partitions == 1


def test_aqe_coalescing_predicted_as_spark_did_it() -> None:
    """From the AQE-off run at 64 partitions, every other query's post-AQE partition count.

    At 64 partitions the measured sizes are what AQE saw (up to its map statuses' rounding,
    which the rule reproduces): every count must equal Spark's. At 16, 200 and 1000
    partitions the sizes are modelled (the log has them at 64 only); the data also grows
    with the partition count (more, smaller, less compressible blocks), which the model does
    not see, so a count may fall one short where Spark's packing sat on a boundary."""
    profile, part = _load("coalesce.zstd")
    reduce = [sp for key, sp in sorted(part.stages.items()) if sp.control == SHUFFLE_SETTING]
    source, targets = reduce[0], reduce[1:]
    assert not source.adaptive and source.partitions == 64
    base = part.settings_for(source)
    exact, modelled = [], []
    for target in targets:
        settings = part.settings_for(target)
        change = shuffle_change(profile, source, base, settings, 2, 2)
        predicted = change.new_partitions if change is not None else source.partitions
        planned = settings.get("spark.sql.shuffle.partitions")
        (exact if planned == 64 else modelled).append((predicted, target.partitions))
    assert len(exact) == 6
    assert [p for p, _ in exact] == [a for _, a in exact]
    assert len(modelled) == 5
    assert all(abs(p - a) <= max(1, 0.06 * a) for p, a in modelled), modelled
    assert sum(p == a for p, a in modelled) >= 2


def test_skew_join_split_predicted_as_spark_did_it() -> None:
    profile, part = _load("skew.zstd")
    joins = [sp for key, sp in sorted(part.stages.items()) if sp.control == SHUFFLE_SETTING]
    source, targets = joins[0], joins[1:]
    assert source.partitions == 16 and len(targets) == 2
    for target in targets:
        assert "skewed" in {s.adaptive_read for s in target.shuffles}
        change = shuffle_change(
            profile, source, part.settings_for(source), part.settings_for(target), 2, 2, "Inner"
        )
        assert change is not None and change.new_partitions == target.partitions == 19


def test_file_splits_predicted_as_spark_did_them() -> None:
    profile, part = _load("files.zstd")
    scans = [sp for key, sp in sorted(part.stages.items()) if sp.control == FILE_SPLITS]
    assert [s.partitions for s in scans] == [42, 12, 2, 2, 2, 3]
    for source in scans:
        for target in scans:
            change = file_change(
                profile, source, part.settings_for(source), part.settings_for(target), 2, 2
            )
            predicted = change.new_partitions if change is not None else source.partitions
            assert predicted == target.partitions
            if change is not None:
                # New splits of the same files read what the source's tasks read, however
                # the files' size (the scan's metric) compares with it.
                t = profile.stages[source.key].table
                read = float(t.col("input_bytes")[t.ended].sum())
                assert float(change.data.sum()) == pytest.approx(read, rel=1e-9)


@pytest.fixture(scope="module")
def aqe_off() -> perfmodel.Analysis:
    return perfmodel.load(LOGS / "aqe_off.zstd")


def _predict(analysis: perfmodel.Analysis, settings: dict[str, str]):
    values, _ = parse_settings(settings)
    what_if = split_settings(values, analysis.baseline)
    target = settings_target(analysis.baseline, what_if, None)
    return predict_settings(
        analysis.workload,
        analysis.profile,
        analysis.partitioning,
        analysis.baseline,
        analysis._base(),
        what_if,
        target,
        settings,
    )


def test_no_change_predicts_the_baseline_replay(aqe_off) -> None:
    base = aqe_off.predict()
    same, moved = _predict(aqe_off, {"spark.sql.shuffle.partitions": "8"})
    assert not moved.changes
    assert same.predicted_s == pytest.approx(base.predicted_s)
    assert same.baseline_replay_s == pytest.approx(base.baseline_replay_s)


def test_more_partitions_cost_more_tasks(aqe_off) -> None:
    base = aqe_off.predict()
    many, moved = _predict(aqe_off, {"spark.sql.shuffle.partitions": "2000"})
    assert {c.new_partitions for c in moved.changes} == {2000}
    assert many.predicted_s > base.predicted_s
    assert many.baseline_replay_s == pytest.approx(base.baseline_replay_s)
    assert many.conf is not None
    assert [(s.tasks_before, s.tasks_after) for s in many.conf.stages] == [(8, 2000)] * 2
    assert {s.knob for s in many.conf.stages} == {"spark.sql.shuffle.partitions"}
    coalesced, moved = _predict(
        aqe_off, {"spark.sql.shuffle.partitions": "2000", "spark.sql.adaptive.enabled": "true"}
    )
    assert all(c.new_partitions < 2000 for c in moved.changes)
    assert coalesced.predicted_s < many.predicted_s


def _task_metric(log: Path, section: str, *names: str) -> dict[int, list[int]]:
    """Per stage, each task's sum of ``names`` in its metrics' ``section``, read from the
    log's own JSON (not through perfmodel)."""
    text = zstandard.ZstdDecompressor().stream_reader(log.open("rb")).read().decode()
    values: dict[int, list[int]] = {}
    for line in text.splitlines():
        if '"SparkListenerTaskEnd"' in line:
            event = json.loads(line)
            metrics = event["Task Metrics"].get(section, {})
            values.setdefault(event["Stage ID"], []).append(sum(metrics.get(n, 0) for n in names))
    return values


def _blocks_fetched(log: Path) -> dict[int, float]:
    """Per stage, the shuffle blocks its tasks fetched (local and remote), their mean, as the
    log's task metrics give them (perfmodel does not read these counts)."""
    fetched = _task_metric(
        log, "Shuffle Read Metrics", "Local Blocks Fetched", "Remote Blocks Fetched"
    )
    return {stage: float(np.mean(counts)) for stage, counts in fetched.items()}


def test_reduce_tasks_pay_for_the_blocks_their_map_stages_wrote(aqe_off) -> None:
    """What each reduce task fetched, priced from its map stages' task counts and records,
    is what the log counted; at 2,000 partitions each task fetches fewer blocks (the map
    tasks' few aggregated records fill few of them), but the stage, of 250 times the tasks,
    fetches more."""
    measured = _blocks_fetched(LOGS / "aqe_off.zstd")
    _, moved = _predict(aqe_off, {"spark.sql.shuffle.partitions": "2000"})
    assert moved.changes
    for change in moved.changes:
        before, after = change.read_ms
        assert before == pytest.approx(BLOCK_READ_MS * measured[change.key[0]], rel=0.01)
        assert 0 < after < before
        assert after * change.new_partitions > before * change.old_partitions


def test_a_checkpoint_read_back_moves_with_the_stage_that_wrote_it() -> None:
    # checkpoint.zstd: an aggregation at 6 shuffle partitions localCheckpoint()-ed, then read
    # back by two queries. The stages scanning the checkpoint run its 6 partitions: they
    # follow spark.sql.shuffle.partitions through it, and a what-if moves them too.
    analysis = perfmodel.load(LOGS / "checkpoint.zstd")
    part = analysis.partitioning
    followers = {k: sp for k, sp in part.stages.items() if sp.follows is not None}
    assert len(followers) == 2
    assert {sp.control for sp in followers.values()} == {INPUT}
    (source,) = {sp.follows for sp in followers.values()}
    assert part.stages[source].control == SHUFFLE_SETTING
    assert all(sp.partitions == 6 for sp in followers.values())
    result, moved = _predict(analysis, {"spark.sql.shuffle.partitions": "12"})
    new = {c.key: c.new_partitions for c in moved.changes}
    assert all(new[k] == 12 for k in followers)
    assert result.conf is not None
    knobs = {(s.stage_id, s.knob) for s in result.conf.stages}
    assert {(k[0], "spark.sql.shuffle.partitions") for k in followers} <= knobs


def test_a_re_split_map_stage_pays_for_the_partitions_its_new_tasks_write() -> None:
    # checkpoint.zstd: a stage reading the checkpoint back (6 tasks, about 500 records read
    # and 10 written each: a partial aggregation over 10 keys) feeds a shuffle. At 2,000
    # shuffle partitions both move: its 2,000 tasks read a record or two each, so each writes
    # a partition or two, not the 10 its old tasks filled.
    analysis = perfmodel.load(LOGS / "checkpoint.zstd")
    _, moved = _predict(analysis, {"spark.sql.shuffle.partitions": "2000"})
    by_key = {c.key: c for c in moved.changes}
    pairs = [(c, k) for c in moved.changes for k in c.map_stages if k in by_key]
    assert pairs
    for change, key in pairs:
        t = analysis.profile.stages[key].table
        written = t.ended_values("shuffle_write_records").astype(float)
        read = (t.ended_values("input_records") + t.ended_values("shuffle_read_records")).mean()
        now = records_after(read, written.mean(), read * written.size / by_key[key].new_partitions)
        assert now < 2
        median = float(np.median(written))
        before, after = change.write_ms[key]
        assert change.writer == SQL_WRITER
        assert before == pytest.approx(partition_write_ms(change.planned[0], SQL_WRITER, median))
        assert after == pytest.approx(
            partition_write_ms(2000, SQL_WRITER, median * now / written.mean())
        )
        assert after < partition_write_ms(2000, SQL_WRITER, median) / 5


def test_files_the_application_wrote_and_reads_back_move_with_their_writer() -> None:
    # readback.zstd: an aggregation at 40 shuffle partitions written as JSON (40 files) and
    # read back (Spark lists the 40 files in a job of a task per file, scans them for a
    # schema, counts them), written as Parquet and counted, written as CSV with a header and
    # counted (the header's line read in one task of a two-partition scan). Each reader is
    # tied to the stage that wrote its files; at 400 partitions the writers write a file per
    # task that has rows, the listings run a task per file, each scan splits the files by
    # Spark's rule, and the header's read stays one task.
    analysis = perfmodel.load(LOGS / "readback.zstd")
    part = analysis.partitioning
    writers = sorted(k for k, sp in part.stages.items() if sp.control == SHUFFLE_SETTING)
    assert len(writers) == 3
    readers = {k: sp for k, sp in part.stages.items() if sp.files_of is not None}
    by_writer = {w: sorted(k for k, sp in readers.items() if sp.files_of == w) for w in writers}
    assert [len(v) for v in by_writer.values()] == [3, 1, 3]
    assert all(k > w for w, keys in by_writer.items() for k in keys)
    listings = [k for k, sp in readers.items() if sp.lists_files]
    assert len(listings) == 2
    for key in listings:
        assert part.stages[key].control == INPUT and part.stages[key].partitions == 40
        assert "listing of the 40 files" in part.stages[key].reason
    header = [k for k, sp in readers.items() if sp.partitions == 1]
    assert len(header) == 1 and part.stages[header[0]].files_of == writers[2]
    result, moved = _predict(analysis, {"spark.sql.shuffle.partitions": "400"})
    new = {c.key: c for c in moved.changes}
    assert set(writers) | set(readers) - set(header) == set(new)
    for key in listings:
        files = np.count_nonzero(new[part.stages[key].files_of].data)
        assert new[key].new_partitions == files > 300
    # Each writer's task pays for its file and for deserialising the writer's configuration;
    # a reader's does not.
    for key in writers:
        assert new[key].task_fixed_ms == (OUTPUT_FILE_MS, OUTPUT_FILE_MS)  # a file a task
        assert new[key].launch_ms == WRITER_LAUNCH_MS
        assert part.stages[key].dynamic_partitions == 0
    assert all(new[k].launch_ms == 0 for k in set(new) - set(writers))
    assert all(new[k].task_fixed_ms == (0, 0) for k in set(new) - set(writers))
    for key, sp in readers.items():
        if sp.lists_files or key in header:
            continue
        assert new[key].new_partitions > sp.partitions, (key, new[key].why)
        assert f"files stage {sp.files_of[0]} now writes" in new[key].why
    assert result.conf is not None
    assert result.predicted_s > result.baseline_replay_s
    # A log whose scans read files from before the application ties nothing to a writer.
    example = perfmodel.load(LOGS.parents[2] / "examples" / "eventlogs" / "etl-local2.zstd")
    assert all(sp.files_of is None for sp in example.partitioning.stages.values())


def test_a_sort_by_few_keys_gets_as_many_partitions_as_its_key_ranges() -> None:
    # ordered.zstd: an aggregation over 6 keys sorted by its key, with AQE on at 40
    # partitions (its range exchange made 6, read as one coalesced task), then with AQE off
    # at 40, 400 and 4. Spark's range partitioner made 6, 6, 6 and 4 partitions: predicted
    # from each run that shows the bound, whatever the count asked. The run at 4 got all 4
    # it asked for, which shows no such bound; but it sorts 6 rows, and a partitioner makes
    # no more partitions than the distinct keys it samples, so from it too 6 are predicted.
    profile, part = _load("ordered.zstd")
    ranged = [
        sp
        for _, sp in sorted(part.stages.items())
        if any(s.partitioning == "range" for s in sp.shuffles)
    ]
    assert [s.partitions for s in ranged] == [1, 6, 6, 4]
    assert [sh.range_partitions for s in ranged for sh in s.shuffles] == [6, 6, 6, 4]
    for source in ranged:
        for target in ranged[1:]:
            change = shuffle_change(
                profile, source, part.settings_for(source), part.settings_for(target), 2, 2
            )
            predicted = change.new_partitions if change is not None else source.partitions
            assert predicted == target.partitions, (source, target)
            if change is not None and target.partitions == 6:
                shown = source is not ranged[-1]
                assert ("6 sampled key ranges" if shown else "the 6 rows it sorts") in change.why


def test_a_partitioned_write_pays_for_a_file_per_value_a_task_holds() -> None:
    # partitioned.zstd: 60 groups written with partitionBy over 5 values, at 4, 40 and 400
    # shuffle partitions; Spark wrote 20, 50 and 60 files. Each writer stage knows the
    # write's rows and values, and the rule gives each count's files within a sixth.
    profile, part = _load("partitioned.zstd")
    writers = [sp for _, sp in sorted(part.stages.items()) if sp.dynamic_partitions]
    assert [(w.partitions, w.written_rows, w.dynamic_partitions) for w in writers] == [
        (4, 60, 5),
        (40, 60, 5),
        (400, 60, 5),
    ]
    # Spark's own count of each write's files ("number of written files").
    written = [w.written_file_count for w in writers]
    assert written == [20, 50, 60]
    for w, files in zip(writers, written, strict=True):
        predicted = w.partitions * files_per_task(w.partitions, w.written_rows, 5)
        assert predicted == pytest.approx(files, rel=0.15)
    # A re-split writer pays for the files its tasks would write, before and after.
    change = shuffle_change(
        profile, writers[0], part.settings_for(writers[0]), part.settings_for(writers[2]), 2, 2
    )
    assert change is not None and change.new_partitions == 400
    planned = _with_output_files(profile, part, change)
    assert planned.task_fixed_ms == pytest.approx(
        (
            OUTPUT_FILE_MS * files_per_task(4, 60, 5, (20, 4)),
            OUTPUT_FILE_MS * files_per_task(400, 60, 5, (20, 4)),
        )
    )
    assert planned.task_fixed_ms[0] > 4 * OUTPUT_FILE_MS > 10 * planned.task_fixed_ms[1]
    # Placed by what each run wrote, every run predicts the others' file counts.
    for w, files in zip(writers, written, strict=True):
        for other, theirs in zip(writers, written, strict=True):
            rule = files_per_task(other.partitions, 60, 5, (files, w.partitions))
            assert other.partitions * rule == pytest.approx(theirs, rel=0.15)


def test_settings_are_checked_before_anything_is_replayed(aqe_off) -> None:
    with pytest.raises(SettingError, match="spark.sql.shuffle.partitions"):
        _predict(aqe_off, {"spark.sql.shuffle.partitions": "0"})
    with pytest.raises(SettingNotPredictedError, match="spark.task.cpus"):
        _predict(aqe_off, {"spark.task.cpus": "2"})
    # Executor keys do not apply in local mode, and the prediction says so.
    pred, _ = _predict(aqe_off, {"spark.executor.memory": "4g"})
    assert any("does not apply in local mode" in n for n in pred.notes)
    heap, _ = _predict(aqe_off, {"spark.driver.memory": "4g", "spark.memory.fraction": "0.8"})
    assert heap.config.memory_bytes == 4 << 30 and heap.config.memory_fraction == 0.8
    assert np.isfinite(heap.predicted_s)


def test_executor_settings_on_a_cluster_log_with_dynamic_allocation() -> None:
    from tests.conftest import shared_eventlogs

    log = shared_eventlogs() / "application_1489705648216_1600"  # YARN, dynamic allocation
    analysis = perfmodel.load(log)
    assert analysis.baseline.allocation.enabled
    # Dynamic allocation's keys are the grammar's own dynamic-allocation settings: the same
    # target configuration and the same prediction as predict's options.
    pairs = [
        ({"spark.dynamicAllocation.maxExecutors": "2"}, "max-executors=2"),
        ({"spark.dynamicAllocation.maxExecutors": "500"}, "max-executors=500"),
        ({"spark.dynamicAllocation.enabled": "false"}, "dynamic-allocation=off"),
        (
            {
                "spark.dynamicAllocation.minExecutors": "2",
                "spark.dynamicAllocation.initialExecutors": "4",
                "spark.dynamicAllocation.maxExecutors": "8",
            },
            "min-executors=2,initial-executors=4,max-executors=8",
        ),
    ]
    for conf, grammar in pairs:
        by_conf = analysis.predict_settings(conf)
        by_option = analysis.predict(parse_change(grammar))
        assert by_conf.config.allocation == by_option.config.allocation, grammar
        assert by_conf.predicted_s == pytest.approx(by_option.predicted_s), grammar
    capped = analysis.predict_settings({"spark.dynamicAllocation.maxExecutors": "2"})
    assert capped.config.allocation.max_executors == 2
    assert capped.predicted_s > analysis.predict().predicted_s
    off = analysis.predict_settings({"spark.dynamicAllocation.enabled": "false"})
    assert not off.config.allocation.enabled
    # With dynamic allocation on, spark.executor.instances is a floor of its start, as in
    # Spark, not a fixed count; the prediction says so.
    floor = analysis.predict_settings({"spark.executor.instances": "3"})
    assert floor.config.allocation.enabled and floor.config.allocation.initial_executors == 3
    assert any("floor of the executors it starts with" in n for n in floor.notes)
    with pytest.raises(ConfigError, match="spark.dynamicAllocation.minExecutors"):
        analysis.predict_settings(
            {
                "spark.dynamicAllocation.minExecutors": "5",
                "spark.dynamicAllocation.maxExecutors": "2",
            }
        )
    with pytest.raises(ConfigError, match="spark.dynamicAllocation.initialExecutors"):
        analysis.predict_settings(
            {
                "spark.dynamicAllocation.initialExecutors": "9",
                "spark.dynamicAllocation.maxExecutors": "4",
            }
        )
    cores = analysis.predict_settings({"spark.executor.cores": "4", "spark.executor.memory": "8g"})
    assert cores.config.executor_cores == 4 and cores.config.memory_bytes == 8 << 30
    lenient = analysis.predict_settings(
        {"spark.dynamicAllocation.enabled": "false", "spark.executor.memoryOverhead": "1g"},
        strict=False,
    )
    assert not lenient.config.allocation.enabled
    assert sum("not predicted" in n for n in lenient.notes) == 1


def test_dynamic_allocation_keys_change_nothing_where_spark_ignores_them(aqe_off) -> None:
    # A static run: the bounds alone do not turn dynamic allocation on (Spark ignores them).
    from tests.conftest import shared_eventlogs

    static = perfmodel.load(
        shared_eventlogs() / "eventlog_v2_spark-cc4d115f011443d787f03a71a476a745"
    )
    assert not static.baseline.allocation.enabled and not static.baseline.local_mode
    bounds = static.predict_settings({"spark.dynamicAllocation.maxExecutors": "2"})
    assert not bounds.config.allocation.enabled
    assert bounds.predicted_s == pytest.approx(static.predict().predicted_s)
    assert any("dynamic allocation is off in this configuration" in n for n in bounds.notes)
    switched = static.predict_settings(
        {"spark.dynamicAllocation.enabled": "true", "spark.dynamicAllocation.maxExecutors": "2"}
    )
    assert switched.config.allocation.enabled
    assert switched.config.allocation.max_executors == 2
    # Local mode: said, and no change.
    local, _ = _predict(aqe_off, {"spark.dynamicAllocation.enabled": "true"})
    assert not local.config.allocation.enabled
    assert any("does not apply in local mode" in n for n in local.notes)


def test_a_split_size_that_would_make_millions_of_tasks_is_refused() -> None:
    analysis = perfmodel.load(LOGS / "plans.zstd")
    # 1 MiB over 2.5 MB of files: fine; 1 byte: over a million tasks in a stage.
    assert analysis.predict_settings({"spark.sql.files.maxPartitionBytes": "1m"}).predicted_s > 0
    with pytest.raises(SettingError, match="spark.sql.files.maxPartitionBytes"):
        analysis.predict_settings({"spark.sql.files.maxPartitionBytes": "1"})


def test_map_tasks_pay_for_sorting_their_records_past_the_bypass_threshold(aqe_off) -> None:
    """Past 200 partitions a SQL exchange's map tasks sort what they write: each map stage
    pays per record its tasks wrote, as the log counts them; at 200 nothing changes, and
    the prediction reports the task time added."""
    written = _task_metric(
        LOGS / "aqe_off.zstd", "Shuffle Write Metrics", "Shuffle Records Written"
    )
    analysis_200, moved = _predict(aqe_off, {"spark.sql.shuffle.partitions": "200"})
    assert moved.changes and not any(c.record_ms for c in moved.changes)
    assert analysis_200.conf is not None and analysis_200.conf.record_ms == 0.0
    many, moved = _predict(aqe_off, {"spark.sql.shuffle.partitions": "2000"})
    sorting = {k: ms for c in moved.changes for k, ms in c.record_ms.items()}
    assert sorting and set(sorting) == {k for c in moved.changes for k in c.map_stages}
    for (stage, _), (before, after) in sorting.items():
        assert before == 0.0
        assert after == pytest.approx(SORTED_RECORD_MS * np.mean(written[stage]), rel=1e-9)
    assert many.conf is not None
    total = sum(after * len(written[stage]) for (stage, _), (_, after) in sorting.items())
    assert many.conf.record_ms == pytest.approx(total, rel=1e-9)
