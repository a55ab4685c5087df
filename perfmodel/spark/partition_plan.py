"""How many partitions each stage gets under new Spark settings, and what each holds.

A settings what-if is Spark's rules applied to Spark's settings, so it is planned here, in
the Spark front end; what the new partitions cost is the replay's to say
(`perfmodel.simulate.repartition`, from the framework-free `PartitionPlan` this returns).

The knob in control of each stage's task count is read from the plan
(`perfmodel.spark.partitioning`); here Spark's own rules (`perfmodel.spark.partition_rules`)
decide the new count under the new settings, and the partitions' sizes come from what the
profiled run's partitions held:

* **A shuffle** is an even spread over its keys plus *hot masses*: partitions that held
  well over the rest (twice the typical one) hold a key, or a few, whose rows hash to one
  partition whatever the count. Re-hashed into ``n`` partitions, each gets a share of the
  spread (varied as the measured partitions varied) and every hot mass lands whole in one,
  so skew survives a change of partition count; AQE's skew-join split is what breaks a hot
  partition up, by map-output blocks. At the measured count the measured sizes are used.
  AQE then coalesces (and splits) them as Spark would, on the sizes its map statuses would
  report.
* **A file scan**'s partitions are Spark's splits of its files (their count and total size
  are in the log; each is taken to be the mean).
* **spark.default.parallelism** sets an RDD shuffle's count where it is set, and a generated
  range's always.

The settings a stage's query ran with are the application's with the what-if applied,
except keys the query set for itself (``spark.conf.set`` wins over ``--conf``, in Spark as
here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.partition_change import FloatArray, PartitionPlan, StageChange
from perfmodel.spark import partition_rules as rules
from perfmodel.spark.join_plan import JOIN_KEYS, plan_join_switches
from perfmodel.spark.partitioning import (
    CODE,
    FILE_SPLITS,
    INPUT,
    RDD_PARALLELISM,
    SETTING_OF,
    SHUFFLE_SETTING,
    SINGLE,
    Partitioning,
    StagePartitioning,
    file_split_settings,
    partition_sizes,
    target_settings,
    written_files,
)
from perfmodel.spark.settings import (
    MAX_PARTITIONS,
    EffectiveSettings,
    SettingError,
    SettingValue,
    stage_key,
    stage_of_key,
)

HOT_FACTOR = 2.0
"""A partition holding more than this many times the typical one holds a hot mass."""
MIN_PARTITIONS_FOR_SKEW = 4
"""Fewer partitions than this cannot tell a hot key from noise: all is spread evenly."""

_AQE_KEYS = (
    "spark.sql.adaptive.enabled",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.coalescePartitions.parallelismFirst",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize",
    "spark.sql.adaptive.coalescePartitions.minPartitionNum",
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
)
_FILE_KEYS = (
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.files.openCostInBytes",
    "spark.sql.files.minPartitionNum",
    "spark.sql.leafNodeDefaultParallelism",
)


# -- what a shuffle's partitions hold --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionContents:
    """A shuffle's data as an even spread plus hot masses that stay whole."""

    spread: float
    """Bytes spread evenly over the keys."""
    hot: FloatArray
    """Bytes of each hot mass (a key, or a few, that hash to one partition)."""
    measured: FloatArray | None = None
    """The measured bytes of each partition, where each task read one partition."""
    variation: float = 0.0
    """Coefficient of variation of the spread's partitions at ``at`` partitions (how unevenly
    hashing shares out keys), measured where each task read one partition."""
    at: int = 1

    @property
    def total(self) -> float:
        return self.spread + float(self.hot.sum())

    def sizes_at(self, n: int) -> FloatArray:
        """Bytes of each of ``n`` hash partitions of this data: the measured sizes at the
        measured count; else an even share of the spread, varied as hashing varies it (the
        measured variation, growing with the square root of the partitions per key, on a
        fixed pseudo-random draw), with each hot mass whole in one partition."""
        if self.measured is not None and len(self.measured) == n:
            return self.measured.astype(np.float64)
        out = np.full(n, self.spread / max(n, 1), dtype=np.float64)
        if self.variation > 0 and n > 1:
            cv = self.variation * math.sqrt(n / max(self.at, 1))
            noise = np.random.default_rng(n).standard_normal(n)
            out *= np.maximum(1.0 + cv * (noise - noise.mean()), 0.0)
            out *= self.spread / max(float(out.sum()), 1e-300)
        if self.hot.size:
            np.add.at(out, _hot_slots(len(self.hot), n), self.hot)
        return out


def _hot_slots(count: int, n: int) -> np.ndarray:
    """The partitions ``count`` hot masses hash to among ``n``: a fixed, well-mixed
    function of the mass and ``n`` (Spark's hash of the key itself is not in the log), so
    a mass lands in the same place each time it is asked and two masses collide about as
    often as two keys would."""
    keys = np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    keys ^= keys >> np.uint64(29)
    return (keys % np.uint64(max(n, 1))).astype(np.int64)


def partition_contents(sizes: np.ndarray, exact: bool, planned: int) -> PartitionContents:
    """What the partitions held: from each partition's measured bytes (``exact``: each task
    read one of ``planned`` partitions), or from tasks that each read several (an AQE
    coalesced read), whose typical original partition is the spread over ``planned``."""
    values = np.asarray(sizes, dtype=np.float64)
    total = float(values.sum())
    if values.size < MIN_PARTITIONS_FOR_SKEW or total <= 0:
        return PartitionContents(total, np.zeros(0), values if exact else None)
    median = float(np.median(values))
    hot = values > HOT_FACTOR * max(median, 1.0)
    planned = max(planned, int(values.size))
    rest = total - float(values[hot].sum())
    typical = rest / max(planned - int(hot.sum()), 1)
    excess = np.maximum(values[hot] - typical, 0.0)
    variation = 0.0
    if exact and (~hot).sum() >= MIN_PARTITIONS_FOR_SKEW:
        normal = values[~hot]
        variation = float(normal.std() / normal.mean()) if normal.mean() > 0 else 0.0
    return PartitionContents(
        total - float(excess.sum()),
        excess,
        values if exact else None,
        variation,
        int(values.size),
    )


# -- new partitions of a stage ---------------------------------------------------------------


def target_parallelism(
    partitioning: Partitioning,
    changes: Mapping[str, SettingValue],
    target_cores: int,
    local_mode: bool,
) -> int:
    """``spark.default.parallelism`` on the target: the new value, the log's where it set
    one, else the target's cores (Spark's default: at least 2 outside local mode)."""
    value = changes.get("spark.default.parallelism")
    if value is not None:
        return int(value)
    if partitioning.parallelism_set:
        return partitioning.default_parallelism
    return max(target_cores, 1) if local_mode else max(target_cores, 2)


def _coalesce_settings(s: EffectiveSettings, parallelism: int) -> rules.CoalesceSettings:
    min_num = s.get("spark.sql.adaptive.coalescePartitions.minPartitionNum")
    return rules.CoalesceSettings(
        advisory=int(s.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") or 64 << 20),
        min_partition_size=int(
            s.get("spark.sql.adaptive.coalescePartitions.minPartitionSize") or 0
        ),
        min_partition_num=int(min_num) if min_num is not None else None,
        parallelism_first=bool(s.get("spark.sql.adaptive.coalescePartitions.parallelismFirst")),
        default_parallelism=parallelism,
        merge_small=s.version >= (3, 3) or s.version == (0, 0),
    )


def _skew_settings(s: EffectiveSettings) -> rules.SkewSettings:
    return rules.SkewSettings(
        enabled=bool(s.get("spark.sql.adaptive.skewJoin.enabled")),
        factor=float(s.get("spark.sql.adaptive.skewJoin.skewedPartitionFactor") or 5.0),
        threshold=int(s.get("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes") or 0),
        advisory=int(s.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") or 64 << 20),
    )


def planned_shuffle_partitions(s: EffectiveSettings) -> int:
    """Partitions Spark plans for a shuffle under ``s`` (AQE's initial number where AQE
    coalesces and it is set)."""
    initial = s.get("spark.sql.adaptive.coalescePartitions.initialPartitionNum")
    if initial is not None and _coalesces(s):
        return int(initial)
    return s.int_of("spark.sql.shuffle.partitions", 200)


def _coalesces(s: EffectiveSettings) -> bool:
    return bool(s.get("spark.sql.adaptive.enabled")) and bool(
        s.get("spark.sql.adaptive.coalescePartitions.enabled")
    )


def _same(a: EffectiveSettings, b: EffectiveSettings, keys: tuple[str, ...]) -> bool:
    return all(a.get(k) == b.get(k) for k in keys)


def map_shares(profile: ApplicationProfile, part: StagePartitioning) -> np.ndarray:
    """Each map task's share of the largest shuffle a stage reads (how a partition's bytes
    spread over map-output blocks; a join's skew is taken to be on its larger side)."""
    best = np.ones(1)
    best_total = -1.0
    for shuffle in part.shuffles:
        writes = []
        for key in shuffle.map_stages:
            stage = profile.stages.get(key)
            if stage is not None and len(stage.table):
                t = stage.table
                writes.append(t.ended_values("shuffle_write_bytes").astype(np.float64))
        if not writes:
            continue
        w = np.concatenate(writes)
        total = float(w.sum())
        if total > best_total:
            best_total = total
            best = w / total if total > 0 else np.full(len(w), 1.0 / len(w))
    return best


def _sort_key_bound(profile: ApplicationProfile, part: StagePartitioning) -> tuple[int, str] | None:
    """What bounds the partitions of a range exchange the stage reads, and how to say it:
    the partitions it was made with, where its sort keys bounded them below the count it was
    asked for (`ShuffleInput.range_partitions`), or the rows its map stages wrote into it
    (`RangePartitioner` makes one partition more than the distinct bounds it samples, and
    there are no more distinct keys than rows: a sort of 255 aggregated rows ran 255 tasks
    at 2,000 partitions, where its run at 8 could not show the bound). None where nothing
    bounds them."""
    bounds: list[tuple[int, str]] = []
    for s in part.shuffles:
        if not s.coalescible or s.partitioning != "range":
            continue
        if s.range_partitions and s.range_partitions < s.partitions:
            bounds.append((s.range_partitions, f"its {s.range_partitions} sampled key ranges"))
        rows = sum(
            int(profile.stages[k].table.total("shuffle_write_records"))
            for k in s.map_stages
            if k in profile.stages and len(profile.stages[k].table)
        )
        if rows > 0:
            bounds.append((rows, f"the {rows:,} rows it sorts"))
    return min(bounds) if bounds else None


def shuffle_change(
    profile: ApplicationProfile,
    part: StagePartitioning,
    base: EffectiveSettings,
    target: EffectiveSettings,
    base_parallelism: int,
    new_parallelism: int,
    join_type: str | None = None,
) -> StageChange | None:
    """New partitions of a stage reading a shuffle planned with spark.sql.shuffle.partitions:
    the new count, then AQE's coalescing (and skew-join splits, for a sort-merge join) on
    the sizes they would have; None where nothing changes."""
    stage = profile.stages[part.key]
    n0 = part.planned or part.partitions
    n1 = planned_shuffle_partitions(target)
    if not any(s.coalescible for s in part.shuffles):
        return None
    found = _sort_key_bound(profile, part)
    bound = found[0] if found is not None else None
    if bound is not None:
        # A range exchange over fewer distinct keys than partitions: its partitioner makes
        # as many as its sampled bounds allow, at the count the run had and at the new one.
        n0, n1 = min(n0, bound), min(n1, bound)
    read = [
        s.adaptive_partitions or min(s.partitions, s.range_partitions or s.partitions)
        for s in part.shuffles
        if s.coalescible
    ]
    if part.partitions * 2 < min(read):
        # Far fewer tasks than the shuffle had partitions (after AQE): the stage read part of
        # it (a `limit` or `first()` takes a partition or a few), which the count does not set.
        return None
    aqe0 = part.adaptive or (_coalesces(base) and n0 != part.partitions)
    aqe1 = _coalesces(target)
    if (
        n1 == n0
        and _same(base, target, _AQE_KEYS)
        and (not aqe1 or base_parallelism == new_parallelism)
    ):
        return None
    sizes, _ = partition_sizes(stage)
    exact = not part.adaptive and len(sizes) == n0
    contents = partition_contents(sizes, exact, n0)
    total = contents.total
    partitions = contents.sizes_at(n1)
    why = f"{n1} shuffle partitions (from {n0})"
    if found is not None and n1 == found[0]:
        why += f", a sort's range partitioning bounded by {found[1]}"
    adaptive1 = bool(target.get("spark.sql.adaptive.enabled"))
    skew = _skew_settings(target)
    split_left, split_right = _splittable(join_type)
    pieces = np.ones(n1, dtype=np.int64)
    if adaptive1 and (aqe1 or skew.enabled):
        shares = map_shares(profile, part)
        reported = rules.reported_partition_sizes(partitions.astype(np.int64), shares)
        if join_type is not None and skew.enabled and (split_left or split_right):
            # The log has each task's shuffle bytes, not each side's: the partition's whole
            # size stands for the side AQE would split.
            pieces, _ = rules.skew_join_pieces(
                reported, reported, skew, split_left or split_right, False, shares, shares
            )
        coalesce = _coalesce_settings(target, new_parallelism)
        if (pieces > 1).any():
            if aqe1:
                ranges, split = rules.coalesce_with_skew(
                    reported, pieces, coalesce, coalesce.min_num_partitions()
                )
            else:
                ranges = [(i, i + 1) for i in range(n1) if pieces[i] == 1]
                split = [i for i in range(n1) for _ in range(int(pieces[i])) if pieces[i] > 1]
            data = _ranges_data(partitions, ranges)
            for i in sorted(set(split)):
                k = int(pieces[i])
                data = np.concatenate([data, np.full(k, partitions[i] / k)])
            why += f", AQE split {len(set(split))} skewed into {len(split)}"
            if aqe1:
                why += f" and coalesced the rest to {len(ranges)}"
        elif aqe1:
            ranges = rules.coalesce_partitions(reported, coalesce)
            data = _ranges_data(partitions, ranges)
            if len(ranges) < n1:
                why += f", coalesced by AQE to {len(ranges)}"
        else:
            data = partitions
    else:
        data = partitions
        if aqe0:
            why += ", AQE off"
    if total <= 0:
        data = np.zeros(len(data))
    if (
        len(data) == part.partitions
        and n1 == n0
        and (not exact or np.allclose(data, sizes, rtol=1e-9, atol=0.5))
    ):
        return None
    maps = [k for sh in part.shuffles for k in sh.map_stages]
    return StageChange(
        part.key,
        part.control,
        _knob(part),
        part.partitions,
        len(data),
        data,
        why,
        maps,
        (n0, n1),
        _write_ms(profile, maps, n0, n1, rules.SQL_WRITER),
        record_ms=_record_ms(profile, maps, n0, n1, rules.SQL_WRITER),
        writer=rules.SQL_WRITER,
    )


def _splittable(join_type: str | None) -> tuple[bool, bool]:
    """`OptimizeSkewedJoin.canSplitLeftSide`/`canSplitRightSide` of a join type."""
    if join_type is None:
        return False, False
    left = join_type in ("Inner", "Cross", "LeftSemi", "LeftAnti", "LeftOuter")
    right = join_type in ("Inner", "Cross", "RightOuter")
    return left, right


def _ranges_data(partitions: FloatArray, ranges: list[tuple[int, int]]) -> FloatArray:
    if not ranges:
        return np.zeros(1)
    bounds = np.cumsum(np.r_[0.0, partitions])
    return np.array([bounds[e] - bounds[s] for s, e in ranges], dtype=np.float64)


def file_change(
    profile: ApplicationProfile,
    part: StagePartitioning,
    base: EffectiveSettings,
    target: EffectiveSettings,
    base_parallelism: int,
    new_parallelism: int,
) -> StageChange | None:
    """New partitions of a file scan: Spark's splits of the files under the new settings
    (each file taken as the mean size), scaled by how well the rule reproduced the
    profiled run's own count."""
    if _same(base, target, _FILE_KEYS) and base_parallelism == new_parallelism:
        return None
    scans = part.scans
    files = sum(s.files or 0 for s in scans)
    size = sum(s.bytes or 0 for s in scans)
    if files <= 0 or size <= 0:
        return None
    sizes = np.full(files, size // files, dtype=np.int64)
    sizes[: size - int(sizes.sum())] += 1
    for settings in (
        file_split_settings(base, base_parallelism),
        file_split_settings(target, new_parallelism),
    ):
        split = rules.max_split_bytes(sizes, settings)
        pieces = -(-size // max(split, 1)) + files
        if pieces > MAX_PARTITIONS * 10:
            raise SettingError(
                f"spark.sql.files.maxPartitionBytes: a split of {split:,} bytes cuts stage "
                f"{part.key[0]}'s {size:,} bytes into over {MAX_PARTITIONS * 10:,} tasks, more "
                "than perfmodel replays in a stage"
            )
    before = rules.file_partitions(sizes, file_split_settings(base, base_parallelism))
    after = rules.file_partitions(sizes, file_split_settings(target, new_parallelism))
    if len(after) == len(before) and np.array_equal(after, before):
        return None
    n = len(after)
    why = f"{n} file splits (from {part.partitions})"
    data = after.astype(np.float64)
    if part.partitions < len(before) / 2:
        # Far fewer tasks than the files' splits: the stage read part of the scan (a limit
        # collects a partition or a few), which the split size does not set.
        return None
    if len(before) != part.partitions:
        n = max(1, round(part.partitions * len(after) / max(len(before), 1)))
        data = np.full(n, float(size) / n)
        why = (
            f"{n} file splits (from {part.partitions}; Spark's rule on files of the mean size "
            f"gives {len(before)} for the profiled run, so its {len(after)} are scaled)"
        )
    data = _as_read(profile, part.key, data)
    return StageChange(part.key, part.control, _knob(part), part.partitions, n, data, why)


def _as_read(profile: ApplicationProfile, key: StageKey, splits: FloatArray) -> FloatArray:
    """New splits of files, scaled to what the profiled stage's tasks read of them: a
    Parquet scan reads its columns, not the files' size (TPC-H's lineitem: a tenth). The
    splits' sizes say how the stage's data is shared out, its read bytes how much it is."""
    stage = profile.stages.get(key)
    if stage is None or not len(stage.table):
        return splits
    t = stage.table
    read = t.total("input_bytes")
    if read > 0 and float(splits.sum()) > 0:
        return splits * (read / float(splits.sum()))
    return splits


def parallelism_change(
    profile: ApplicationProfile,
    part: StagePartitioning,
    new_parallelism: int,
    attempts: Mapping[int, list[StageKey]] | None = None,
) -> StageChange | None:
    """New partitions of a stage that follows spark.default.parallelism: an RDD shuffle
    (hash partitioned, so skew survives) or a generated range (even splits). ``attempts``:
    each stage id's attempts (`stage_attempts`), so finding the map stages is not a scan of
    every stage per stage."""
    if new_parallelism == part.partitions:
        return None
    why = f"{new_parallelism} partitions (spark.default.parallelism, from {part.partitions})"
    maps = _written_parents(profile, part, attempts)
    planned = (part.partitions, new_parallelism) if maps else (0, 0)
    writer = rdd_writer(profile, maps)
    return StageChange(
        part.key,
        part.control,
        _knob(part),
        part.partitions,
        new_parallelism,
        _resplit(profile, part, new_parallelism),
        why,
        maps,
        planned,
        _write_ms(profile, maps, *planned, writer),
        record_ms=_record_ms(profile, maps, *planned, writer),
        writer=writer,
    )


def _resplit(profile: ApplicationProfile, part: StagePartitioning, count: int) -> FloatArray:
    """What each of ``count`` new partitions of the stage reads: its measured partitions'
    contents re-hashed (skew survives), or nothing for generated data."""
    sizes, _ = partition_sizes(profile.stages[part.key])
    if part.range_splits is not None or float(sizes.sum()) <= 0:
        return np.zeros(count)
    contents = partition_contents(sizes, len(sizes) == part.partitions, part.partitions)
    return contents.sizes_at(count)


def rdd_writer(profile: ApplicationProfile, maps: list[StageKey]) -> str:
    """The shuffle writer of an RDD shuffle written by ``maps``: PySpark's (its map stages
    run a ``PairwiseRDD``: no map-side combine, so a file per partition up to the bypass
    threshold) or the JVM's (which may combine on the map side: taken as sorted)."""
    python = bool(maps) and all(
        any(op.name.split(" (")[0] == "PairwiseRDD" for op in profile.stages[k].op_nodes)
        for k in maps
    )
    return rules.PYTHON_WRITER if python else rules.JVM_RDD_WRITER


def _write_ms(
    profile: ApplicationProfile, maps: list[StageKey], before: int, after: int, writer: str
) -> dict[StageKey, tuple[float, float]]:
    """Per map stage, what each of its tasks spends writing ``before`` and ``after``
    partitions beyond its data: for the partitions it puts rows in, from the records its
    tasks wrote (their median; a re-split map task is taken to write as many, as a partial
    aggregation does, whose records are its keys)."""
    out: dict[StageKey, tuple[float, float]] = {}
    for key in maps:
        written = _written_records(profile, key)
        records = float(np.median(written)) if written is not None else None
        out[key] = (
            rules.partition_write_ms(before, writer, records),
            rules.partition_write_ms(after, writer, records),
        )
    return out


def _record_ms(
    profile: ApplicationProfile, maps: list[StageKey], before: int, after: int, writer: str
) -> dict[StageKey, tuple[float, float]]:
    """Per map stage whose shuffle writer sorts at one of ``before`` and ``after`` partitions
    and not at the other, what its mean task spends ordering its records at each
    (`partition_rules.sorted_record_ms`, from the records its tasks wrote)."""
    out: dict[StageKey, tuple[float, float]] = {}
    for key in maps:
        written = _written_records(profile, key)
        records = float(written.mean()) if written is not None else None
        ms = (
            rules.sorted_record_ms(before, writer, records),
            rules.sorted_record_ms(after, writer, records),
        )
        if ms[0] != ms[1]:
            out[key] = ms
    return out


def _written_records(profile: ApplicationProfile, key: StageKey) -> FloatArray | None:
    """The shuffle records each of a stage's ended tasks wrote; None where the log counts
    none."""
    stage = profile.stages.get(key)
    if stage is None or not len(stage.table):
        return None
    written = stage.table.ended_values("shuffle_write_records")
    if not written.size or float(written.sum()) <= 0:
        return None
    return written.astype(np.float64)


def _written_parents(
    profile: ApplicationProfile,
    part: StagePartitioning,
    attempts: Mapping[int, list[StageKey]] | None,
) -> list[StageKey]:
    """The parent stages that wrote a shuffle the stage reads (its RDD parents)."""
    if attempts is None:
        attempts = stage_attempts(profile)
    return [
        k
        for parent_id in profile.stages[part.key].parent_stage_ids
        for k in attempts.get(parent_id, ())
        if len(profile.stages[k].table)
        and float(profile.stages[k].table.col("shuffle_write_bytes").sum()) > 0
    ]


def code_changes(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    edits: Mapping[int, int],
) -> list[StageChange]:
    """Stages whose task count a code edit sets (``stage.ID.partitions=N``: what
    ``repartition(N)``, ``coalesce(N)`` or an RDD operation's ``numPartitions=N`` in place of
    the code's count would give), re-split as a setting's change is. Only a stage whose
    count the code sets takes one: any other is refused, naming what does set it."""
    if not edits:
        return []  # every settings what-if plans through here: no index of the stages for none
    attempts = stage_attempts(profile)
    out: list[StageChange] = []
    for stage_id, count in edits.items():
        key = stage_key(stage_id)
        keys = attempts.get(stage_id)
        if not keys:
            raise SettingError(f"{key}: this log has no stage {stage_id}")
        ran = [
            partitioning.stages[k]
            for k in keys
            if k in partitioning.stages
            and profile.stages[k].status != "SKIPPED"
            and len(profile.stages[k].table)
        ]
        if not ran:
            raise SettingError(
                f"{key}: stage {stage_id} ran no task, so it has no work to re-split"
            )
        for part in ran:
            _check_code_control(key, part, count)
            if count == part.partitions:
                continue
            out.append(_code_change(profile, part, count, attempts))
    return out


def _check_code_control(key: str, part: StagePartitioning, count: int) -> None:
    """Refuse an edit of a stage whose task count the code does not set, naming what does."""
    sid = part.key[0]
    if part.control == CODE:
        if part.coalesces and count > part.partitions:
            most = max((s.partitions for s in part.shuffles), default=0)
            if count > most:
                raise SettingError(
                    f"{key}={count}: stage {sid} runs the code's {part.code}, which can only "
                    f"merge its input's partitions ({most or 'a count the log does not give'}); "
                    "a repartition() in its place adds a shuffle, which this what-if does not "
                    "price"
                )
        return
    setting = SETTING_OF.get(part.control)
    if setting is not None:
        why = f"follows {setting} ({part.reason}): set that instead"
    elif part.control == SINGLE:
        why = f"runs one partition whatever the counts ({part.reason}): only the query can split it"
    elif part.control == INPUT:
        why = (
            f"runs its input's partitions ({part.reason}): a repartition() after reading it adds "
            "a shuffle, which this what-if does not price"
        )
    else:
        why = f"is set by something the log does not show ({part.reason})"
    raise SettingError(f"{key}: stage {sid}'s task count is not set in the code; it {why}")


def _code_change(
    profile: ApplicationProfile,
    part: StagePartitioning,
    count: int,
    attempts: Mapping[int, list[StageKey]],
) -> StageChange:
    """A code-set stage re-split into ``count`` partitions. A ``repartition(n)`` (or an RDD
    operation's count) is a shuffle written to that many partitions, so its map stages now
    write ``count``; a ``coalesce(n)`` merges partitions without a shuffle, so nothing
    upstream changes."""
    sql_maps = [k for sh in part.shuffles for k in sh.map_stages]
    maps: list[StageKey] = []
    planned, writer = (0, 0), rules.JVM_RDD_WRITER
    if not part.coalesces and part.range_splits is None:
        if sql_maps:
            maps, planned, writer = sql_maps, (part.partitions, count), rules.SQL_WRITER
        else:
            maps = _written_parents(profile, part, attempts)
            planned = (part.partitions, count) if maps else (0, 0)
            writer = rdd_writer(profile, maps)
    return StageChange(
        part.key,
        part.control,
        stage_key(part.key[0]),
        part.partitions,
        count,
        _resplit(profile, part, count),
        f"{count} partitions in place of the code's {part.code}",
        maps,
        planned,
        _write_ms(profile, maps, *planned, writer),
        record_ms=_record_ms(profile, maps, *planned, writer),
        writer=writer,
    )


def stage_attempts(profile: ApplicationProfile) -> dict[int, list[StageKey]]:
    """Each stage id's attempts, in the profile's order."""
    out: dict[int, list[StageKey]] = {}
    for key in profile.stages:
        out.setdefault(key[0], []).append(key)
    return out


def _knob(part: StagePartitioning) -> str:
    """The setting in control of a stage's task count, as the user writes it."""
    return part.setting or part.control


def plan_settings(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    changes: Mapping[str, SettingValue],
    target_cores: int,
    local_mode: bool,
) -> PartitionPlan:
    """Everything Spark settings ``changes`` (parsed) change in the profile's partitioning:
    the stages they re-partition, the joins that change strategy, and notes on what was
    kept. ``target_cores`` and ``local_mode``: the configuration the run would have (the
    default parallelism follows its cores where the log did not set it). A
    ``stage.ID.partitions`` key among them is a code edit (`code_changes`)."""
    edits = {sid: int(v) for k, v in changes.items() if (sid := stage_of_key(k)) is not None}
    settings = {k: v for k, v in changes.items() if stage_of_key(k) is None}
    stages, notes = plan_changes(profile, partitioning, settings, target_cores, local_mode)
    # A code edit acts on stages the code sets, which no setting re-partitions.
    stages += code_changes(profile, partitioning, edits)
    joins, join_notes = plan_join_switches(profile, partitioning, settings)
    return PartitionPlan(stages, joins, notes + join_notes, partitioning.writers)


def plan_changes(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    changes: Mapping[str, SettingValue],
    target_cores: int,
    local_mode: bool,
) -> tuple[list[StageChange], list[str]]:
    """Every stage whose partitions the settings change, and notes on what was kept."""
    out: list[StageChange] = []
    notes: list[str] = []
    base_parallelism = partitioning.default_parallelism
    new_parallelism = target_parallelism(partitioning, changes, target_cores, local_mode)
    join_of = _join_types(partitioning)
    attempts = stage_attempts(profile)
    kept_keys: set[str] = set()
    for key, part in partitioning.stages.items():
        stage = profile.stages.get(key)
        if stage is None or stage.status == "SKIPPED" or not len(stage.table):
            continue
        base = partitioning.settings_for(part)
        target, kept = target_settings(partitioning, part, changes)
        kept_keys.update(kept)
        change: StageChange | None = None
        if part.control == SHUFFLE_SETTING:
            change = shuffle_change(
                profile, part, base, target, base_parallelism, new_parallelism, join_of.get(key)
            )
        elif part.control == FILE_SPLITS:
            change = file_change(profile, part, base, target, base_parallelism, new_parallelism)
        elif part.control == RDD_PARALLELISM:
            # An RDD shuffle follows spark.default.parallelism only where it is set (unset,
            # its largest parent's count); generated data follows it set or not (the cores).
            follows = (
                part.planned is None
                or partitioning.parallelism_set
                or ("spark.default.parallelism" in changes)
            )
            # Unchanged parallelism changes nothing: a stage's own count may differ from it
            # (a cartesian product runs one task per pair of its sides' partitions).
            if follows and new_parallelism != base_parallelism:
                change = parallelism_change(profile, part, new_parallelism, attempts)
        if change is not None:
            if change.new_partitions > MAX_PARTITIONS * 10:
                raise SettingError(
                    f"stage {key[0]} would run {change.new_partitions:,} tasks under these "
                    f"settings ({change.why}); perfmodel replays at most "
                    f"{MAX_PARTITIONS * 10:,} per stage"
                )
            out.append(change)
    out.extend(_follower_changes(profile, partitioning, out))
    out = _file_reader_changes(profile, partitioning, out, changes, new_parallelism)
    out = [_with_output_files(profile, partitioning, c) for c in out]
    out = _with_map_records(profile, out)
    if kept_keys:
        notes.append(
            "the code sets " + ", ".join(sorted(kept_keys)) + " for some queries itself "
            "(spark.conf.set): there the setting given does not apply, as in Spark"
        )
    return out, notes


def _with_output_files(
    profile: ApplicationProfile, partitioning: Partitioning, change: StageChange
) -> StageChange:
    """A change of a stage whose tasks wrote output (``df.write``), with each task's fixed
    cost for its files before and after (`partition_rules.OUTPUT_FILE_MS` a file: one a
    task, or for a ``partitionBy`` write one per partition value it holds rows of,
    `partition_rules.files_per_task`) and its warm launch
    (`partition_rules.WRITER_LAUNCH_MS`)."""
    if change.key not in partitioning.writers:
        return change
    part = partitioning.stages[change.key]  # every change is of a stage it derived
    rows, values = part.written_rows, part.dynamic_partitions
    measured = (part.written_file_count, change.old_partitions)
    before = rules.files_per_task(change.old_partitions, rows, values, measured)
    after = rules.files_per_task(change.new_partitions, rows, values, measured)
    return replace(
        change,
        task_fixed_ms=(rules.OUTPUT_FILE_MS * before, rules.OUTPUT_FILE_MS * after),
        launch_ms=rules.WRITER_LAUNCH_MS,
    )


def _with_map_records(profile: ApplicationProfile, changes: list[StageChange]) -> list[StageChange]:
    """Each change of a stage reading a shuffle, with what its map stages' records cost it
    under the changes: what each of its tasks spends fetching blocks before and after
    (`partition_rules.BLOCK_READ_MS`, `partition_rules.blocks_per_task`), from each map
    stage's task count and the records its tasks wrote, now and under the changes; and, for
    a map stage the changes re-split too, what each of its new tasks spends on the
    partitions it writes (`partition_rules.partition_write_ms`). A re-split map stage writes
    the records `partition_rules.records_after` gives for its tasks' new share of its input:
    a distinct aggregation re-split from 8 tasks to 2,000 wrote 1,579 records a task where
    its 8 wrote 279,787 each, so that its tasks filled about 1,100 of 2,000 partitions, not
    all of them."""
    by_key = {c.key: c for c in changes}
    out: list[StageChange] = []
    for change in changes:
        n0, n1 = change.planned
        if n0 <= 0 or n1 <= 0 or not change.map_stages:
            out.append(change)
            continue
        before = after = 0.0
        write_ms = dict(change.write_ms)
        for key in dict.fromkeys(change.map_stages):
            written = _written_records(profile, key)
            if written is None:
                continue
            t = profile.stages[key].table
            m0 = int(written.size)
            w0 = float(written.mean())
            read = t.ended_values("shuffle_read_records") + t.ended_values("input_records")
            r0 = float(read.mean()) if read.size else 0.0
            resplit = by_key.get(key)
            m1 = resplit.new_partitions if resplit is not None else m0
            w1 = rules.records_after(r0, w0, r0 * m0 / m1) if m1 != m0 else w0
            before += rules.blocks_per_task(m0, w0, n0, change.old_partitions)
            after += rules.blocks_per_task(m1, w1, n1, change.new_partitions)
            if m1 != m0 and key in write_ms and change.writer:
                # `write_ms` reads the median task's records: moved as the mean's are.
                records = float(np.median(written)) * w1 / w0
                write_ms[key] = (
                    write_ms[key][0],
                    rules.partition_write_ms(n1, change.writer, records),
                )
        if before <= 0 and after <= 0:
            out.append(replace(change, write_ms=write_ms))
            continue
        read_ms = (rules.BLOCK_READ_MS * before, rules.BLOCK_READ_MS * after)
        out.append(replace(change, read_ms=read_ms, blocks=(before, after), write_ms=write_ms))
    return out


def _follower_changes(
    profile: ApplicationProfile, partitioning: Partitioning, changes: list[StageChange]
) -> list[StageChange]:
    """Stages reading back a changed stage's output (`StagePartitioning.follows`: a
    checkpoint or cache of it) re-split into the partitions that stage now makes."""
    changed = {c.key: c for c in changes}
    out: list[StageChange] = []
    for key, part in sorted(partitioning.stages.items()):
        source = changed.get(part.follows) if part.follows is not None else None
        stage = profile.stages.get(key)
        if source is None or stage is None or stage.status == "SKIPPED" or not len(stage.table):
            continue
        n = len(source.data)
        if n == part.partitions:
            continue
        why = f"{n} partitions: it reads back stage {source.key[0]}'s output ({source.why})"
        out.append(
            StageChange(
                key, part.control, source.knob, part.partitions, n, _resplit(profile, part, n), why
            )
        )
    return out


def _file_reader_changes(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    changes: list[StageChange],
    settings: Mapping[str, SettingValue],
    new_parallelism: int,
) -> list[StageChange]:
    """``changes``, with each stage that reads files a changed stage wrote
    (`StagePartitioning.files_of`) re-planned for the files that stage now writes: a file
    per new task that writes any, each of its share of the bytes written. Spark's listing
    of them runs a task per file; a scan of them is split by Spark's rule under the new
    settings (replacing a change the settings alone made to it), unless it ran fewer tasks
    than its scan had partitions (a limit read part of them). Where the writer writes
    32 files or fewer, Spark lists them in the driver, with no tasks: the listing stage is
    kept at a task per file, a few tasks too many."""
    changed = {c.key: c for c in changes}
    readers: dict[StageKey, StageChange] = {}
    new_files: dict[StageKey, rules.IntArray] = {}
    for key, part in sorted(partitioning.stages.items()):
        writer = changed.get(part.files_of) if part.files_of is not None else None
        stage = profile.stages.get(key)
        if writer is None or stage is None or stage.status == "SKIPPED" or not len(stage.table):
            continue
        sizes = new_files.get(writer.key)
        if sizes is None:
            sizes = new_files[writer.key] = _files_written_by(profile, writer)
        if not len(sizes):
            continue
        if part.lists_files:
            n = len(sizes)
            why = f"{n} tasks: Spark lists the {n} files stage {writer.key[0]} now writes"
            data = _resplit(profile, part, n)
        else:
            scanned = max((op.num_partitions for op in stage.op_nodes), default=0)
            if part.partitions < scanned:
                # Fewer tasks than its scan had partitions: it read part of the scan (a
                # limit, a CSV header's first line), which the files do not set.
                continue
            target, _ = target_settings(partitioning, part, settings)
            after = rules.file_partitions(sizes, file_split_settings(target, new_parallelism))
            n = len(after)
            data = _as_read(profile, key, after.astype(np.float64))
            why = (
                f"{n} file splits: it scans the {len(sizes)} files stage {writer.key[0]} now writes"
            )
        if n == part.partitions:
            continue
        readers[key] = StageChange(key, part.control, writer.knob, part.partitions, n, data, why)
    return [c for c in changes if c.key not in readers] + list(readers.values())


def _files_written_by(profile: ApplicationProfile, writer: StageChange) -> rules.IntArray:
    """The files a re-split writer writes: one per new task with data, each of its share of
    the bytes the profiled stage wrote."""
    total = float(written_files(profile, writer.key).sum())
    if float(writer.data.sum()) > 0:
        share = writer.data / max(float(writer.data.sum()), 1.0)
    else:
        share = np.full(len(writer.data), 1.0 / max(len(writer.data), 1))
    sizes = np.maximum(np.round(share * total), 0).astype(np.int64)
    return sizes[sizes > 0]


def _join_types(partitioning: Partitioning) -> dict[StageKey, str]:
    """Stages running a shuffled join, with the join's type (for AQE's skew split)."""
    out: dict[StageKey, str] = {}
    for join in partitioning.joins:
        if join.strategy in ("sort-merge", "shuffled-hash"):
            for key in join.stages:
                out[key] = join.join_type
    return out


def controls_of(profile: ApplicationProfile, partitioning: Partitioning) -> dict[str, int]:
    """Stages that ran tasks, per knob kind in control of their task count."""
    out: dict[str, int] = {}
    for key, part in partitioning.stages.items():
        stage = profile.stages.get(key)
        if stage is None or stage.status == "SKIPPED" or not len(stage.table):
            continue
        out[part.control] = out.get(part.control, 0) + 1
    return out


def no_effect(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    changes: Mapping[str, SettingValue],
    controls: Mapping[str, int],
) -> dict[str, str]:
    """Settings given that this profile gives nothing to act on, each with the reason: no
    stage reads a SQL shuffle planned with ``spark.sql.shuffle.partitions``, none scans
    files, no join, ... (a log without SQL plans, above all, says so)."""
    shuffles = controls.get(SHUFFLE_SETTING, 0)
    files = controls.get(FILE_SPLITS, 0)
    rdd = controls.get(RDD_PARALLELISM, 0)
    joins = len(partitioning.joins)
    plans = any(q.plan is not None for q in profile.queries.values())
    out: dict[str, str] = {}
    for key in changes:
        if key == "spark.sql.shuffle.partitions" or key in _AQE_KEYS:
            acts = shuffles > 0 or (key == "spark.sql.adaptive.enabled" and joins > 0)
            what = "reads a SQL shuffle planned with spark.sql.shuffle.partitions"
        elif key in _FILE_KEYS:
            acts, what = files > 0, "splits files it scans by the SQL file-split settings"
        elif key == "spark.default.parallelism":
            acts = rdd + files + shuffles > 0
            what = "follows spark.default.parallelism"
        elif key in JOIN_KEYS:
            acts, what = joins > 0, "runs a SQL join"
        else:
            continue
        if not acts and not plans:
            out[key] = (
                "the log has no SQL plans (an RDD application, or SQL events left out of the "
                "log), so no stage is known to follow it: no change predicted"
            )
        elif not acts:
            out[key] = f"no stage of this log {what}: no change predicted"
    return out
