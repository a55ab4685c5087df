"""Spark settings as perfmodel reads and changes them: keys, value syntax, ranges, defaults.

A what-if on settings (``--conf spark.sql.shuffle.partitions=64``) and the baseline it
changes both need the same facts about a key: how Spark parses its value (``64m`` is
bytes for a SQL size but ``2048`` is MiB for ``spark.executor.memory``), which values Spark
accepts, and what the value was in a log that never set it (the default of the log's Spark
version: AQE is on by default from 3.2). Keeping them in one table means the baseline and
the what-if cannot disagree about what ``spark.sql.adaptive.enabled`` unset meant.

Every key is either *predicted* (a what-if on it changes the replay) or *known but not
predicted*, with the reason said to the user; a key in neither list is refused as unknown
(a typing mistake, usually), with the closest known keys suggested.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.errors import PerfmodelError

SettingValue = bool | int | float
"""A setting's value as parsed (`parse_value`)."""

BOOL, INT, FLOAT, BYTES, MIB = "bool", "int", "float", "bytes", "mib"
"""Value kinds: ``bytes`` is a size whose bare number means bytes (SQL sizes), ``mib`` one
whose bare number means MiB (JVM heaps and overheads), as Spark parses each."""

MAX_PARTITIONS = 100_000
"""Most partitions a what-if may ask of a stage: each is a task the replay schedules, and
Spark itself tracks map output per partition (beyond ~100k a shuffle is a mistake)."""
MAX_BYTES = 1 << 50
MAX_EXECUTORS = 100_000
MAX_CORES = 10_000


class SettingError(PerfmodelError, ValueError):
    """A Spark setting perfmodel cannot use as given: an unknown key, a value Spark would
    not parse, or one out of range. The message names the key and what is accepted."""


class SettingNotPredictedError(SettingError):
    """A Spark setting perfmodel knows but whose effect it cannot predict; the message says
    why, so the user knows a prediction would not include it."""


@dataclass(frozen=True, slots=True)
class SettingKey:
    """One Spark setting: how its value is written, its range, its default by version."""

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    defaults: tuple[tuple[tuple[int, int], str | None], ...] = (((0, 0), None),)
    """(first Spark version, default there) in ascending order; None: unset, derived."""
    predicted: bool = True
    reason: str = ""
    """What the key controls in the model, or why a what-if on it cannot be predicted."""
    fallback: str | None = None
    """A key whose value this one takes when unset (Spark's ``fallbackConf``)."""

    def default(self, version: tuple[int, int]) -> str | None:
        """Spark's default at ``version`` (the latest entry not newer than it)."""
        value: str | None = None
        for since, default in self.defaults:
            if version >= since:
                value = default
        return value


def _key(
    name: str,
    kind: str,
    low: float | None = None,
    high: float | None = None,
    default: str | None = None,
    *,
    since: tuple[tuple[tuple[int, int], str | None], ...] | None = None,
    reason: str = "",
    fallback: str | None = None,
) -> SettingKey:
    defaults = since if since is not None else (((0, 0), default),)
    return SettingKey(name, kind, low, high, defaults, True, reason, fallback)


_KEYS: tuple[SettingKey, ...] = (
    _key(
        "spark.sql.shuffle.partitions",
        INT,
        1,
        MAX_PARTITIONS,
        "200",
        reason="partitions of a SQL shuffle that does not come from the code (a join's or "
        "an aggregation's exchange)",
    ),
    _key(
        "spark.default.parallelism",
        INT,
        1,
        MAX_PARTITIONS,
        reason="partitions of an RDD shuffle without a partition count in the code; also "
        "AQE's minimum partition count and the file-split size",
    ),
    _key(
        "spark.sql.adaptive.enabled",
        BOOL,
        since=(((0, 0), "false"), ((3, 2), "true")),
        reason="adaptive execution: coalesces and splits shuffle partitions at run time",
    ),
    _key("spark.sql.adaptive.coalescePartitions.enabled", BOOL, default="true"),
    _key(
        "spark.sql.adaptive.coalescePartitions.parallelismFirst",
        BOOL,
        since=(((0, 0), "true"),),
        reason="coalescing keeps at least spark.default.parallelism partitions",
    ),
    _key(
        "spark.sql.adaptive.coalescePartitions.minPartitionSize",
        BYTES,
        0,
        MAX_BYTES,
        since=(((0, 0), "0"), ((3, 2), "1m")),
    ),
    _key("spark.sql.adaptive.coalescePartitions.minPartitionNum", INT, 1, MAX_PARTITIONS),
    _key("spark.sql.adaptive.coalescePartitions.initialPartitionNum", INT, 1, MAX_PARTITIONS),
    _key(
        "spark.sql.adaptive.advisoryPartitionSizeInBytes",
        BYTES,
        1,
        MAX_BYTES,
        fallback="spark.sql.adaptive.shuffle.targetPostShuffleInputSize",
    ),
    _key("spark.sql.adaptive.shuffle.targetPostShuffleInputSize", BYTES, 1, MAX_BYTES, "64m"),
    _key("spark.sql.adaptive.skewJoin.enabled", BOOL, default="true"),
    _key("spark.sql.adaptive.skewJoin.skewedPartitionFactor", FLOAT, 0, 1e9, "5"),
    _key(
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
        BYTES,
        0,
        MAX_BYTES,
        "256m",
    ),
    _key("spark.sql.files.maxPartitionBytes", BYTES, 1, MAX_BYTES, "128m"),
    _key("spark.sql.files.openCostInBytes", BYTES, 0, MAX_BYTES, "4m"),
    _key("spark.sql.files.minPartitionNum", INT, 1, MAX_PARTITIONS),
    _key("spark.sql.leafNodeDefaultParallelism", INT, 1, MAX_PARTITIONS),
    _key(
        "spark.sql.autoBroadcastJoinThreshold",
        BYTES,
        -MAX_BYTES,
        MAX_BYTES,
        "10m",
        reason="largest table a join broadcasts instead of shuffling (-1: never)",
    ),
    _key(
        "spark.sql.adaptive.autoBroadcastJoinThreshold",
        BYTES,
        -MAX_BYTES,
        MAX_BYTES,
        fallback="spark.sql.autoBroadcastJoinThreshold",
        reason="AQE's broadcast threshold, checked against the measured size of a shuffle",
    ),
    _key("spark.executor.cores", INT, 1, MAX_CORES, reason="task slots of each executor"),
    _key("spark.executor.instances", INT, 1, MAX_EXECUTORS, reason="executors"),
    _key("spark.executor.memory", MIB, 450 << 20, MAX_BYTES, "1g", reason="executor heap"),
    _key("spark.driver.memory", MIB, 450 << 20, MAX_BYTES, "1g", reason="heap of local mode"),
    _key(
        "spark.memory.fraction",
        FLOAT,
        1e-3,
        0.999,
        "0.6",
        reason="share of (heap - 300 MiB) for execution and storage memory",
    ),
    _key("spark.dynamicAllocation.enabled", BOOL, default="false"),
    _key("spark.dynamicAllocation.minExecutors", INT, 0, MAX_EXECUTORS, "0"),
    _key("spark.dynamicAllocation.maxExecutors", INT, 1, MAX_EXECUTORS),
    _key("spark.dynamicAllocation.initialExecutors", INT, 0, MAX_EXECUTORS),
)

_NOT_PREDICTED: dict[str, str] = {
    "spark.executor.memoryOverhead": (
        "it sizes the container beyond the heap (Python workers, native memory); the replay "
        "has no law for what the overhead changes (container kills are not predicted)"
    ),
    "spark.executor.memoryOverheadFactor": "as spark.executor.memoryOverhead",
    "spark.memory.storageFraction": (
        "execution borrows storage memory when it is free, and the log does not say how much "
        "cached data held it"
    ),
    "spark.memory.offHeap.enabled": "off-heap execution memory is not modelled",
    "spark.memory.offHeap.size": "off-heap execution memory is not modelled",
    "spark.task.cpus": "a task using several cores is not modelled",
    "spark.executor.pyspark.memory": "Python workers' memory limit is not modelled",
    "spark.serializer": "serialisation cost per record is not modelled apart from CPU",
    "spark.kryoserializer.buffer.max": "serialisation buffers are not modelled",
    "spark.io.compression.codec": "compression cost per codec is not modelled",
    "spark.shuffle.compress": "shuffle compression is not modelled",
    "spark.shuffle.spill.compress": "spill compression is not modelled",
    "spark.shuffle.file.buffer": "shuffle write buffers are not modelled",
    "spark.reducer.maxSizeInFlight": "shuffle fetch buffers are not modelled",
    "spark.shuffle.sort.bypassMergeThreshold": (
        "a change of the shuffle writer's threshold is not modelled (Spark's default, 200, is)"
    ),
    "spark.speculation": "speculative copies of tasks are not modelled",
    "spark.locality.wait": "locality waits are not modelled",
    "spark.sql.adaptive.localShuffleReader.enabled": "local shuffle reads are not modelled",
    "spark.sql.adaptive.forceOptimizeSkewedJoin": "skew splits adding a shuffle are not modelled",
    "spark.sql.adaptive.skewJoin.skewedPartitionRowCountThreshold": (
        "skew by row count (a vendor extension) is not modelled"
    ),
    "spark.sql.join.preferSortMergeJoin": "shuffled hash joins are not modelled",
    "spark.sql.inMemoryColumnarStorage.batchSize": "cache layout is not modelled",
    "spark.sql.files.maxRecordsPerFile": "output file sizes are not modelled",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "file listing is not modelled",
    "spark.dynamicAllocation.executorIdleTimeout": "executor release timing is not modelled",
    "spark.dynamicAllocation.schedulerBacklogTimeout": "executor request timing is not modelled",
    "spark.executor.heartbeatInterval": "heartbeats are not modelled",
    "spark.network.timeout": "timeouts are not modelled",
    "spark.driver.cores": "driver CPU is not modelled apart from the observed gaps between jobs",
    "spark.driver.maxResultSize": "result size limits are not modelled",
    "spark.driver.memoryOverhead": "as spark.executor.memoryOverhead",
    "spark.sql.codegen.wholeStage": "code generation is not modelled",
    "spark.sql.execution.arrow.pyspark.enabled": "Arrow transfer is not modelled",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "Arrow batch sizes are not modelled",
    "spark.python.worker.reuse": "Python worker start-up is not modelled",
}
"""Keys users tune that perfmodel knows but cannot predict, each with the reason."""

KEYS: dict[str, SettingKey] = {k.name: k for k in _KEYS} | {
    name: SettingKey(name, "text", predicted=False, reason=why)
    for name, why in _NOT_PREDICTED.items()
}
"""Every Spark setting perfmodel knows, by name."""

PREDICTED: tuple[str, ...] = tuple(k.name for k in _KEYS)
"""Keys a what-if can change and the replay predicts."""


def spark_version(text: str) -> tuple[int, int]:
    """(major, minor) of a Spark version string (``3.5.1``, ``4.0.0-preview2``); (0, 0)
    when the log does not say, which reads every default as of before any change."""
    m = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


_BYTES = re.compile(r"^([0-9]+)([a-z]+)?$")
_FRACTION = re.compile(r"^[0-9]+\.[0-9]+([a-z]+)?$")
_SUFFIX = {
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "p": 1 << 50,
    "pb": 1 << 50,
}
_MAX_SHOWN = 40


def _shown(text: str) -> str:
    return repr(text) if len(text) <= _MAX_SHOWN else repr(text[:_MAX_SHOWN] + "…")


def parse_bytes(text: str, bare_unit: int = 1) -> int:
    """Bytes of a size as Spark reads it (``JavaUtils.byteStringAs``): a whole number with an
    optional binary suffix (``k``, ``kb``, ``m``, ``mb``, ``g``, ... ``pb``, ``b``), any case; a
    bare number is ``bare_unit`` bytes; a leading ``-`` negates (``-1`` disables a threshold).
    Fractions are refused, as Spark refuses them."""
    value = text.strip().lower()
    sign = 1
    if value.startswith("-"):
        sign, value = -1, value[1:]
    m = _BYTES.match(value)
    if m is None:
        if _FRACTION.match(value):
            raise ValueError(f"fractional sizes are not accepted by Spark: {_shown(text)}")
        raise ValueError(f"cannot read size {_shown(text)}: write e.g. 64m, 1g, 10485760")
    suffix = m.group(2)
    if suffix is not None and suffix not in _SUFFIX:
        raise ValueError(f"unknown size suffix {suffix!r} in {_shown(text)} (k, m, g, t, p)")
    number = int(m.group(1)) if len(m.group(1)) <= 30 else MAX_BYTES * 1024
    return sign * number * (_SUFFIX[suffix] if suffix is not None else bare_unit)


STAGE_PREFIX = "stage."
_STAGE_KEY = re.compile(r"stage\.([0-9]{1,9})\.partitions")
"""``stage.ID.partitions``: a stage's task count as a code edit would set it."""


def stage_key(stage_id: int) -> str:
    """The what-if key that sets stage ``stage_id``'s task count as the code would
    (``repartition(n)``, ``coalesce(n)``, an RDD operation's ``numPartitions``)."""
    return f"{STAGE_PREFIX}{stage_id}.partitions"


def stage_of_key(key: str) -> int | None:
    """The stage id of a ``stage.ID.partitions`` key; None for any other key."""
    m = _STAGE_KEY.fullmatch(key)
    return int(m.group(1)) if m else None


_STAGE_PARTITIONS = SettingKey(
    "stage.ID.partitions",
    INT,
    1,
    MAX_PARTITIONS,
    reason="a stage's task count as the code would set it",
)
"""How every ``stage.ID.partitions`` value is written and bounded: a whole number, as a
partition-count setting is."""


def parse_value(key: str, text: str) -> SettingValue:
    """The typed value of ``key`` written as ``text``, checked against Spark's syntax and the
    key's range; raises `SettingError` naming the key (an unknown key included). A
    ``stage.ID.partitions`` key is a code edit's task count (`stage_key`)."""
    if key.startswith(STAGE_PREFIX):
        if stage_of_key(key) is None:
            raise SettingError(
                f"unknown what-if key {_shown(key)}: a stage's task count is written "
                "stage.ID.partitions=N (ID: the stage id that diagnose shows)"
            )
        spec = _STAGE_PARTITIONS
    else:
        spec = lookup(key)
    if spec.kind == "text":
        raise SettingNotPredictedError(f"{key}: perfmodel cannot predict its effect: {spec.reason}")
    raw = str(text)
    try:
        value = _typed(spec, raw)
    except ValueError as exc:
        raise SettingError(f"{key}={_shown(raw)}: {exc}") from None
    if isinstance(value, bool) or spec.low is None:
        return value
    high = spec.high if spec.high is not None else math.inf
    if not (spec.low <= value <= high) or (isinstance(value, float) and math.isnan(value)):
        raise SettingError(f"{key}={_shown(raw)}: must be {_range(spec)}")
    return value


def _typed(spec: SettingKey, raw: str) -> SettingValue:
    text = raw.strip()
    if spec.kind == BOOL:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError("must be true or false")
        return lowered == "true"
    if spec.kind == INT:
        if not re.fullmatch(r"[+-]?[0-9]{1,30}", text):
            raise ValueError("must be a whole number")
        return int(text)
    if spec.kind == FLOAT:
        if not re.fullmatch(r"[+-]?([0-9]{1,30}(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?", text):
            raise ValueError("must be a number")
        return float(text)
    return parse_bytes(text, 1 << 20 if spec.kind == MIB else 1)


def _range(spec: SettingKey) -> str:
    low, high = spec.low, spec.high
    if spec.kind in (BYTES, MIB):
        return f"a size from {_size(low)} to {_size(high)}"
    if spec.kind == INT:
        return f"a whole number from {int(low or 0):,} to {int(high or 0):,}"
    return f"a number from {low:g} to {high:g}"


def _size(value: float | None) -> str:
    if value is None:
        return "?"
    if value < 0:
        return "-" + _size(-value)
    for unit, scale in (("p", 1 << 50), ("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20)):
        if value >= scale and value % scale == 0:
            return f"{int(value // scale)}{unit}"
    return f"{int(value)} bytes"


def lookup(key: str) -> SettingKey:
    """The known setting ``key``, or `SettingError` naming it (with close matches)."""
    spec = KEYS.get(key)
    if spec is not None:
        return spec
    close = difflib.get_close_matches(key, list(KEYS), n=3, cutoff=0.75)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise SettingError(
        f"unknown Spark setting {_shown(key)}: perfmodel predicts "
        f"{', '.join(PREDICTED[:4])}, ... (see docs/settings.md){hint}"
    )


@dataclass(frozen=True, slots=True)
class EffectiveSettings:
    """The values a run had for every predicted key: what its log set, else Spark's default
    for its version; None where the key is unset and derived (``spark.default.parallelism``
    is the slots when unset)."""

    values: dict[str, SettingValue | None]
    set_in_log: frozenset[str]
    version: tuple[int, int]

    def get(self, key: str) -> SettingValue | None:
        return self.values[key]

    def int_of(self, key: str, default: int) -> int:
        value = self.values[key]
        return int(value) if value is not None else default

    def with_changes(self, changes: Mapping[str, SettingValue]) -> EffectiveSettings:
        """These settings with ``changes`` (already parsed) applied, fallbacks followed."""
        values = dict(self.values)
        values.update(changes)
        _follow_fallbacks(values, set(self.set_in_log) | set(changes))
        return EffectiveSettings(values, self.set_in_log | frozenset(changes), self.version)


def effective_settings(properties: Mapping[str, str], version_text: str) -> EffectiveSettings:
    """Every predicted key's value in a run whose log set ``properties`` (its environment
    update, plus a query's ``modifiedConfigs``): a value the log set that Spark would not
    accept is read as unset (the run did not fail on it, so another layer overrode it)."""
    version = spark_version(version_text)
    values: dict[str, SettingValue | None] = {}
    set_keys: set[str] = set()
    for spec in _KEYS:
        raw = properties.get(spec.name)
        value: SettingValue | None = None
        if raw is not None:
            try:
                value = parse_value(spec.name, raw)
                set_keys.add(spec.name)
            except SettingError:
                value = None
        if value is None:
            default = spec.default(version)
            value = parse_value(spec.name, default) if default is not None else None
        values[spec.name] = value
    _follow_fallbacks(values, set_keys)
    return EffectiveSettings(values, frozenset(set_keys), version)


def _follow_fallbacks(values: dict[str, SettingValue | None], set_keys: set[str]) -> None:
    """A key with a fallback takes the fallback's value unless it was set itself."""
    for spec in _KEYS:
        if spec.fallback is not None and spec.name not in set_keys:
            values[spec.name] = values.get(spec.fallback)


def parse_settings(
    settings: Mapping[str, str], *, strict: bool = True
) -> tuple[dict[str, SettingValue], dict[str, str]]:
    """Each ``KEY=VALUE`` checked and parsed. An unknown key or a bad value raises
    `SettingError` naming the key; a known key the model cannot predict raises
    `SettingNotPredictedError` (``strict``), or is returned with its reason."""
    values: dict[str, SettingValue] = {}
    skipped: dict[str, str] = {}
    for key, text in settings.items():
        spec = KEYS.get(key)
        if spec is not None and not spec.predicted and not strict:
            skipped[key] = spec.reason
            continue
        values[key] = parse_value(key, text)
    return values, skipped


@dataclass(frozen=True, slots=True)
class SparkConf:
    """Spark's settings as the what-if grammar reads them (`perfmodel.simulate.whatif`'s
    ``ConfTable``): every ``spark.…`` name is Spark's, checked against `KEYS` when read, so
    ``--conf``, a ``--sweep`` axis and a fleet scenario accept and refuse the same keys."""

    @property
    def hint(self) -> str:
        return (
            "a Spark setting (spark.KEY=VALUE, docs/settings.md) or a stage's task count as "
            "the code would set it (stage.ID.partitions=N)"
        )

    def owns(self, name: str) -> bool:
        return name.startswith(("spark.", STAGE_PREFIX))

    def parse(self, key: str, text: str) -> SettingValue:
        return parse_value(key, text)

    def predicts(self, key: str) -> bool:
        """Whether a what-if on ``key`` is predicted (a known key with an effect modelled)."""
        return key in PREDICTED or stage_of_key(key) is not None

    def default(self, key: str, version_text: str, given: Mapping[str, str]) -> str | None:
        """What a run of Spark ``version_text`` that sets ``given`` has for ``key`` when it
        leaves it unset: Spark's default for the version, else its fallback key's value
        (None: derived at run time, as ``spark.default.parallelism`` is from the cores)."""
        spec = KEYS.get(key)
        if spec is None:
            return None
        version = spark_version(version_text)
        value = spec.default(version)
        if value is None and spec.fallback is not None:
            value = given.get(spec.fallback) or KEYS[spec.fallback].default(version)
        return value


SPARK_CONF = SparkConf()
"""The table the grammar is handed for Spark (the facade exports it as ``CONF``)."""
