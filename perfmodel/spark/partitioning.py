"""Which knob sets each stage's task count, read from a bare event log's plans.

A stage runs one task per partition, and who chose the partitions decides what advice can
change them. The log says it, if read closely:

* a SQL stage reading a hash or range exchange made for a join or an aggregation
  (``ENSURE_REQUIREMENTS``, or ``REPARTITION_BY_COL``: ``repartition(col)``) has
  ``spark.sql.shuffle.partitions`` partitions, which AQE may then coalesce or split
  (``AQEShuffleRead coalesced`` / ``skewed`` above it in the final adaptive plan; the
  partition count it chose is a driver metric);
* ``RoundRobinPartitioning(n)`` or a hash exchange of origin ``REPARTITION_BY_NUM`` is the
  user's ``repartition(n)``, and a ``Coalesce n`` operator the user's ``coalesce(n)``: code,
  which no setting changes;
* a stage scanning files has as many partitions as ``spark.sql.files.maxPartitionBytes``,
  ``openCostInBytes``, the files' sizes (driver metrics of the scan) and the default
  parallelism make (`perfmodel.spark.partition_rules.file_partitions`);
* an RDD stage reading an RDD shuffle has ``spark.default.parallelism`` partitions unless the
  code passed a count (or, unset, its largest parent's); one reading input follows the
  input's splits;
* a stage reading files an earlier stage of the application wrote (a scan of them, Spark's
  parallel listing of them, a schema's scan after that listing) follows the number and
  sizes of the files that stage writes (`link_written_files`).

The operators of a plan are tied to stages by the metrics each stage updated
(`perfmodel.dag.sql_plans.link_plans_to_stages`); an exchange's map side is the stage that
wrote its shuffle metrics, its reduce side the other. A plan is cut at its exchanges into
segments, each run by one stage (or by its attempts). Everything here is one pass over the
plans' operators and the stages: linear in both.

The settings a run had are its environment update's, with each query's own changes
(``modifiedConfigs``) on top, and Spark's defaults for the log's version where unset
(`perfmodel.spark.settings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from perfmodel.dag.model import ApplicationProfile, PlanNode, QueryNode, StageKey, StageNode
from perfmodel.spark import partition_rules as rules
from perfmodel.spark.settings import EffectiveSettings, SettingValue, effective_settings

SHUFFLE_SETTING = "shuffle-partitions"
"""``spark.sql.shuffle.partitions`` (and AQE's coalescing and skew splits)."""
RDD_PARALLELISM = "default-parallelism"
"""``spark.default.parallelism``: an RDD shuffle without a partition count in the code."""
FILE_SPLITS = "file-splits"
"""``spark.sql.files.maxPartitionBytes``, ``openCostInBytes``, the files and the parallelism."""
CODE = "code"
"""The user's code: ``repartition(n)``, ``coalesce(n)``, a partition count passed to an RDD
operation, or a partitioning the query inherits from such a call."""
SINGLE = "single"
"""One partition, whatever the settings: a global aggregate, a sort with a limit."""
INPUT = "input"
"""Its input's partitions: cached data, an RDD the code built, a text file's splits."""
UNKNOWN = "unknown"
CONTROLS = (SHUFFLE_SETTING, RDD_PARALLELISM, FILE_SPLITS, CODE, SINGLE, INPUT, UNKNOWN)

SETTING_OF = {
    SHUFFLE_SETTING: "spark.sql.shuffle.partitions",
    RDD_PARALLELISM: "spark.default.parallelism",
    FILE_SPLITS: "spark.sql.files.maxPartitionBytes",
}
"""The setting in control of each control kind that has one."""

_WRITE_METRICS = ("shuffle bytes written", "shuffle records written", "shuffle write time")
_ADAPTIVE_READS = ("AQEShuffleRead", "CustomShuffleReader")
_PASS_THROUGH = ("ShuffleQueryStage", "InputAdapter", "ReusedExchange")
_JOINS = {
    "BroadcastHashJoin": "broadcast-hash",
    "SortMergeJoin": "sort-merge",
    "ShuffledHashJoin": "shuffled-hash",
    "BroadcastNestedLoopJoin": "broadcast-nested-loop",
    "CartesianProduct": "cartesian",
}
_JOIN_TYPE = re.compile(
    r"\], (Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|ExistenceJoin)"
)
_PARTITIONING = re.compile(
    r"^Exchange (hashpartitioning|rangepartitioning|RoundRobinPartitioning|SinglePartition"
    r"|UnknownPartitioning|RangePartitioning|HashPartitioning)",
    re.IGNORECASE,
)
_ORIGIN = re.compile(
    r"\b(ENSURE_REQUIREMENTS|REPARTITION_BY_COL|REPARTITION_BY_NUM|REBALANCE_PARTITIONS_BY_NONE"
    r"|REBALANCE_PARTITIONS_BY_COL|REPARTITION_WITH_NUM|REPARTITION)\b"
)
_RANGE_SPLITS = re.compile(r"splits=(\d+)")
_COALESCE = re.compile(r"^Coalesce (\d+)")
_FORMAT = re.compile(r"^FileScan (\w+)")
_LOCATION = re.compile(r"Location: \w+\(\d+ paths?\)\[([^,\]]*)")
_WRITE_COMMAND = "Execute InsertIntoHadoopFsRelationCommand"
_LISTING = re.compile(r"^Listing leaf files and directories for (\d+) paths:(?:<br/>)?\s*(\S+)")
"""The job description Spark gives its parallel listing of a file index's paths
(`HadoopFSUtils.parallelListLeafFiles`), a task per path, with the first path."""
ADAPTIVE_ORIGINS = (
    "ENSURE_REQUIREMENTS",
    "REPARTITION_BY_COL",
    "REBALANCE_PARTITIONS_BY_NONE",
    "REBALANCE_PARTITIONS_BY_COL",
)
"""Exchange origins whose partitions AQE may coalesce (`CoalesceShufflePartitions`)."""


@dataclass(slots=True)
class ShuffleInput:
    """A shuffle a stage reads: its exchange in the plan and the stages that wrote it."""

    partitioning: str
    """``hash``, ``range``, ``round-robin``, ``single`` or ``unknown``."""
    origin: str
    """Why the exchange is there (``ENSURE_REQUIREMENTS``, ``REPARTITION_BY_NUM``, ...);
    empty in logs older than Spark 3.1, which do not say."""
    partitions: int
    """Its partitions in the plan, before AQE."""
    map_stages: list[StageKey]
    adaptive_read: str = ""
    """How AQE read it (``coalesced``, ``skewed``, ``coalesced and skewed``, ``local``, or
    ``read``: partitions replicated to match the other side's skew split); empty where it
    did not step in."""
    adaptive_partitions: int | None = None
    """Partitions AQE's read ended with (its driver metric), where it stepped in."""
    description: str = ""
    range_partitions: int | None = None
    """A range exchange's partitions as its partitioner made them (its driver metric):
    Spark's `RangePartitioner` makes one more than the distinct bounds it samples, so a sort
    by a few distinct keys gets as many partitions as keys, whatever the setting."""

    @property
    def coalescible(self) -> bool:
        """Whether AQE may change its partition count (`CoalesceShufflePartitions`)."""
        return self.partitioning != "single" and (
            self.origin in ADAPTIVE_ORIGINS or self.origin in ("", "true")
        )


@dataclass(slots=True)
class FileScanInput:
    """A scan of files: how many and how large, as the scan's driver metrics say."""

    format: str
    files: int | None
    bytes: int | None
    description: str = ""
    location: str = ""
    """The first path of its file index as the plan prints it (Spark cuts a long one short:
    then the start of the path)."""


@dataclass(slots=True)
class JoinInfo:
    """A join in a query's final plan, with what a change of strategy needs."""

    query_id: int
    strategy: str
    """``broadcast-hash``, ``sort-merge``, ``shuffled-hash``, ``broadcast-nested-loop``,
    ``cartesian``."""
    join_type: str
    stages: list[StageKey]
    """Stages that ran the join operator (the stream side's, for a broadcast join)."""
    broadcast_bytes: int | None = None
    """Size of the broadcast relation (its ``data size`` metric)."""
    broadcast_rows: int | None = None
    side_stages: tuple[list[StageKey], list[StageKey]] = field(default_factory=lambda: ([], []))
    """Map stages that wrote each side's shuffle (left, right), for a shuffled join; for a
    broadcast join, the build side's in the second place (if it was shuffled first)."""
    build_stages: list[StageKey] = field(default_factory=list)
    """Stages that computed a broadcast join's build side (what was collected)."""
    adaptive: bool = False
    """Chosen at run time by AQE from a shuffle's measured size (a broadcast over a query
    stage)."""
    description: str = ""


@dataclass(slots=True)
class StagePartitioning:
    """One stage attempt: who set its partition count, and from what."""

    key: StageKey
    control: str
    """One of `CONTROLS`."""
    partitions: int
    """Tasks (partitions) it ran."""
    reason: str
    """What in the log says so, for the user."""
    query_id: int | None = None
    planned: int | None = None
    """Partitions before AQE changed them (the exchange's count), where it read a shuffle."""
    code: str = ""
    """The user's call in control (``repartition(5)``, ``coalesce(3)``, ``reduceByKey`` with
    a count), and where the log places it."""
    shuffles: list[ShuffleInput] = field(default_factory=list)
    scans: list[FileScanInput] = field(default_factory=list)
    range_splits: int | None = None
    """Splits of a ``spark.range`` it generates (``Range ... splits=n``)."""
    follows: StageKey | None = None
    """The stage whose output it reads back (a checkpoint or a cache of it, an `INPUT`
    stage): its partitions are that stage's, and move with whatever sets them."""
    files_of: StageKey | None = None
    """The stage, earlier in the application, that wrote the files it scans or lists
    (`link_written_files`): those files are that stage's output, a file per task that wrote
    any, and their number and sizes move with whatever sets that stage's partitions."""
    lists_files: bool = False
    """It is Spark's parallel listing of those files (a task per path), not a scan."""
    written_rows: int = 0
    """Rows its query's write command wrote (its "number of output rows"), where it wrote."""
    dynamic_partitions: int = 0
    """Partition values a ``partitionBy`` write spread those rows over (its "number of
    dynamic part"): each task writes a file for each value it holds rows of; 0 for a write
    of a file per task."""
    written_file_count: int = 0
    """Files the write wrote in all (its "number of written files")."""

    @property
    def setting(self) -> str | None:
        """The Spark setting in control, if a setting is."""
        return SETTING_OF.get(self.control)

    @property
    def coalesces(self) -> bool:
        """Whether the code's ``coalesce(n)`` sets it: partitions merged without a shuffle,
        so never more than its input had (`code` is written ``coalesce(n) ...`` here)."""
        return self.control == CODE and self.code.startswith("coalesce(")

    @property
    def adaptive(self) -> bool:
        """Whether AQE changed the partitions it read."""
        return any(s.adaptive_read for s in self.shuffles)


@dataclass(slots=True)
class Partitioning:
    """Every stage's partitioning, the joins, and the settings they were made with."""

    settings: EffectiveSettings
    """The application's settings (environment update and defaults)."""
    query_settings: dict[int, EffectiveSettings]
    """Queries that changed settings for themselves (``modifiedConfigs``)."""
    default_parallelism: int
    """``spark.default.parallelism`` as Spark used it: set, or the cores when unset."""
    parallelism_set: bool
    stages: dict[StageKey, StagePartitioning]
    joins: list[JoinInfo]
    query_modified: dict[int, frozenset[str]] = field(default_factory=dict)
    """Per query that changed settings for itself, the keys it changed (``--conf`` does not
    reach them: the session's value wins)."""
    writers: frozenset[StageKey] = frozenset()
    """Stages whose tasks wrote output (``df.write``: a file each), by their median
    (`_writes_output`): a what-if's task that writes a file pays for it beside its data."""

    def settings_for(self, part: StagePartitioning) -> EffectiveSettings:
        """The settings a stage's query ran with."""
        if part.query_id is not None:
            found = self.query_settings.get(part.query_id)
            if found is not None:
                return found
        return self.settings

    def counts(self) -> dict[str, int]:
        """Stages per control kind."""
        out: dict[str, int] = {}
        for part in self.stages.values():
            out[part.control] = out.get(part.control, 0) + 1
        return out


def target_settings(
    partitioning: Partitioning, part: StagePartitioning, changes: Mapping[str, SettingValue]
) -> tuple[EffectiveSettings, list[str]]:
    """The settings a stage's query would run with: the application's with ``changes``,
    except keys the query sets itself (``spark.conf.set`` in the code wins over
    ``--conf``); the keys so kept are returned too."""
    kept: list[str] = []
    own = partitioning.query_modified.get(part.query_id) if part.query_id is not None else None
    applied = dict(changes)
    if own:
        kept = sorted(k for k in applied if k in own)
        for key in kept:
            applied.pop(key)
    base = partitioning.settings_for(part)
    return base.with_changes(applied), kept


def partition_sizes(stage: StageNode) -> tuple[np.ndarray, np.ndarray]:
    """The stage's partition size distribution: bytes and records each partition's task read
    (input plus shuffle), by partition index; of a partition run more than once, its last
    successful attempt (else its last ended one)."""
    t = stage.table
    ended = np.flatnonzero(t.ended)
    if ended.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    index = t.col("index")[ended]
    ok = t.succeeded[ended]
    # Last row per index, successful rows after failed ones.
    order = np.lexsort((ended, ok, index))
    rows = ended[order]
    last = np.r_[index[order][1:] != index[order][:-1], True]
    rows = rows[last]
    read = t.col("input_bytes")[rows] + t.col("shuffle_read_bytes")[rows]
    records = t.col("input_records")[rows] + t.col("shuffle_read_records")[rows]
    return read.astype(np.int64), records.astype(np.int64)


def shuffle_write_bytes(profile: ApplicationProfile, keys: list[StageKey]) -> int:
    """Bytes the given map stages wrote to their shuffle (ended tasks)."""
    return int(profile.ended_total(keys, "shuffle_write_bytes"))


def derive_partitioning(profile: ApplicationProfile) -> Partitioning:
    """Who set each stage's partition count, from the plans where a SQL query ran it and
    from its operations (RDDs) elsewhere."""
    settings = effective_settings(profile.properties, profile.framework_version)
    query_settings = {
        q.query_id: effective_settings(
            {**profile.properties, **q.modified_configs}, profile.framework_version
        )
        for q in profile.queries.values()
        if q.modified_configs
    }
    parallelism_set = settings.get("spark.default.parallelism") is not None
    default_parallelism = settings.int_of(
        "spark.default.parallelism", _derived_parallelism(profile)
    )
    out = Partitioning(
        settings=settings,
        query_settings=query_settings,
        default_parallelism=default_parallelism,
        parallelism_set=parallelism_set,
        stages={},
        joins=[],
        query_modified={
            q.query_id: frozenset(q.modified_configs)
            for q in profile.queries.values()
            if q.modified_configs
        },
    )
    job_query = {j.job_id: j.query_id for j in profile.jobs.values()}
    ctx = _Context(profile)
    for query in profile.queries.values():
        if query.plan is not None:
            _read_plan(ctx, query, out)
    for key, stage in profile.stages.items():
        if key in out.stages:
            continue
        query_id = next((job_query[j] for j in stage.job_ids if job_query.get(j) is not None), None)
        out.stages[key] = _rdd_stage(ctx, stage, out, query_id)
    _follow_materialised(profile, out)
    link_written_files(profile, out)
    out.writers = frozenset(key for key in profile.stages if _writes_output(profile, key))
    return out


def _writes_output(profile: ApplicationProfile, key: StageKey) -> bool:
    """Whether a stage's tasks wrote output (``df.write``: a file each), by their median."""
    written = profile.stages[key].table.ended_values("output_bytes")
    return bool(len(written)) and float(np.median(written)) > 0


FOLLOWABLE = (SHUFFLE_SETTING, RDD_PARALLELISM, FILE_SPLITS)
"""Controls a stage reading another's materialised output follows it through."""


def _follow_materialised(profile: ApplicationProfile, out: Partitioning) -> None:
    """Mark each `INPUT` stage that reads back an RDD an earlier stage computed (a
    ``localCheckpoint()``, ``checkpoint()`` or ``cache()`` of a DataFrame or RDD): it runs
    that stage's partitions, so a setting that moves them moves it too. The RDD is the one
    its operations share with the earliest stage that listed it, of as many tasks."""
    first_seen: dict[int, StageKey] = {}
    for key in sorted(profile.stages):
        part = out.stages.get(key)
        stage = profile.stages[key]
        if part is not None and part.control == INPUT:
            for op in stage.op_nodes:
                source_key = first_seen.get(op.op_id)
                if source_key is None or source_key[0] == key[0]:
                    continue
                source = out.stages.get(source_key)
                if source is None or source.partitions != part.partitions:
                    continue
                if source.follows is not None:
                    source_key = source.follows
                    source = out.stages[source_key]
                if source.control in FOLLOWABLE:
                    part.follows = source_key
                    part.reason += (
                        f"; they are stage {source_key[0]}'s, whose output it reads back (a "
                        "checkpoint or cache), and move with it"
                    )
                    break
        for op in stage.op_nodes:
            first_seen.setdefault(op.op_id, key)


@dataclass(frozen=True, slots=True)
class WrittenFiles:
    """What a stage wrote: the path its query's write command names, and the bytes of each
    file (a file per task that wrote any, in launch order)."""

    key: StageKey
    path: str
    sizes: np.ndarray


def written_files(profile: ApplicationProfile, key: StageKey) -> np.ndarray:
    """Bytes each of a stage's tasks wrote, for the tasks that wrote any (a file each)."""
    table = profile.stages[key].table
    written = np.asarray(table.ended_values("output_bytes"), dtype=np.int64)
    return written[written > 0]


def _writes(profile: ApplicationProfile, out: Partitioning) -> list[WrittenFiles]:
    """Each stage that wrote files for a ``df.write`` (a query whose plan is an
    ``InsertIntoHadoopFsRelationCommand``), with the path written to. Each such stage's
    `StagePartitioning` is given the write's rows, partition values and files (the command's
    driver metrics), which a what-if needs for the files its tasks would write."""
    paths: dict[int, str] = {}
    counts: dict[int, tuple[int, int, int]] = {}
    for query in profile.queries.values():
        if query.plan is None:
            continue
        for node in query.plan.walk():
            if node.name.startswith(_WRITE_COMMAND):
                rest = node.description[len(_WRITE_COMMAND) :].strip()
                paths[query.query_id] = rest.split(",", 1)[0].strip()
                rows = _metric(query, node, "number of output rows") or 0
                parts = _metric(query, node, "number of dynamic part") or 0
                files = _metric(query, node, "number of written files") or 0
                counts[query.query_id] = (int(rows), int(parts), int(files))
                break
    found: list[WrittenFiles] = []
    for key, part in sorted(out.stages.items()):
        qid = part.query_id
        path = paths.get(qid) if qid is not None else None
        if qid is None or path is None or key not in profile.stages:
            continue
        sizes = written_files(profile, key)
        if len(sizes):
            found.append(WrittenFiles(key, path, sizes))
            part.written_rows, part.dynamic_partitions, part.written_file_count = counts[qid]
    return found


def _under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or inside it."""
    return bool(directory) and (path == directory or path.startswith(directory.rstrip("/") + "/"))


def _scans_path(location: str, written: str) -> bool:
    """Whether a scan's location (as its plan prints it) is the path written: the directory,
    the start of it where the plan cut it short, or (a scan of the files listed) a file in
    it."""
    return bool(location) and (written.startswith(location) or _under(location, written))


def link_written_files(profile: ApplicationProfile, out: Partitioning) -> None:
    """Tie each stage that reads files a stage of the same application wrote earlier to
    that stage (`StagePartitioning.files_of`): a scan whose files are as many and as large
    in all as the writer's and whose location is the path written; Spark's parallel
    listing of them (its job's description names the paths' count and the first, inside
    the path written); and an RDD stage after that listing scanning them (a schema's
    inference), of as many tasks as Spark's split rule gives those files. A setting that
    moves the writer's partitions then moves the files, and these stages with them. One
    pass over the stages, looking writes up by their files' count and size."""
    writes = _writes(profile, out)
    if not writes:
        return
    listing: dict[int, tuple[int, str]] = {}
    for job in profile.jobs.values():
        m = _LISTING.match(job.description or "")
        if m:
            for stage_id in job.stage_ids:
                listing[stage_id] = (int(m.group(1)), m.group(2))
    by_size: dict[tuple[int, int], list[WrittenFiles]] = {}
    by_count: dict[int, list[WrittenFiles]] = {}
    last_listed: WrittenFiles | None = None
    splits: dict[tuple[StageKey, int | None], int] = {}
    ahead = iter(writes)
    upcoming = next(ahead, None)
    for key, part in sorted(out.stages.items()):
        while upcoming is not None and upcoming.key[0] < key[0]:
            size = (len(upcoming.sizes), int(upcoming.sizes.sum()))
            by_size.setdefault(size, []).append(upcoming)
            by_count.setdefault(size[0], []).append(upcoming)
            upcoming = next(ahead, None)
        if part.control == FILE_SPLITS and part.scans:
            size = (sum(s.files or 0 for s in part.scans), sum(s.bytes or 0 for s in part.scans))
            w = next(
                (
                    w
                    for w in reversed(by_size.get(size, []))
                    if all(_scans_path(s.location, w.path) for s in part.scans)
                ),
                None,
            )
            if w is not None:
                part.files_of = w.key
                part.reason += f"; the files are stage {w.key[0]}'s output, and move with it"
        elif key[0] in listing:
            count, first = listing[key[0]]
            w = next((w for w in reversed(by_count.get(count, [])) if _under(first, w.path)), None)
            if w is not None:
                part.files_of, part.lists_files = w.key, True
                part.control, part.code = INPUT, ""
                part.reason = (
                    f"Spark's parallel listing of the {count} files stage {w.key[0]} wrote (a "
                    "task per file), which move with it"
                )
                last_listed = w
        elif (
            last_listed is not None and part.control == INPUT and _scans_files(profile.stages[key])
        ):
            # Spark's split count of the listed files, once per query's settings.
            split_key = (last_listed.key, part.query_id)
            if split_key not in splits:
                settings = file_split_settings(out.settings_for(part), out.default_parallelism)
                splits[split_key] = len(rules.file_partitions(last_listed.sizes, settings))
            if splits[split_key] == part.partitions:
                part.files_of = last_listed.key
                part.reason += (
                    f"; it scans the files stage {last_listed.key[0]} wrote, after listing "
                    "them, split as a scan of them is, and moves with it"
                )


def _scans_files(stage: StageNode) -> bool:
    """Whether a stage's operations read files (a ``FileScanRDD``)."""
    return any(
        op.name == "FileScanRDD" or op.scope_name.startswith("Scan ") for op in stage.op_nodes
    )


def file_split_settings(s: EffectiveSettings, parallelism: int) -> rules.FileSplitSettings:
    """What Spark's file-split rule reads of the settings (`FilePartition.maxSplitBytes`)."""
    leaf = s.get("spark.sql.leafNodeDefaultParallelism")
    minimum = s.get("spark.sql.files.minPartitionNum")
    return rules.FileSplitSettings(
        max_partition_bytes=int(s.get("spark.sql.files.maxPartitionBytes") or 128 << 20),
        open_cost=int(s.get("spark.sql.files.openCostInBytes") or 4 << 20),
        min_partition_num=int(minimum or leaf or parallelism),
    )


def _derived_parallelism(profile: ApplicationProfile) -> int:
    """Spark's default parallelism when unset: the cores of local mode, else all executors'
    cores (at least 2)."""
    r = profile.resources
    cores = (r.executor_cores or 1) * (r.executor_instances or 1) if r.executor_cores else 0
    cores = cores or r.total_slots or 1
    return max(cores, 1) if r.local_mode else max(cores, 2)


# -- plans -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Segment:
    """Operators between exchanges: what one stage runs of a plan."""

    nodes: list[PlanNode] = field(default_factory=list)
    reads: list[tuple[PlanNode, PlanNode | None]] = field(default_factory=list)
    """Exchanges it reads, each with the adaptive read above it (None where AQE did not
    step in)."""
    writes: PlanNode | None = None
    """The exchange it writes to."""


def _segments(plan: PlanNode) -> list[_Segment]:
    """Cut a plan at its exchanges, iteratively (deep plans do not hit recursion limits)."""
    segments = [_Segment()]
    stack: list[tuple[PlanNode, int, PlanNode | None]] = [(plan, 0, None)]
    while stack:
        node, seg, reader = stack.pop()
        name = node.name
        if name in _ADAPTIVE_READS:
            segments[seg].nodes.append(node)
            stack.extend((c, seg, node) for c in node.children)
            continue
        if name in _PASS_THROUGH or name.startswith("TableCacheQueryStage"):
            stack.extend((c, seg, reader) for c in node.children)
            continue
        if name in ("Exchange", "ShuffleExchange"):
            segments[seg].reads.append((node, reader))
            segments.append(_Segment(writes=node))
            stack.extend((c, len(segments) - 1, None) for c in node.children)
            continue
        if name == "BroadcastExchange":
            segments.append(_Segment())
            stack.extend((c, len(segments) - 1, None) for c in node.children)
            continue
        if name == "BroadcastQueryStage":
            stack.extend((c, seg, None) for c in node.children)
            continue
        segments[seg].nodes.append(node)
        stack.extend((c, seg, None) for c in node.children)
    return segments


class _Context:
    """The profile and what the derivation looks up in it again and again, computed once:
    each stage's metric ids as a set, each exchange's map and reduce stages, each stage
    id's attempts (so the derivation stays linear in stages and plan operators)."""

    def __init__(self, profile: ApplicationProfile) -> None:
        self.profile = profile
        self._ids: dict[StageKey, frozenset[int]] = {}
        self._sides: dict[int, tuple[list[StageKey], list[StageKey]]] = {}
        self.attempts: dict[int, list[StageNode]] = {}
        for stage in profile.stages.values():
            self.attempts.setdefault(stage.stage_id, []).append(stage)

    def _metric_ids(self, key: StageKey) -> frozenset[int]:
        ids = self._ids.get(key)
        if ids is None:
            ids = self._ids[key] = frozenset(self.profile.stages[key].accumulable_ids.tolist())
        return ids

    def sides(self, exchange: PlanNode) -> tuple[list[StageKey], list[StageKey]]:
        """(map stages, reduce stages) of an exchange: the stages that updated its write
        metrics, and the others it is linked to (its read metrics)."""
        found = self._sides.get(id(exchange))
        if found is not None:
            return found
        write_ids = [i for i, n in exchange.metric_ids.items() if n in _WRITE_METRICS]
        maps: list[StageKey] = []
        reduces: list[StageKey] = []
        for key in exchange.stage_keys:
            if key not in self.profile.stages:
                continue
            ids = self._metric_ids(key)
            if any(i in ids for i in write_ids):
                maps.append(key)
            else:
                reduces.append(key)
        found = self._sides[id(exchange)] = (maps, reduces)
        return found


def _metric(query: QueryNode, node: PlanNode, name: str) -> int | None:
    for acc_id, metric in node.metric_ids.items():
        if metric == name:
            return query.driver_metrics.get(acc_id)
    return None


def _shuffle_input(
    ctx: _Context, query: QueryNode, exchange: PlanNode, reader: PlanNode | None
) -> ShuffleInput:
    text = exchange.description
    m = _PARTITIONING.match(text)
    kind = m.group(1).lower() if m else "unknown"
    partitioning = {
        "hashpartitioning": "hash",
        "rangepartitioning": "range",
        "roundrobinpartitioning": "round-robin",
        "singlepartition": "single",
    }.get(kind, "unknown")
    origin_match = _ORIGIN.search(text)
    origin = origin_match.group(1) if origin_match else ""
    if not origin and ", true" in text:
        origin = "true"  # Spark 3.0: canChangeNumPartitions
    partitions = 1 if partitioning == "single" else _partition_count(text)
    if partitions is None:
        partitions = _metric(query, exchange, "number of partitions") or 0
    maps, _ = ctx.sides(exchange)
    adaptive = ""
    read_partitions = None
    if reader is not None:
        how = reader.description
        adaptive = how.split(" ", 1)[1].strip() if " " in how else "read"
        read_partitions = _metric(query, reader, "number of partitions")
    made = _metric(query, exchange, "number of partitions") if partitioning == "range" else None
    return ShuffleInput(
        partitioning=partitioning,
        origin=origin,
        partitions=int(partitions),
        map_stages=maps,
        adaptive_read=adaptive,
        adaptive_partitions=read_partitions,
        description=text,
        range_partitions=int(made) if made else None,
    )


def _partition_count(text: str) -> int | None:
    """The count of a partitioning in an exchange's text: the last argument of
    ``hashpartitioning(..., n)`` / ``rangepartitioning(..., n)``, or
    ``RoundRobinPartitioning(n)``'s only one."""
    open_at = text.find("(")
    if open_at < 0:
        return None
    depth = 0
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                inner = text[open_at + 1 : i]
                last = inner.rsplit(",", 1)[-1].strip()
                return int(last) if last.isdigit() else None
    return None


def _read_plan(ctx: _Context, query: QueryNode, out: Partitioning) -> None:
    assert query.plan is not None
    settings = out.query_settings.get(query.query_id, out.settings)
    for segment in _segments(query.plan):
        stages: dict[StageKey, None] = {}
        for node in segment.nodes:
            for key in node.stage_keys:
                stages[key] = None
        if segment.writes is not None:
            for key in ctx.sides(segment.writes)[0]:
                stages[key] = None
        shuffles = []
        for exchange, reader in segment.reads:
            for key in ctx.sides(exchange)[1]:
                stages[key] = None
            shuffles.append(_shuffle_input(ctx, query, exchange, reader))
        _read_joins(ctx, query, segment, list(stages), out)
        if not stages:
            continue
        for key in stages:
            stage = ctx.profile.stages.get(key)
            if stage is None or key in out.stages:
                continue
            out.stages[key] = _classify_segment(stage, segment, shuffles, query, settings, out)


def _classify_segment(
    stage: StageNode,
    segment: _Segment,
    shuffles: list[ShuffleInput],
    query: QueryNode,
    settings: EffectiveSettings,
    out: Partitioning,
) -> StagePartitioning:
    n = stage.num_tasks or len(stage.table)
    where = f"query {query.query_id}" + (f" ({query.description})" if query.description else "")
    base = StagePartitioning(
        key=stage.key,
        control=UNKNOWN,
        partitions=n,
        reason="",
        query_id=query.query_id,
        shuffles=shuffles,
    )
    coalesce = next((c for c in segment.nodes if c.name == "Coalesce"), None)
    if coalesce is not None:
        m = _COALESCE.match(coalesce.description)
        base.control, base.code = CODE, f"coalesce({m.group(1) if m else '?'}) in {where}"
        base.reason = f"the plan's `{coalesce.description}`: the code's coalesce()"
        return base
    if shuffles:
        planned = shuffles[0].partitions
        base.planned = planned
        by_num = [
            s
            for s in shuffles
            if s.partitioning == "round-robin"
            or s.origin in ("REPARTITION_BY_NUM", "REPARTITION_WITH_NUM")
        ]
        if by_num:
            s = by_num[0]
            base.control = CODE
            base.code = f"repartition({s.partitions}) in {where}"
            base.reason = f"the plan's `{_short(s.description)}`: the code's repartition(n)"
            return base
        if all(s.partitioning == "single" for s in shuffles):
            base.control, base.reason = SINGLE, "it reads a single-partition exchange"
            return base
        expected = _expected_shuffle_partitions(settings)
        if planned == expected or (planned == settings.int_of("spark.sql.shuffle.partitions", 200)):
            base.control = SHUFFLE_SETTING
            aqe = next((s for s in shuffles if s.adaptive_read), None)
            base.reason = (
                f"it reads `{_short(shuffles[0].description)}` ({planned} partitions: "
                "spark.sql.shuffle.partitions)"
                + (f", which AQE read {aqe.adaptive_read} into {n}" if aqe else "")
            )
            return base
        base.control = CODE
        base.code = f"{planned} partitions set in {where}"
        base.reason = (
            f"it reads `{_short(shuffles[0].description)}`, whose {planned} partitions are not "
            f"spark.sql.shuffle.partitions ({settings.get('spark.sql.shuffle.partitions')}): "
            "a count in the code or a table's bucketing"
        )
        return base
    scans = []
    for node in segment.nodes:
        if node.description.startswith("FileScan ") or node.name.startswith("BatchScan"):
            m = _FORMAT.match(node.description)
            located = _LOCATION.search(node.description)
            scans.append(
                FileScanInput(
                    format=m.group(1) if m else node.name,
                    files=_metric(query, node, "number of files read"),
                    bytes=_metric(query, node, "size of files read"),
                    description=_short(node.description, 120),
                    location=located.group(1).removesuffix("...") if located else "",
                )
            )
    if scans:
        base.scans = scans
        base.control = FILE_SPLITS
        files = sum(s.files or 0 for s in scans)
        size = sum(s.bytes or 0 for s in scans)
        base.reason = (
            f"it scans {files} {scans[0].format} file(s), {size:,} bytes: split by "
            "spark.sql.files.maxPartitionBytes and openCostInBytes"
        )
        return base
    for node in segment.nodes:
        if node.name == "Range":
            m = _RANGE_SPLITS.search(node.description)
            splits = int(m.group(1)) if m else n
            base.range_splits = splits
            if splits == out.default_parallelism:
                base.control = RDD_PARALLELISM
                base.reason = f"`{node.description}` has the default parallelism's splits"
            else:
                base.control, base.code = CODE, f"spark.range(..., numPartitions={splits})"
                base.reason = f"`{node.description}`: splits given in the code"
            return base
        if node.name in ("InMemoryTableScan", "LocalTableScan") or node.name.startswith("Scan "):
            base.control = INPUT
            base.reason = f"it reads `{_short(node.description)}`: its input's partitions"
            return base
    base.reason = "the plan does not show what set its partitions"
    return base


def _expected_shuffle_partitions(settings: EffectiveSettings) -> int:
    """Partitions Spark gives a shuffle it plans: AQE's initial partition number when AQE
    coalesces and it is set, else ``spark.sql.shuffle.partitions``."""
    initial = settings.get("spark.sql.adaptive.coalescePartitions.initialPartitionNum")
    if (
        initial is not None
        and settings.get("spark.sql.adaptive.enabled")
        and settings.get("spark.sql.adaptive.coalescePartitions.enabled")
    ):
        return int(initial)
    return settings.int_of("spark.sql.shuffle.partitions", 200)


_PLAN_ID = re.compile(r", \[(plan_id|id)=#?\d+\]")


def _short(text: str, limit: int = 80) -> str:
    text = _PLAN_ID.sub("", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _read_joins(
    ctx: _Context,
    query: QueryNode,
    segment: _Segment,
    stages: list[StageKey],
    out: Partitioning,
) -> None:
    for node in segment.nodes:
        strategy = _JOINS.get(node.name)
        if strategy is None:
            continue
        m = _JOIN_TYPE.search(node.description)
        info = JoinInfo(
            query_id=query.query_id,
            strategy=strategy,
            join_type=m.group(1) if m else "",
            stages=list(node.stage_keys) or stages,
            description=_short(node.description, 120),
        )
        sides = [_side_exchanges(child) for child in node.children[:2]]
        if strategy in ("broadcast-hash", "broadcast-nested-loop"):
            for child in node.children:
                exchange = _find(child, "BroadcastExchange")
                if exchange is not None:
                    info.broadcast_bytes = _metric(query, exchange, "data size")
                    info.broadcast_rows = _metric(query, exchange, "number of output rows")
                    below = _side_exchanges(exchange)
                    info.adaptive = bool(below)
                    info.build_stages = sorted(
                        {
                            k
                            for c in exchange.children
                            for n in _walk_until_exchange(c)
                            for k in n.stage_keys
                        }
                    )
                    maps = [k for e in below for k in ctx.sides(e)[0]]
                    info.side_stages = ([], maps)
        else:
            info.side_stages = (
                tuple(  # type: ignore[assignment]
                    [k for e in side for k in ctx.sides(e)[0]] for side in sides
                )
                if len(sides) == 2
                else ([], [])
            )
        out.joins.append(info)


def _walk_until_exchange(node: PlanNode) -> Iterator[PlanNode]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if n.name in ("Exchange", "ShuffleExchange", "BroadcastExchange"):
            continue
        stack.extend(n.children)


def _side_exchanges(node: PlanNode) -> list[PlanNode]:
    """The shuffle exchanges directly under a join's child (not under a deeper one)."""
    found = [n for n in _walk_until_exchange(node) if n.name in ("Exchange", "ShuffleExchange")]
    if node.name in ("Exchange", "ShuffleExchange"):
        found = [node]
    return found


def _find(node: PlanNode, name: str) -> PlanNode | None:
    for n in _walk_until_exchange(node):
        if n.name == name:
            return n
    return None


# -- RDD stages ------------------------------------------------------------------------------

_SHUFFLED_RDDS = ("ShuffledRDD", "CoGroupedRDD", "SubtractedRDD", "ShuffledRowRDD")
_HADOOP_RDDS = ("HadoopRDD", "NewHadoopRDD", "WholeTextFileRDD", "BinaryFileRDD")


def _rdd_stage(
    ctx: _Context, stage: StageNode, out: Partitioning, query_id: int | None
) -> StagePartitioning:
    """A stage no plan explains, from its operations (RDDs): what reads a shuffle, what
    reads input, what coalesces."""
    n = stage.num_tasks or len(stage.table)
    part = StagePartitioning(
        key=stage.key, control=UNKNOWN, partitions=n, reason="", query_id=query_id
    )
    ops = stage.op_nodes
    if not ops:
        part.reason = "the log lists no operations for it"
        return part
    ids = {op.op_id for op in ops}
    for op in ops:
        if op.name == "CoalescedRDD":
            part.control = CODE
            part.code = f"coalesce({op.num_partitions}) at {op.call_site or '?'}"
            part.reason = f"its operations include a CoalescedRDD ({op.call_site})"
            return part
    roots = [op for op in ops if not any(p in ids for p in op.parent_ids)]
    shuffled = [op for op in ops if op.name in _SHUFFLED_RDDS]
    if shuffled:
        op = shuffled[0]
        parents = [a for i in stage.parent_stage_ids for a in ctx.attempts.get(i, ())]
        largest = max((p.num_tasks for p in parents), default=0)
        if op.name == "ShuffledRowRDD":
            expected = out.settings.int_of("spark.sql.shuffle.partitions", 200)
            if op.num_partitions == expected:
                part.control, part.planned = SHUFFLE_SETTING, expected
                part.reason = "it reads a SQL shuffle of spark.sql.shuffle.partitions partitions"
            else:
                part.control = CODE
                part.code = f"{op.num_partitions} partitions at {op.call_site or '?'}"
                part.reason = "it reads a SQL shuffle the plan does not explain"
            return part
        if op.num_partitions == out.default_parallelism or (
            not out.parallelism_set and op.num_partitions == largest
        ):
            part.control = RDD_PARALLELISM
            part.planned = op.num_partitions
            part.reason = (
                f"{op.scope_name or op.name} at {op.call_site or '?'} has "
                f"{op.num_partitions} partitions: "
                + (
                    "spark.default.parallelism"
                    if out.parallelism_set
                    else "its largest parent's (spark.default.parallelism is unset)"
                )
            )
            return part
        part.control = CODE
        part.code = (
            f"{op.scope_name or op.name}(numPartitions={op.num_partitions}) at "
            f"{op.call_site or '?'}"
        )
        part.reason = f"{op.num_partitions} partitions passed in the code ({op.call_site})"
        return part
    for op in roots:
        if op.name in _HADOOP_RDDS:
            part.control = INPUT
            part.reason = f"it reads input splits ({op.name} at {op.call_site or '?'})"
            return part
        if op.name == "ParallelCollectionRDD":
            if op.num_partitions == out.default_parallelism:
                part.control = RDD_PARALLELISM
                part.reason = "parallelize() with the default parallelism's slices"
            else:
                part.control, part.code = CODE, f"parallelize(..., {op.num_partitions})"
                part.reason = "parallelize() with slices given in the code"
            return part
    if any(op.cached for op in roots) or roots:
        part.control = INPUT
        part.reason = (
            f"it reads {roots[0].name} ({roots[0].call_site or '?'}): its input's partitions"
        )
    return part
