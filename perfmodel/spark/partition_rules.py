"""Spark's own rules for how many partitions a stage gets, as functions of sizes.

A settings what-if must decide partition counts the way Spark would with the new
settings, so these follow Spark's source rather than a summary of it:

* AQE's coalescing of shuffle partitions: `CoalesceShufflePartitions` and
  `ShufflePartitionsUtil.coalescePartitions` (Spark 3.2+; 3.0/3.1 are the same rule without
  ``minPartitionSize``, which the settings' defaults express);
* AQE's skew-join splitting: `OptimizeSkewedJoin` and
  `ShufflePartitionsUtil.createSkewPartitionSpecs` / `splitSizeListByTargetSize`;
* file-scan splits: `FilePartition.maxSplitBytes`, `PartitionedFileUtil.splitFiles` and
  `FilePartition.getFilePartitions` ("next fit decreasing");
* the shuffle writer a map task gets (`SortShuffleManager.registerShuffle`), and what it
  costs per partition written (`partition_write_ms`, measured) and, sorted, per record
  (`sorted_record_ms`, measured).
* the shuffle blocks a reduce task fetches (one per map task holding rows for its
  partitions; `MapOutputTracker` leaves empty blocks out, and AQE's coalesced reads
  fetch a map task's contiguous blocks as one), and what each costs (`BLOCK_READ_MS`,
  measured).

Each takes plain numbers and arrays (sizes in bytes) and returns plain numbers and arrays;
what the sizes are (measured or modelled) is the caller's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

BYPASS_MERGE_THRESHOLD = 200
"""``spark.shuffle.sort.bypassMergeThreshold``: up to this many partitions a shuffle with no
map-side combine is written by `BypassMergeSortShuffleWriter`, a file per partition."""
SQL_WRITER = "sql"
"""A SQL exchange: rows in Spark's own binary form, no map-side combine."""
PYTHON_WRITER = "python"
"""A PySpark RDD shuffle (``PairwiseRDD``): pickled batches as Java-serialised byte arrays,
the combining done in Python, so none on the map side."""
JVM_RDD_WRITER = "jvm-rdd"
"""A JVM RDD shuffle, which may combine on the map side (``reduceByKey``): taken as sorted."""
FILE_PER_PARTITION_MS = {SQL_WRITER: 0.6, PYTHON_WRITER: 1.8}
SORTED_PARTITION_MS = 0.02
"""Milliseconds of task time a map task spends per reduce partition it writes, beyond its
data: a file of its own per partition up to `BYPASS_MERGE_THRESHOLD` (created, buffered,
compressed, closed and merged into one; for PySpark a Java serialisation stream each, and
a Python batch per partition), a segment of one sorted file beyond it. Measured on this
project's study machine with ``experiments/settings/write_cost.py`` (local[2], 16 map tasks
of 120–380 KB each, eight runs: four on 2026-11-30, and four rounds of one application on
2026-12-01): from 8 to 200 partitions SQL map tasks took 0.41, 1.60, 1.53, 0.77, 0.05,
0.26, 0.61 and 0.55 ms more a partition, PySpark's 2.17, 2.00, 2.14, 2.24, 1.58, 1.43, 1.43
and 1.54 ms; the medians (0.58 and 1.79) are taken. From 201 to 2,000, 0.00 to 0.03 ms.
Mostly the task thread's CPU. The SQL cost moves by a factor of ten between runs of the
same job on the same machine (creating and deleting files is the file system's work, and
its state moves it; the shuffle write time Spark logs, which times the files' opening,
does not follow it): a what-if that crosses the threshold carries that uncertainty. A
property of the machine's file system and JVM: another may differ."""


WRITER_LAUNCH_MS = 32.0
"""Milliseconds a task that writes output spends on launching once the JVM is warm, beside
its file: it deserialises its stage's task binary, which holds the writer's Hadoop
configuration, where a task of another stage took 3–20 ms. Measured on this project's
study machine with ``experiments/settings/write_cost.py --what output --counts 400,2000``
(2026-12-01, two runs): the median launch overhead of the later half of each writing stage,
35, 32, 32, 26, 34, 36, 30 and 28 ms (CSV and Parquet at 400 and 2,000 files); their median.
A stage of too few tasks to measure its own warm launch (`simulate.repartition.own_launch_ms`)
is given this one for the tasks a re-split adds."""


OUTPUT_FILE_MS = 22.0
"""Milliseconds a task that writes output (``df.write``, ``saveAsTextFile``) spends on its
file whatever its data: creating, closing and committing it (`FileOutputCommitter`'s task
attempt directory and rename). Measured on this project's study machine with
``experiments/settings/write_cost.py --what output`` (2,000,000 rows written at 8, 64 and 400
partitions, 2026-11-30, three runs): 25.1, 26.8 and 30.0 ms a CSV file, 11.2, 19.5 and
16.4 ms a Parquet file; about their median (22.3)."""


def partitions_written(partitions: int, records: float | None) -> float:
    """How many of ``partitions`` reduce partitions a map task writing ``records`` records
    puts rows in, the records hashed evenly: ``p·(1 − (1 − 1/p)^r)``, at most the records.
    ``None``: records unknown, every partition."""
    if partitions <= 0:
        return 0.0
    if records is None:
        return float(partitions)
    if records <= 0:
        return 0.0
    if partitions == 1:
        return 1.0
    return float(partitions * -np.expm1(records * np.log1p(-1.0 / partitions)))


def files_per_task(tasks: int, rows: int, values: int, measured: tuple[int, int] = (0, 0)) -> float:
    """Files each of ``tasks`` tasks writes for a write of ``rows`` rows: one, or for a
    ``partitionBy`` write over ``values`` partition values, one per value it holds rows of.
    Rows spread evenly over the tasks fill `partitions_written` values each (a task with no
    rows writes none: a country-by-day table of 7,300 rows over 10 countries wrote 80 files
    from 8 tasks, 3,383 from 400 and 6,135 from 2,000, where this gives 80, 3,415 and
    6,385); rows partitioned by the partition column itself (``repartition(col)`` before
    ``partitionBy(col)``) put each value in one task, whatever the count: ``values`` files
    in all (5 channels wrote 5 files from 8 tasks and from 2,000). ``measured``: the files
    the run wrote and its tasks, which place the write between the two (0 where they are
    unknown: spread evenly)."""
    if values <= 1 or tasks <= 0:
        return 1.0
    spread = tasks * partitions_written(values, rows / tasks)
    files0, tasks0 = measured
    if files0 > 0 and tasks0 > 0:
        spread0 = tasks0 * partitions_written(values, rows / tasks0)
        if spread0 > values:
            mix = min(max((files0 - values) / (spread0 - values), 0.0), 1.0)
            spread = values + mix * (spread - values)
    return spread / tasks


def partition_write_ms(partitions: int, writer: str, records: float | None = None) -> float:
    """A map task's time for writing ``partitions`` reduce partitions beyond its data, by
    its shuffle writer (`SQL_WRITER`, `PYTHON_WRITER`, `JVM_RDD_WRITER`), paid for each
    partition it puts rows in (`partitions_written`, from the ``records`` it writes): an
    empty partition opens no stream, in the bypass writer (`DiskBlockObjectWriter` opens
    its file on the first record) as in the sorted one (a segment per partition written).
    A partial aggregation over a dozen keys writes a dozen records a task, whatever the
    count: at 2,000 partitions such map tasks took 25 ms, where 2,000 partitions' worth
    would be 40 ms more."""
    written = partitions_written(partitions, records)
    if written <= 0:
        return 0.0
    per_file = FILE_PER_PARTITION_MS.get(writer)
    if per_file is not None and partitions <= BYPASS_MERGE_THRESHOLD:
        return per_file * written
    return SORTED_PARTITION_MS * written


SORTED_RECORD_MS = 0.00025
"""Milliseconds a map task spends on each record it writes through a sorted shuffle writer
beyond what a file-per-partition writer spends on it: copying the record into the sorter's
memory, ordering it by partition, and reading it back to write (`UnsafeShuffleWriter`
where a SQL exchange passes `BYPASS_MERGE_THRESHOLD`). Measured with
``experiments/settings/write_cost.py --what shuffle --counts 8,201,...`` on a 2-core
host slower than the study machine (2026-12-02): SQL map tasks of 400,000 records took 69,
76, 94 and 123 ms more at 201 partitions than at 8 in four rounds of one application
(0.17 to 0.31 µs a record), of 200,000 wider records 51 and 13 ms (0.26 and 0.07 µs), of
25,000 records about 7 ms beyond the partitions' cost (0.3 µs); about their median. Item-
affinity's scan tasks (a million records each) took 0.6 to 1.3 µs a record more at 400
and 2,000 partitions than at 8, where more of their time may be memory's: the rule is a
floor. A property of the machine's JVM, as the write cost is."""


def sorted_record_ms(partitions: int, writer: str, records: float | None) -> float:
    """A map task's time for ordering the ``records`` it writes by partition
    (`SORTED_RECORD_MS` each), where its shuffle writer for ``partitions`` partitions sorts:
    a file-per-partition writer (`FILE_PER_PARTITION_MS`) up to `BYPASS_MERGE_THRESHOLD`
    does not; a JVM RDD shuffle's is taken as sorted at any count, so it never moves.
    ``None``: records unknown, nothing."""
    if records is None or records <= 0 or partitions <= 0:
        return 0.0
    if writer in FILE_PER_PARTITION_MS and partitions <= BYPASS_MERGE_THRESHOLD:
        return 0.0
    return SORTED_RECORD_MS * records


BLOCK_READ_MS = 0.02
"""Milliseconds a reduce task spends on each shuffle block it fetches, beyond the block's
bytes: finding the block in its map output's index, opening a stream on it and its
decompression buffers. A block is one map task's rows for the task's partition (under AQE's
coalescing, for its range of partitions: ``fetchShuffleBlocksInBatch`` reads a map task's
contiguous blocks as one), and only non-empty blocks are fetched, so a reduce task fetches
up to one block per map task: a shuffle of many map tasks into many partitions has as many
blocks as their product, and its cost grows with both counts (`blocks_per_task`). Measured
on the runs of the twenty-first and twenty-second settings studies (``local[2]``,
2026-12-02, on a 2-core host slower than the study machine): item-affinity's last stage
took 10, 13, 22 and 38 ms of CPU a task fetching 64, 200, 400 and 1,203 blocks a task
(its data falling from 0.3 MB to 0.1 MB a task), customer-days' 33 and 46 ms at 400 and
1,056 blocks; about 0.02 ms a block in both. A property of the machine, as the write cost
is."""

COMBINING_SHARE = 0.95
"""A map task writing at least this share of the records it read is taken not to combine
(its records follow its input); below it, it writes the distinct keys of what it read
(`records_after`)."""


def records_after(read: float, written: float, read_after: float) -> float:
    """Records a map task writes when it reads ``read_after`` records, from what the run's
    map tasks read and wrote (``read``, ``written``, a task's mean). A task that combines
    (a partial aggregation) writes the distinct keys among the records it read: for K keys
    hit evenly, ``K·(1 − e^(−r/K))``, with K solved from the run's ``written`` and ``read``,
    so that a task cut to a tenth of the records writes more than a tenth of the keys (its
    keys recur less). Item-affinity's map tasks, read at 8 tasks (736,347 records read, 34,692
    written each), give 2,824 a task at 2,000 tasks, where they wrote 1,857 (popular keys
    recur in every task, which even hashing does not see); in proportion it would be 139.
    A task writing as many records as it read (`COMBINING_SHARE`), or with no records read
    to go by, writes in proportion to its input."""
    if read <= 0 or written <= 0:
        return max(written, 0.0)
    if written >= COMBINING_SHARE * read:
        return written * read_after / read
    # (1 − e^(−x)) / x = written / read, for x = read / K: decreasing in x, so bisect.
    target = written / read
    lo, hi = 1e-9, max(2.0 / target, 1.0)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if -np.expm1(-mid) / mid > target:
            lo = mid
        else:
            hi = mid
    keys = read / (0.5 * (lo + hi))
    return float(keys * -np.expm1(-read_after / keys))


def blocks_per_task(map_tasks: int, records: float | None, partitions: int, tasks: int) -> float:
    """Shuffle blocks each of ``tasks`` reduce tasks fetches from ``map_tasks`` map tasks
    that wrote ``records`` records each over ``partitions`` partitions, hashed evenly
    (`BLOCK_READ_MS`): a map task holds rows for a task's partition (or, coalesced, its
    range: a ``1/tasks`` share of the partitions) with probability
    ``1 − (1 − 1/c)^records``, c the fewer of tasks and partitions; a skewed partition split
    into pieces has each piece read a share of the map tasks. Item-affinity's last stage
    fetched 1,203 blocks a task at 2,000 partitions from 2,000 map tasks of 1,857 records;
    this gives 1,210. ``None``: records unknown, a block from each map task."""
    if map_tasks <= 0 or tasks <= 0 or partitions <= 0:
        return 0.0
    if records is None:
        return float(map_tasks) * min(1.0, partitions / tasks)
    if records <= 0:
        return 0.0
    share = min(tasks, partitions)
    hit = 1.0 if share == 1 else float(-np.expm1(records * np.log1p(-1.0 / share)))
    return map_tasks * hit * min(1.0, partitions / tasks)


SMALL_PARTITION_FACTOR = 0.2
MERGED_PARTITION_FACTOR = 1.2
"""`ShufflePartitionsUtil`'s factors for merging a small last piece of a skew split."""


def coalesce_target(
    total_bytes: int, advisory: int, min_num_partitions: int, min_partition_size: int
) -> int:
    """The target size of a coalesced partition: the advisory size, at most an even share
    of the data over ``min_num_partitions``, at least ``min_partition_size``."""
    max_target = -(-total_bytes // max(min_num_partitions, 1))
    return max(min(max_target, advisory), min_partition_size)


def coalesce_ranges(
    sizes: IntArray,
    start: int,
    end: int,
    target: int,
    min_partition_size: int,
    allow_empty: bool,
) -> list[tuple[int, int]]:
    """`ShufflePartitionsUtil.coalescePartitions(start, end, ...)`: pack partitions of
    contiguous indices until adding the next would pass ``target``; a packed run still
    below ``min_partition_size`` is merged into the smaller of its neighbours (Spark 3.3+;
    pass 0 for the rule before). Empty runs get no task unless every partition is empty and
    ``allow_empty`` is False. ``sizes`` are per partition, summed over the shuffles read
    together."""
    out: list[tuple[int, int]] = []
    coalesced = 0
    latest = start
    latest_size = 0
    values = sizes[start:end].tolist()
    for offset, size in enumerate(values):
        i = start + offset
        if i > latest and coalesced + size > target:
            if coalesced < min_partition_size:
                if 0 < latest_size < size:
                    out[-1] = (out[-1][0], i)  # into the run before
                    latest = i
                    latest_size += coalesced
                    coalesced = size
                else:
                    coalesced += size  # into the run after
            else:
                if coalesced > 0:
                    out.append((latest, i))
                latest = i
                latest_size = coalesced
                coalesced = size
        else:
            coalesced += size
    if coalesced < min_partition_size and latest_size > 0:
        out[-1] = (out[-1][0], end)
    elif coalesced > 0 or (not allow_empty and not out):
        out.append((latest, end))
    return out


@dataclass(frozen=True, slots=True)
class CoalesceSettings:
    """The settings AQE's coalescing reads (already resolved: defaults and fallbacks)."""

    advisory: int
    min_partition_size: int
    min_partition_num: int | None
    """``spark.sql.adaptive.coalescePartitions.minPartitionNum`` when set."""
    parallelism_first: bool
    default_parallelism: int
    merge_small: bool = True
    """Whether runs below the minimum size are merged into a neighbour (Spark 3.3+)."""

    @property
    def merge_below(self) -> int:
        return self.min_partition_size if self.merge_small else 0

    def min_num_partitions(self) -> int:
        """`CoalesceShufflePartitions`'s minimum: the set minimum, else the default
        parallelism when parallelism comes first, else 1."""
        if self.min_partition_num is not None:
            return self.min_partition_num
        return self.default_parallelism if self.parallelism_first else 1


def coalesce_partitions(
    sizes: IntArray, settings: CoalesceSettings, min_num_partitions: int | None = None
) -> list[tuple[int, int]]:
    """AQE's coalescing of one coalesce group without skew splits: the (start, end) index
    ranges of the coalesced partitions, or every partition alone where coalescing would not
    reduce their number (Spark then keeps the plan as it was). ``sizes``: bytes per shuffle
    partition, summed over the group's shuffles."""
    n = len(sizes)
    if n == 0:
        return [(0, 0)]
    minimum = settings.min_num_partitions() if min_num_partitions is None else min_num_partitions
    target = coalesce_target(
        int(sizes.sum()), settings.advisory, max(minimum, 1), settings.min_partition_size
    )
    ranges = coalesce_ranges(sizes, 0, n, target, settings.merge_below, allow_empty=False)
    if len(ranges) < n:
        return ranges
    return [(i, i + 1) for i in range(n)]


def split_by_target(sizes: Sequence[int], target: int) -> list[int]:
    """`ShufflePartitionsUtil.splitSizeListByTargetSize`: start indices splitting ``sizes``
    into pieces near ``target``, a small piece merged into its neighbour."""
    starts = [0]
    current = 0
    last = -1

    def try_merge() -> None:
        nonlocal last
        merge = last > -1 and (
            current + last < target * MERGED_PARTITION_FACTOR
            or current < target * SMALL_PARTITION_FACTOR
            or last < target * SMALL_PARTITION_FACTOR
        )
        if merge:
            starts.pop()
            last += current
        else:
            last = current

    for i, size in enumerate(sizes):
        if i > 0 and current + size > target:
            try_merge()
            starts.append(i)
            current = size
        else:
            current += size
    try_merge()
    return starts


@dataclass(frozen=True, slots=True)
class SkewSettings:
    enabled: bool
    factor: float
    threshold: int
    advisory: int


def median_size(sizes: IntArray) -> int:
    """`Utils.median(sizes, false)`: the middle size (mean of the two middle ones for an
    even count, integer division), at least 1."""
    ordered = np.sort(sizes)
    n = len(ordered)
    if n == 0:
        return 1
    if n % 2 == 0:
        return max(int((int(ordered[n // 2]) + int(ordered[n // 2 - 1])) // 2), 1)
    return max(int(ordered[n // 2]), 1)


def skew_threshold(sizes: IntArray, settings: SkewSettings) -> int:
    """`OptimizeSkewedJoin.getSkewThreshold`: the larger of the threshold setting and the
    median size times the factor."""
    return max(settings.threshold, int(median_size(sizes) * settings.factor))


def skew_target(sizes: IntArray, threshold: int, advisory: int) -> int:
    """`OptimizeSkewedJoin.targetSize`: the mean size of the partitions that are not
    skewed, at least the advisory size."""
    normal = sizes[sizes <= threshold]
    if normal.size == 0:
        return advisory
    return max(advisory, int(normal.sum()) // int(normal.size))


def skew_pieces(size: int, map_shares: NDArray[np.float64], target: int) -> int:
    """Pieces a skewed shuffle partition of ``size`` bytes is split into: its blocks, one
    per map task (``map_shares``: each map task's share of the shuffle, by which the
    partition's bytes are taken to spread), grouped by `split_by_target`; 1 when it cannot
    be split (a single map task, or one group)."""
    blocks = [int(round(size * s)) for s in map_shares.tolist()]
    starts = split_by_target(blocks, target)
    return len(starts)


def skew_join_pieces(
    left: IntArray,
    right: IntArray,
    settings: SkewSettings,
    split_left: bool,
    split_right: bool,
    left_maps: NDArray[np.float64],
    right_maps: NDArray[np.float64],
) -> tuple[IntArray, IntArray]:
    """`OptimizeSkewedJoin.tryOptimizeJoinChildren`: per shuffle partition, the pieces each
    side is split into (1 where not skewed or not splittable; a partition of both sides
    split runs as the product of their pieces). ``split_left``/``split_right``: whether the
    join type allows splitting that side (inner: both; left outer, semi, anti: left)."""
    n = len(left)
    ones = np.ones(n, dtype=np.int64)
    if not settings.enabled or n == 0 or not (split_left or split_right):
        return ones, ones.copy()
    pieces: list[IntArray] = []
    for sizes, allowed, maps in ((left, split_left, left_maps), (right, split_right, right_maps)):
        side = np.ones(n, dtype=np.int64)
        if allowed:
            threshold = skew_threshold(sizes, settings)
            target = skew_target(sizes, threshold, settings.advisory)
            for i in np.flatnonzero(sizes > threshold).tolist():
                side[i] = skew_pieces(int(sizes[i]), maps, target)
        pieces.append(side)
    return pieces[0], pieces[1]


def coalesce_with_skew(
    sizes: IntArray, pieces: IntArray, settings: CoalesceSettings, min_num_partitions: int
) -> tuple[list[tuple[int, int]], list[int]]:
    """`coalescePartitionsWithSkew`: the partitions a skew-split join reads after coalescing.
    Skewed partitions (``pieces`` > 1: the product of both sides' pieces) keep their splits;
    the runs of partitions between them are coalesced, each on its own, with the group's
    target. Returns the coalesced (start, end) ranges of unsplit partitions and, per split
    partition, its index repeated once per piece (in partition order, as tasks run)."""
    n = len(sizes)
    target = coalesce_target(
        int(sizes.sum()), settings.advisory, max(min_num_partitions, 1), settings.min_partition_size
    )
    ranges: list[tuple[int, int]] = []
    split: list[int] = []
    start = 0
    skewed = np.flatnonzero(pieces > 1).tolist()
    for i in skewed:
        if i > start:
            ranges += coalesce_ranges(
                sizes, start, i, target, settings.merge_below, allow_empty=True
            )
        split += [i] * int(pieces[i])
        start = i + 1
    if n > start:
        ranges += coalesce_ranges(sizes, start, n, target, settings.merge_below, allow_empty=True)
    return ranges, split


@dataclass(frozen=True, slots=True)
class FileSplitSettings:
    max_partition_bytes: int
    open_cost: int
    min_partition_num: int
    """``spark.sql.files.minPartitionNum``, else the leaf-node default parallelism."""


def max_split_bytes(file_sizes: IntArray, settings: FileSplitSettings) -> int:
    """`FilePartition.maxSplitBytes`: the split size, at most ``maxPartitionBytes``, at least
    ``openCostInBytes``, else the files' bytes (each file counted with its open cost)
    shared evenly over the minimum partition count."""
    total = int(file_sizes.sum()) + settings.open_cost * len(file_sizes)
    per_core = total // max(settings.min_partition_num, 1)
    return min(settings.max_partition_bytes, max(settings.open_cost, per_core))


def file_partitions(
    file_sizes: IntArray, settings: FileSplitSettings, splittable: bool = True
) -> IntArray:
    """Bytes of each partition a file scan reads: files cut into `max_split_bytes` pieces
    (when the format is splittable), largest first, packed "next fit": a partition is
    closed when the next piece would take it over the split size, each piece also costing
    the open cost (`FilePartition.getFilePartitions`)."""
    split = max(max_split_bytes(file_sizes, settings), 1)
    pieces: list[int] = []
    for size in file_sizes.tolist():
        if splittable and size > split:
            full, rest = divmod(int(size), split)
            pieces += [split] * full
            if rest:
                pieces.append(rest)
        else:
            pieces.append(int(size))
    pieces.sort(reverse=True)
    out: list[int] = []
    current = 0
    count = 0
    filled = 0
    for size in pieces:
        if count and current + size > split:
            out.append(filled)
            current = count = filled = 0
        current += size + settings.open_cost
        filled += size
        count += 1
    if count:
        out.append(filled)
    return np.array(out, dtype=np.int64)


LOG_BASE = 1.1
"""`MapStatus`'s base: a block's size is stored as the exponent of the next power of 1.1."""
HIGHLY_COMPRESSED_FROM = 2000
"""``spark.shuffle.minNumPartitionsToHighlyCompress``: beyond this many partitions a map
task reports the mean size of its non-empty blocks instead of each block's."""


def reported_block_sizes(blocks: NDArray[np.float64]) -> NDArray[np.float64]:
    """The sizes AQE sees for shuffle blocks of ``blocks`` bytes: `MapStatus.compressSize`
    then `decompressSize`, i.e. rounded up to a power of 1.1 (0 and 1 kept)."""
    sizes = np.asarray(blocks, dtype=np.float64)
    out = np.where(sizes <= 1, np.maximum(sizes, 0.0), 0.0)
    big = sizes > 1
    if big.any():
        exponent = np.minimum(np.ceil(np.log(sizes[big]) / np.log(LOG_BASE)), 255)
        out[big] = np.floor(np.power(LOG_BASE, exponent))
    return out


def reported_partition_sizes(
    partition_bytes: IntArray, map_shares: NDArray[np.float64]
) -> IntArray:
    """``bytesByPartitionId`` as AQE would see it for a shuffle whose partitions hold
    ``partition_bytes``, each spread over the map tasks by ``map_shares`` (their shares of
    the shuffle): every block rounded as its map status reports it, then summed. Beyond
    `HIGHLY_COMPRESSED_FROM` partitions each map task reports its blocks' mean (the huge
    blocks it keeps exactly are left out of this model)."""
    sizes = np.asarray(partition_bytes, dtype=np.float64)
    shares = np.asarray(map_shares, dtype=np.float64)
    if shares.size == 0 or sizes.size == 0:
        return np.asarray(partition_bytes, dtype=np.int64)
    total = np.zeros(len(sizes), dtype=np.float64)
    for share in shares.tolist():
        blocks = np.floor(sizes * share)
        if len(sizes) > HIGHLY_COMPRESSED_FROM:
            nonempty = blocks > 0
            mean = float(blocks[nonempty].mean()) if nonempty.any() else 0.0
            total += np.where(nonempty, np.floor(mean), 0.0)
        else:
            total += reported_block_sizes(blocks)
    return total.astype(np.int64)
