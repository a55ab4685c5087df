"""Alerts: the conditions peers flag (too few tasks, skew, small files, spill, ...), each with
the knob that controls it and what following the advice would do.

Rule-based tools (DataFlint, spark-rapids-tools' AutoTuner, Dr. Elephant) name a problem and a
rule of thumb. Here every alert also names the knob the log shows to be in control of it (a
setting, or the user's code line read from the plan: ``repartition(2) in query 3``), a
suggested value, and, where the knob is a setting, the runtime the settings what-if predicts
with that value (the same path as ``predict --conf``), with its interval. Where the effect
cannot be predicted (a code edit, the input's files) the alert says why.

Detection (`detect_alerts`) is measured data only and cheap: per-stage alerts look only at
stages that matter (at least `MIN_SHARE` of the run), so a log of thousands of tiny stages
costs a pass over its stage summaries. The knob of a stage alert comes from the front end's
derivation of who sets each stage's task count (`perfmodel.spark.partitioning`), computed
only when some alert needs it. Quantifying (`quantify_alerts`) checks each candidate setting
against Spark's own partition rules first (a setting the plan shows will not move the stage
is never suggested) and replays only the `MAX_PREDICTED` alerts of most impact, sharing one
replay between alerts that suggest the same settings. Thresholds and where each comes from:
docs/alerts.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from perfmodel.analysis.diagnosis import StageDiagnosis, short_name
from perfmodel.dag.model import ApplicationProfile, PlanNode, StageKey
from perfmodel.errors import PerfmodelError
from perfmodel.simulate.replay import Prediction
from perfmodel.spark.partitioning import (
    CODE,
    FILE_SPLITS,
    INPUT,
    RDD_PARALLELISM,
    SHUFFLE_SETTING,
    SINGLE,
    JoinInfo,
    Partitioning,
    StagePartitioning,
    partition_sizes,
    shuffle_write_bytes,
)
from perfmodel.spark.settings import stage_key

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# -- thresholds (docs/alerts.md says where each comes from) ---------------------------------
MIN_SHARE = 0.05
"""A stage alert needs the stage to cover at least this share of the run's wall time (the
same rule that makes a stage important in the diagnosis)."""
MIN_STAGE_S = 0.5
"""...and to last at least this long: advice on a stage of a few milliseconds saves nothing."""
TASKS_PER_SLOT = 2
"""Spark's tuning guide: 2–3 tasks per CPU core. The suggested task count is this many per
slot (where the stage's data allows)."""
FEW_TASKS_SHARE = 0.5
"""Too few tasks: at most this share of the slots has a task (half the cores idle)."""
TINY_TASK_S = 0.2
"""Spark's tuning guide: tasks as short as 200 ms are efficient; shorter ones pay their
launch more than their work."""
SCHEDULING_SHARE = 0.3
"""Tiny tasks: scheduling, launch and deserialisation take at least this share of the
stage's task time."""
TARGET_TASK_S = 1.0
"""Fewer, longer tasks are suggested to run at least this long each."""
LARGE_PARTITION = 2 * GiB
"""A partition over this many bytes: Spark's historic 2 GiB block limit; over it a task holds
gigabytes in one go (spill, GC, fetch failures)."""
TARGET_PARTITION = 128 * MiB
"""The partition size suggested: spark.sql.files.maxPartitionBytes' default (AQE's advisory
size is 64 MiB)."""
SKEW_FACTOR = 5.0
"""Skew: the largest partition is at least this many times the median (AQE's
spark.sql.adaptive.skewJoin.skewedPartitionFactor)."""
SKEW_MIN_EXCESS_S = 1.0
"""...and its task ran at least this much longer than the median task."""
SMALL_FILE = 4 * MiB
"""Small files: under spark.sql.files.openCostInBytes (4 MiB), a file costs a reader as much
to open as reading 4 MiB."""
MANY_FILES = 100
"""...and at least this many of them."""
LARGE_BROADCAST = 1 * GiB
"""A broadcast over this is collected on the driver and copied to every executor (Spark
refuses one over 8 GiB)."""
BROADCASTABLE = 10 * MiB
"""A sort-merge join whose smaller side shuffled at most this much could broadcast it: Spark's
default spark.sql.autoBroadcastJoinThreshold."""
NESTED_LOOP_PAIRS = 100_000_000
"""A cartesian or nested-loop join comparing at least this many row pairs."""
SPILL_SHARE = 0.1
"""Spill: a stage spilled to disk at least this share of the bytes it read."""
GC_SHARE = 0.1
"""GC: at least this share of task time in garbage collection (Dr. Elephant's executor GC
heuristic: 0.08 low, 0.10 moderate, 0.15 severe)."""
HEAP_USED_LOW = 0.5
"""Memory under-used: every executor's peak heap in use under this share of its heap (Dr.
Elephant's JVM used memory heuristic: allocated at least twice the peak)."""
SHRINK_AT_LEAST = 0.75
"""...and only where the heap suggested is at most this share of the heap it had."""
HEAP_USED_HIGH = 0.9
"""Memory over-used: an executor's peak heap in use over this share of its heap, with GC or
spill showing the pressure."""
MAX_PREDICTED = 3
"""Alerts quantified by a replay, those of most impact first (a replay of a large log takes
about a second)."""
MAX_CHECKED = 8
"""Alerts whose candidate settings are checked against the plan (cheaper than a replay)."""

WEIGH_COST = ("gc", "memory-underused", "memory-overused")
"""Alerts on the executors' memory weigh what it costs against speed (an under-used heap is
advice to pay for less, a GC alert's to pay for more): the fastest of their values is not
their answer, so they are not given one value with each other (`quantify_alerts`)."""

MORE_TASKS = ("too-few-tasks", "large-partition", "spill", "skew")
"""Alerts whose suggestion must give their stage more tasks (fewer: the others with one)."""

KINDS = (
    "too-few-tasks",
    "too-many-tasks",
    "tiny-tasks",
    "large-partition",
    "skew",
    "small-files-read",
    "small-files-written",
    "large-broadcast",
    "broadcastable-join",
    "nested-loop-join",
    "spill",
    "gc",
    "memory-underused",
    "memory-overused",
)

TITLES = {kind: kind.replace("-", " ").capitalize() for kind in KINDS} | {"gc": "GC time"}
"""Each kind as a reader sees it (``Tiny tasks``)."""

SETTING, CODE_KNOB, DATA, NONE = "setting", "code", "data", "none"


@dataclass(slots=True)
class Alert:
    """One condition found, what controls it, and what changing it would do."""

    kind: str
    """One of `KINDS`."""
    where: str
    """The stage or SQL node (``stage 12 (groupBy at job.py:40)``, ``query 3: SortMergeJoin``)."""
    evidence: str
    """What was measured, and the threshold it crossed."""
    knob: str
    """What controls it: a setting (``spark.sql.shuffle.partitions``), the user's code
    (``repartition(2) in query 3``), the data, or none."""
    knob_kind: str
    """``setting``, ``code``, ``data`` or ``none``."""
    suggestion: str
    """The value suggested (``spark.sql.shuffle.partitions=16``, ``repartition(16)``)."""
    impact_s: float
    """Seconds of the run at stake (a rough bound used to rank alerts)."""
    stage_ids: list[int] = field(default_factory=list)
    query_id: int | None = None
    settings: dict[str, str] = field(default_factory=dict)
    """The settings the prediction uses (the suggestion, where it is a setting)."""
    predicted_s: float | None = None
    predicted_low_s: float | None = None
    predicted_high_s: float | None = None
    baseline_s: float | None = None
    """The model's runtime for the run as it was (the prediction's reference)."""
    not_predicted: str = ""
    """Why there is no prediction (empty where there is one)."""
    shared: str = ""
    """Where other alerts suggest another value of the same setting: the one value they all
    get, and why (empty otherwise)."""
    candidates: list[dict[str, str]] = field(default_factory=list, repr=False)
    """Settings to try, in order: the first the plan shows to act is suggested."""
    stage_keys: list[StageKey] = field(default_factory=list, repr=False)

    @property
    def text(self) -> str:
        """The alert in one paragraph: where, what, the knob, the suggestion, the what-if."""
        return (
            f"{TITLES[self.kind]} in {self.where}: {self.evidence} Knob: {self.knob}. "
            f"Suggested: {self.suggestion}"
            + (f" ({self.shared})" if self.shared else "")
            + f". {self.outcome}"
        )

    @property
    def outcome(self) -> str:
        """The predicted runtime with the suggestion, or why there is none."""
        if self.predicted_s is not None and self.baseline_s is not None:
            low, high = self.predicted_low_s, self.predicted_high_s
            band = (
                f" (80% interval {low:.1f}–{high:.1f} s)"
                if low is not None and high is not None and not math.isnan(low)
                else ""
            )
            return (
                f"Predicted: {self.predicted_s:.1f} s{band} against {self.baseline_s:.1f} s "
                f"replaying the run as it was ({_change(self.predicted_s, self.baseline_s)})."
            )
        return f"Not predicted: {self.not_predicted}."

    def as_dict(self) -> dict[str, object]:
        """The alert as ``diagnose --json`` writes it (docs/diagnose-json.md)."""
        return {
            "kind": self.kind,
            "where": self.where,
            "stage_ids": list(self.stage_ids),
            "query_id": self.query_id,
            "evidence": self.evidence,
            "knob": self.knob,
            "knob_kind": self.knob_kind,
            "suggestion": self.suggestion,
            "shared": self.shared or None,
            "settings": dict(self.settings),
            "impact_s": self.impact_s,
            "predicted_s": self.predicted_s,
            "predicted_low_s": _finite(self.predicted_low_s),
            "predicted_high_s": _finite(self.predicted_high_s),
            "baseline_s": self.baseline_s,
            "not_predicted": self.not_predicted or None,
            "text": self.text,
        }


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


def _change(new: float, old: float) -> str:
    if old <= 0:
        return "no reference"
    delta = new / old - 1.0
    if abs(delta) < 0.005:
        return "no change"
    return f"{delta:+.0%}"


@dataclass(slots=True)
class AlertInputs:
    """What detection reads: the profile, the diagnosis' stage summaries, the slots."""

    profile: ApplicationProfile
    stages: Sequence[StageDiagnosis]
    slots: int
    local_mode: bool
    memory_bytes: int | None
    """Heap of each executor (of the driver in local mode)."""
    gc_share: float
    """Share of the application's task time in garbage collection."""
    partitioning: Callable[[], Partitioning]
    """Who sets each stage's task count, derived on first call (not at all when no stage
    alert needs it)."""


# -- sizes and formatting --------------------------------------------------------------------


def size_text(n: float) -> str:
    """Bytes for a reader (``1.5 GiB``)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def size_setting(n: float) -> str:
    """Bytes as a Spark setting value, rounded up to a whole KiB, MiB or GiB (``64m``)."""
    n = max(1.0, float(n))
    for suffix, unit in (("g", GiB), ("m", MiB), ("k", KiB)):
        if n >= unit:
            return f"{math.ceil(n / unit)}{suffix}"
    return f"{math.ceil(n)}b"


def _stage_label(s: StageDiagnosis) -> str:
    return f"stage {s.stage_id} ({short_name(s.name, 50) if s.name else 'unnamed'})"


# -- detection -------------------------------------------------------------------------------


def detect_alerts(inputs: AlertInputs) -> list[Alert]:
    """Every alert the measured data supports, most impact first (not yet quantified)."""
    out: list[Alert] = []
    slots = max(1, inputs.slots)
    total_s = sum(s.duration_s for s in inputs.stages) or 1.0
    matter = [
        s
        for s in inputs.stages
        if s.share_of_app >= MIN_SHARE and s.duration_s >= MIN_STAGE_S and s.tasks_run > 0
    ]
    part: Partitioning | None = None
    # A large broadcast is a risk (the driver collects it) however long its stage ran: a
    # driver metric that large is the one sign worth deriving the partitioning for.
    large = any(
        v >= LARGE_BROADCAST
        for q in inputs.profile.queries.values()
        for v in q.driver_metrics.values()
    )
    if large and not matter:
        part = inputs.partitioning()
        out.extend(_plan_alerts(inputs, part, set()))
    if matter:
        part = inputs.partitioning()
        for s in matter:
            out.extend(_stage_alerts(inputs, part, s, slots))
        out.extend(_plan_alerts(inputs, part, {(s.stage_id, s.attempt) for s in matter}))
    out.extend(_memory_alerts(inputs, total_s))
    out.sort(key=lambda a: (-a.impact_s, a.kind, a.where))
    return out


def _stage_alerts(
    inputs: AlertInputs, part: Partitioning, s: StageDiagnosis, slots: int
) -> list[Alert]:
    out: list[Alert] = []
    key = (s.stage_id, s.attempt)
    sp = part.stages.get(key)
    stage = inputs.profile.stages[key]
    label = _stage_label(s)
    tasks = s.tasks_run - s.failed_tasks or s.tasks_run
    sizes, _ = partition_sizes(stage)
    read = float(sizes.sum()) if sizes.size else 0.0
    biggest = float(sizes.max()) if sizes.size else 0.0
    median = float(sorted(sizes.tolist())[sizes.size // 2]) if sizes.size else 0.0
    target = TASKS_PER_SLOT * slots
    query_id = sp.query_id if sp else None

    def new(kind: str, evidence: str, impact_s: float) -> Alert:
        return _new(kind, label, evidence, impact_s, [key], query_id)

    # A stage that reads and writes nothing (Spark's own file listing or schema inference,
    # a driver-side collect) has no data more tasks could split.
    moves_data = s.input_bytes + s.shuffle_read_bytes + s.shuffle_write_bytes + s.output_bytes > 0
    if tasks <= FEW_TASKS_SHARE * slots and moves_data:
        idle = 1.0 - tasks / slots
        evidence = (
            f"{tasks} task(s) for {slots} slots: {idle:.0%} of the cores idle for its "
            f"{s.duration_s:.1f} s (alert at ≤ {FEW_TASKS_SHARE:.0%} of the slots busy)."
        )
        alert = new("too-few-tasks", evidence, s.duration_s * idle)
        _partition_knob(alert, part, sp, target, read, more=True)
        out.append(alert)

    scheduling = s.shares.get("scheduling", 0.0)
    fewer = max(target, math.ceil(s.task_time_s / TARGET_TASK_S))
    if tasks > target and scheduling >= SCHEDULING_SHARE and fewer < tasks:
        evidence = (
            f"{tasks} tasks, median {s.median_task_s * 1000:.0f} ms; {scheduling:.0%} of the "
            f"task time is scheduling, launch and deserialisation (alert at ≥ "
            f"{SCHEDULING_SHARE:.0%})."
        )
        alert = new("tiny-tasks", evidence, s.duration_s * scheduling)
        _partition_knob(alert, part, sp, fewer, read, more=False)
        out.append(alert)
    elif tasks > target and s.median_task_s < TINY_TASK_S and fewer < tasks:
        evidence = (
            f"{tasks} tasks for {slots} slots, median task {s.median_task_s * 1000:.0f} ms "
            f"(alert at more than {TASKS_PER_SLOT} tasks per slot and a median under "
            f"{TINY_TASK_S * 1000:.0f} ms)."
        )
        alert = new("too-many-tasks", evidence, s.duration_s * 0.5 * scheduling)
        _partition_knob(alert, part, sp, fewer, read, more=False)
        out.append(alert)

    skewed = median > 0 and biggest >= SKEW_FACTOR * median
    excess = s.max_task_s - s.median_task_s
    if skewed and excess >= SKEW_MIN_EXCESS_S:
        evidence = (
            f"its largest partition holds {size_text(biggest)}, {biggest / median:.0f}× the "
            f"median ({size_text(median)}); its longest task ran {s.max_task_s:.1f} s against a "
            f"median of {s.median_task_s:.1f} s (alert at ≥ {SKEW_FACTOR:.0f}× and "
            f"{SKEW_MIN_EXCESS_S:.0f} s longer)."
        )
        alert = new("skew", evidence, excess)
        _skew_knob(alert, part, sp, biggest, median)
        out.append(alert)
    elif biggest >= LARGE_PARTITION:
        evidence = (
            f"its largest partition holds {size_text(biggest)} (alert over "
            f"{size_text(LARGE_PARTITION)})."
        )
        alert = new("large-partition", evidence, s.max_task_s)
        want = max(tasks + 1, math.ceil(read / TARGET_PARTITION))
        _partition_knob(alert, part, sp, want, read, more=True)
        out.append(alert)

    if s.disk_spill_bytes > 0 and s.disk_spill_bytes >= SPILL_SHARE * max(read, 1.0):
        evidence = (
            f"spilled {size_text(s.disk_spill_bytes)} to disk "
            f"({size_text(s.memory_spill_bytes)} in memory) while reading {size_text(read)} "
            f"(alert at ≥ {SPILL_SHARE:.0%} of the bytes read)."
        )
        alert = new("spill", evidence, s.duration_s * 0.5)
        factor = min(16, max(2, math.ceil(s.memory_spill_bytes / max(read, 1.0)) + 1))
        _partition_knob(alert, part, sp, tasks * factor, read, more=True)
        if alert.knob_kind != SETTING:
            _memory_knob(alert, inputs, 2.0, "more memory per task spills less")
        out.append(alert)
    return out


def _new(
    kind: str,
    where: str,
    evidence: str,
    impact_s: float,
    keys: Sequence[StageKey],
    query_id: int | None,
) -> Alert:
    """An alert whose knob is yet to be found."""
    return Alert(
        kind,
        where,
        evidence,
        "",
        NONE,
        "",
        impact_s,
        stage_ids=sorted({k[0] for k in keys}),
        query_id=query_id,
        stage_keys=list(keys),
    )


def _query_sets(part: Partitioning, sp: StagePartitioning | None, key: str) -> bool:
    """Whether the stage's query set ``key`` itself (``spark.conf.set`` in the code):
    ``--conf`` does not reach it there."""
    if sp is None or sp.query_id is None:
        return False
    return key in part.query_modified.get(sp.query_id, frozenset())


def _set_in_code(alert: Alert, key: str, value: str, query_id: int | None) -> None:
    alert.knob = f'spark.conf.set("{key}", ...) in the code of query {query_id}'
    alert.knob_kind = CODE_KNOB
    alert.suggestion = f'spark.conf.set("{key}", "{value}")'
    alert.not_predicted = (
        f"the query sets {key} itself, so a --conf value does not reach it and the code must change"
    )


def _partition_knob(
    alert: Alert,
    part: Partitioning,
    sp: StagePartitioning | None,
    want: int,
    read: float,
    *,
    more: bool,
) -> None:
    """The knob of a stage's task count, and settings that would make it ``want`` tasks."""
    want = max(1, int(want))
    if sp is None:
        alert.knob, alert.knob_kind = "unknown: the log does not say what set its tasks", NONE
        alert.suggestion = f"{want} tasks"
        alert.not_predicted = "the log does not show what set this stage's task count"
        return
    alert.query_id = sp.query_id
    control = sp.control
    if control == SHUFFLE_SETTING:
        key = "spark.sql.shuffle.partitions"
        settings = part.settings_for(sp)
        adaptive = bool(settings.get("spark.sql.adaptive.enabled"))
        coalesced = any("coalesced" in s.adaptive_read for s in sp.shuffles)
        planned = sp.planned or sp.partitions
        if _query_sets(part, sp, key):
            _set_in_code(alert, key, str(want), sp.query_id)
            return
        candidates: list[dict[str, str]] = []
        size = size_setting(max(read / want, KiB))
        if adaptive and coalesced and more:
            if planned < want:
                candidates.append({key: str(want)})
            candidates += [
                {"spark.sql.adaptive.advisoryPartitionSizeInBytes": size},
                {"spark.sql.adaptive.coalescePartitions.minPartitionSize": size},
                {"spark.sql.adaptive.coalescePartitions.parallelismFirst": "false"},
                {
                    key: str(max(want, planned)),
                    "spark.sql.adaptive.coalescePartitions.enabled": "false",
                },
            ]
        elif adaptive and coalesced:
            candidates += [
                {"spark.sql.adaptive.advisoryPartitionSizeInBytes": size},
                {key: str(want)},
            ]
        else:
            candidates.append({key: str(want)})
        alert.knob = key + (" (AQE coalesces its partitions)" if adaptive and coalesced else "")
        alert.knob_kind = SETTING
        alert.candidates = candidates
        alert.settings = dict(candidates[0])
        alert.suggestion = _settings_text(candidates[0])
        return
    if control == RDD_PARALLELISM:
        key = "spark.default.parallelism"
        alert.knob, alert.knob_kind = key, SETTING
        alert.candidates = [{key: str(want)}]
        alert.settings = dict(alert.candidates[0])
        alert.suggestion = _settings_text(alert.settings)
        return
    if control == FILE_SPLITS:
        key = "spark.sql.files.maxPartitionBytes"
        if _query_sets(part, sp, key):
            _set_in_code(alert, key, size_setting(read / want), sp.query_id)
            return
        scanned = sum(s.bytes or 0 for s in sp.scans) or read
        size = size_setting(max(scanned / want, 64 * KiB))
        alert.knob, alert.knob_kind = key, SETTING
        alert.candidates = [{key: size}]
        if more:
            alert.candidates.append({key: size, "spark.sql.files.openCostInBytes": size})
        alert.settings = dict(alert.candidates[0])
        alert.suggestion = _settings_text(alert.settings)
        return
    if control == CODE:
        call = sp.code or "a partition count in the code"
        alert.knob, alert.knob_kind = f"the code: {call}", CODE_KNOB
        if sp.coalesces and more:
            # More tasks than a coalesce() merges into is a repartition(), whose added
            # shuffle the what-if does not price (`partition_plan.code_changes`).
            alert.suggestion = f"repartition({want}) instead"
            alert.not_predicted = (
                "the code's coalesce() can only merge its input's partitions; a repartition() "
                "in its place adds a shuffle, which the what-if does not price"
            )
            return
        verb = next((v for v in ("repartition", "coalesce") if call.startswith(v + "(")), "")
        alert.suggestion = (
            f"{verb}({want}) instead" if verb else f"{want} partitions in place of {call}"
        )
        # The edit's what-if: the stage re-split as the new count would split it.
        alert.candidates = [{stage_key(sp.key[0]): str(want)}]
        alert.settings = dict(alert.candidates[0])
        return
    if control == SINGLE:
        alert.knob = "the query's plan: " + sp.reason + " (a global aggregate, sort or window)"
        alert.knob_kind = CODE_KNOB
        alert.suggestion = "partition the work in the code (e.g. a window's partitionBy)"
        alert.not_predicted = "one partition whatever the settings: only the query can change it"
        return
    source = part.stages.get(sp.follows) if sp.follows is not None else None
    if control == INPUT and source is not None:
        # It reads back another stage's output (a checkpoint or cache): that stage's knob.
        _partition_knob(alert, part, source, want, read, more=more)
        alert.knob += f" (stage {source.key[0]}'s partitions, which it reads back)"
        alert.query_id = sp.query_id
        return
    if control == INPUT:
        alert.knob, alert.knob_kind = f"its input's partitions ({sp.reason})", CODE_KNOB
        alert.suggestion = f"repartition({want}) after reading it" if more else f"coalesce({want})"
        alert.not_predicted = "its input sets the task count; no setting changes it"
        return
    alert.knob, alert.knob_kind = f"unknown ({sp.reason})", NONE
    alert.suggestion = f"{want} tasks"
    alert.not_predicted = "the log does not show what set this stage's task count"


def _settings_text(settings: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def _skew_knob(
    alert: Alert,
    part: Partitioning,
    sp: StagePartitioning | None,
    biggest: float,
    median: float,
) -> None:
    """A hot key survives any partition count; only AQE's skew join splits a hot partition,
    and only of a sort-merge (or shuffled hash) join."""
    join = next(
        (
            j
            for j in part.joins
            if sp is not None
            and sp.key in j.stages
            and j.strategy in ("sort-merge", "shuffled-hash")
        ),
        None,
    )
    if sp is None or join is None or sp.control != SHUFFLE_SETTING:
        alert.knob = "the data's key distribution, in the code"
        alert.knob_kind = CODE_KNOB
        alert.suggestion = "salt the hot key, or aggregate in two steps (partial, then total)"
        alert.not_predicted = (
            "AQE splits skewed partitions of sort-merge joins only; elsewhere a hot key stays "
            "in one partition whatever the partition count, and the what-if cannot rewrite "
            "the code"
        )
        return
    settings = part.settings_for(sp)
    threshold = size_setting(max(median * SKEW_FACTOR, biggest / 4, KiB))
    wanted = {
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.skewJoin.enabled": "true",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": threshold,
    }
    keep = {
        k: v for k, v in wanted.items() if k.endswith("ThresholdInBytes") or not settings.get(k)
    }
    for key in keep:
        if _query_sets(part, sp, key):
            _set_in_code(alert, key, keep[key], sp.query_id)
            return
    alert.knob = "AQE's skew join (spark.sql.adaptive.skewJoin.*)"
    alert.knob_kind = SETTING
    alert.query_id = join.query_id
    # A hot partition is split into pieces of AQE's advisory size: under it, no split.
    advisory = int(settings.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") or 0)
    finer = keep | {
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": size_setting(max(median, biggest / 4))
    }
    alert.candidates = [keep, finer] if advisory * 2 > biggest else [keep]
    alert.settings = dict(keep)
    alert.suggestion = _settings_text(keep)


def _memory_knob(alert: Alert, inputs: AlertInputs, factor: float, why: str) -> None:
    """More (or less) heap per executor, as a setting the resource what-if predicts."""
    memory = inputs.memory_bytes
    key = "spark.driver.memory" if inputs.local_mode else "spark.executor.memory"
    if not memory:
        alert.knob, alert.knob_kind = key, SETTING
        alert.suggestion = f"{key} × {factor:g}"
        alert.not_predicted = "the log does not say how much memory the executors had"
        return
    value = f"{max(1, math.ceil(memory * factor / MiB))}m"
    alert.knob, alert.knob_kind = f"{key} ({why})", SETTING
    alert.candidates = [{key: value}]
    alert.settings = {key: value}
    alert.suggestion = f"{key}={value}"


# -- plan alerts: files, joins ---------------------------------------------------------------


def _plan_alerts(inputs: AlertInputs, part: Partitioning, matter: set[StageKey]) -> list[Alert]:
    out: list[Alert] = []
    profile = inputs.profile
    stage_s = {(s.stage_id, s.attempt): s.duration_s for s in inputs.stages}
    for key in sorted(matter):
        sp = part.stages.get(key)
        if sp is None or not sp.scans:
            continue
        files = sum(s.files or 0 for s in sp.scans)
        size = sum(s.bytes or 0 for s in sp.scans)
        if files >= MANY_FILES and size / files < SMALL_FILE:
            scan = sp.scans[0]
            alert = Alert(
                "small-files-read",
                f"stage {key[0]}, query {sp.query_id}: {scan.description}",
                f"reads {files:,} {scan.format} files averaging {size_text(size / files)} "
                f"(alert at ≥ {MANY_FILES} files under {size_text(SMALL_FILE)} on average).",
                "the input's files (written by the job that made them)",
                DATA,
                f"compact them into about {max(1, math.ceil(size / TARGET_PARTITION))} file(s) "
                f"of up to {size_text(TARGET_PARTITION)}",
                stage_s.get(key, 0.0) * 0.5,
                stage_ids=[key[0]],
                query_id=sp.query_id,
                stage_keys=[key],
                not_predicted=(
                    "the number of files is the data's: settings only re-split the same files, "
                    "and the what-if cannot rewrite the input"
                ),
            )
            out.append(alert)
    out.extend(_write_alerts(profile, part, stage_s, matter))
    for join in part.joins:
        keys = [k for k in join.stages if k in matter]
        if not keys and (join.broadcast_bytes or 0) >= LARGE_BROADCAST:
            keys = [k for k in join.stages if k in profile.stages]
        if not keys:
            continue
        found = _join_alert(profile, part, join, keys, stage_s)
        if found is not None:
            out.append(found)
    return out


_WRITE_FILES = "number of written files"
_WRITE_BYTES = "written output"


def _write_alerts(
    profile: ApplicationProfile,
    part: Partitioning,
    stage_s: Mapping[StageKey, float],
    matter: set[StageKey],
) -> list[Alert]:
    """Small files written by a stage that matters: the write command's driver metrics."""
    out: list[Alert] = []
    writers: dict[int, StageKey] = {}
    for key in sorted(matter):
        sp = part.stages.get(key)
        stage = profile.stages.get(key)
        if sp is None or sp.query_id is None or stage is None or not len(stage.table):
            continue
        if float(stage.table.col("output_bytes").sum()) > 0:
            writers[sp.query_id] = key
    for query in profile.queries.values():
        if query.plan is None or query.query_id not in writers:
            continue
        node = _find_metric(query.plan, _WRITE_FILES)
        if node is None:
            continue
        ids = {name: i for i, name in node.metric_ids.items()}
        files = query.driver_metrics.get(ids[_WRITE_FILES], 0)
        size = query.driver_metrics.get(ids.get(_WRITE_BYTES, -1), 0)
        if files < MANY_FILES or size / max(files, 1) >= SMALL_FILE:
            continue
        key = writers[query.query_id]
        sp = part.stages[key]
        want = max(1, math.ceil(size / TARGET_PARTITION))
        alert = Alert(
            "small-files-written",
            f"stage {key[0]}, query {query.query_id}: {node.name}",
            f"wrote {files:,} files averaging {size_text(size / files)} (alert at ≥ "
            f"{MANY_FILES} files under {size_text(SMALL_FILE)} on average); every later read "
            "pays for each file.",
            "",
            NONE,
            "",
            stage_s.get(key, 0.0) * 0.25,
            stage_ids=[key[0]],
            query_id=query.query_id,
            stage_keys=[key],
        )
        _partition_knob(alert, part, sp, want, float(size), more=False)
        out.append(alert)
    return out


def _find_metric(plan: PlanNode, metric: str) -> PlanNode | None:
    stack = [plan]
    while stack:
        node = stack.pop()
        if metric in node.metric_ids.values():
            return node
        stack.extend(node.children)
    return None


def _read_bytes(profile: ApplicationProfile, keys: Sequence[StageKey]) -> float:
    return profile.ended_total(keys, "input_bytes", "shuffle_read_bytes")


def _records(profile: ApplicationProfile, keys: Sequence[StageKey]) -> float:
    return profile.ended_total(keys, "input_records", "shuffle_read_records")


def _join_alert(
    profile: ApplicationProfile,
    part: Partitioning,
    join: JoinInfo,
    keys: list[StageKey],
    stage_s: Mapping[StageKey, float],
) -> Alert | None:
    seconds = sum(stage_s.get(k, 0.0) for k in keys)
    where = f"query {join.query_id}: {join.description}"
    sp = part.stages.get(keys[0])

    def new(kind: str, evidence: str, impact_s: float) -> Alert:
        return _new(kind, where, evidence, impact_s, keys, join.query_id)

    static_key = "spark.sql.autoBroadcastJoinThreshold"
    if (
        join.strategy in ("broadcast-hash", "broadcast-nested-loop")
        and (join.broadcast_bytes or 0) >= LARGE_BROADCAST
    ):
        size = float(join.broadcast_bytes or 0)
        alert = new(
            "large-broadcast",
            f"broadcasts {size_text(size)} to every executor (alert over "
            f"{size_text(LARGE_BROADCAST)}).",
            seconds * 0.5,
        )
        settings = part.settings_for(sp) if sp is not None else part.settings
        key = "spark.sql.adaptive.autoBroadcastJoinThreshold" if join.adaptive else static_key
        threshold = int(settings.get(key) or 0)
        build = _read_bytes(profile, join.build_stages) or size
        value = size_setting(min(BROADCASTABLE, build / 2))
        if join.strategy == "broadcast-nested-loop" or (threshold > 0 and size > threshold * 4):
            alert.knob = "a broadcast hint in the code (the size is over the threshold)"
            alert.knob_kind = CODE_KNOB
            alert.suggestion = "drop the broadcast() hint, or filter the build side first"
            alert.not_predicted = "a hint in the code chose the broadcast; no setting undoes it"
        elif _query_sets(part, sp, key):
            _set_in_code(alert, key, value, join.query_id)
        else:
            alert.knob, alert.knob_kind = key, SETTING
            alert.candidates = [{key: value}]
            alert.settings = {key: value}
            alert.suggestion = f"{key}={value} (a sort-merge join instead)"
        return alert
    if join.strategy in ("cartesian", "broadcast-nested-loop"):
        left, right = join.side_stages
        if join.strategy == "broadcast-nested-loop":
            pairs = float(join.broadcast_rows or 0) * _records(profile, keys)
        elif left and right:
            pairs = _records(profile, left) * _records(profile, right)
        else:
            # Each task pairs one partition of each side and reads both: with L × R tasks
            # the records read are R·|left| + L·|right|; taking L = R = √tasks, the pairs
            # are (records / (2√tasks))².
            tasks = sum(len(profile.stages[k].table) for k in keys if k in profile.stages)
            pairs = (_records(profile, keys) / (2 * math.sqrt(max(tasks, 1)))) ** 2
        if pairs < NESTED_LOOP_PAIRS:
            return None
        alert = new(
            "nested-loop-join",
            f"a {join.strategy} join compares about {pairs:,.0f} row pairs (alert at ≥ "
            f"{NESTED_LOOP_PAIRS:,}).",
            seconds,
        )
        alert.knob, alert.knob_kind = "the query's join condition, in the code", CODE_KNOB
        alert.suggestion = (
            "join on an equality of keys (a hash or sort-merge join), or filter both sides first"
        )
        alert.not_predicted = (
            "no setting turns a join without an equality key into a hash join; the what-if "
            "cannot rewrite the query"
        )
        return alert
    if join.strategy == "sort-merge" and all(join.side_stages):
        written = [shuffle_write_bytes(profile, side) for side in join.side_stages]
        small = 0 if written[0] <= written[1] else 1
        if written[small] > BROADCASTABLE:
            return None
        read_small = _read_bytes(profile, join.side_stages[small])
        alert = new(
            "broadcastable-join",
            f"a sort-merge join whose smaller side shuffled only {size_text(written[small])} "
            f"(the other {size_text(written[1 - small])}): broadcasting it would spare the "
            f"larger side's shuffle (alert at ≤ {size_text(BROADCASTABLE)}, Spark's default "
            "broadcast threshold).",
            seconds * 0.5 + sum(stage_s.get(k, 0.0) for k in join.side_stages[1 - small]) * 0.5,
        )
        value = size_setting(max(BROADCASTABLE, read_small * 1.25))
        if _query_sets(part, sp, static_key):
            _set_in_code(alert, static_key, value, join.query_id)
        else:
            alert.knob, alert.knob_kind = static_key, SETTING
            alert.candidates = [{static_key: value}]
            alert.settings = {static_key: value}
            alert.suggestion = f"{static_key}={value}"
        return alert
    return None


# -- application alerts: GC and memory -------------------------------------------------------


def _memory_alerts(inputs: AlertInputs, total_s: float) -> list[Alert]:
    out: list[Alert] = []
    profile = inputs.profile
    task_s = sum(s.task_time_s for s in inputs.stages)
    gc_s = inputs.gc_share * task_s
    if inputs.gc_share >= GC_SHARE and gc_s / max(1, inputs.slots) >= MIN_STAGE_S:
        alert = Alert(
            "gc",
            "the application",
            f"{inputs.gc_share:.0%} of task time is garbage collection ({gc_s:.1f} s of task "
            f"time; alert at ≥ {GC_SHARE:.0%}).",
            "",
            NONE,
            "",
            gc_s / max(1, inputs.slots),
        )
        _memory_knob(alert, inputs, 2.0, "a larger heap collects less often")
        out.append(alert)
    memory = inputs.memory_bytes
    peaks = [
        e.peak_heap_bytes
        for e in profile.executors.values()
        if e.peak_heap_bytes and (inputs.local_mode or e.executor_id != "driver")
    ]
    if not memory or not peaks:
        return out
    top = max(peaks)
    spilled = any(s.disk_spill_bytes > 0 for s in inputs.stages)
    if top >= HEAP_USED_HIGH * memory and (inputs.gc_share >= GC_SHARE or spilled):
        alert = Alert(
            "memory-overused",
            "the executors" if not inputs.local_mode else "the driver (local mode)",
            f"an executor's heap in use peaked at {size_text(top)} of {size_text(memory)} "
            f"({top / memory:.0%}; alert over {HEAP_USED_HIGH:.0%}), with "
            + ("spill" if spilled else f"{inputs.gc_share:.0%} of task time in GC")
            + ".",
            "",
            NONE,
            "",
            gc_s / max(1, inputs.slots) + 0.01 * total_s,
        )
        _memory_knob(alert, inputs, 2.0, "room for the heap the tasks need")
        out.append(alert)
    elif (
        not inputs.local_mode
        and top < HEAP_USED_LOW * memory
        and _right_size(top) <= SHRINK_AT_LEAST * memory
    ):
        alert = Alert(
            "memory-underused",
            "the executors",
            f"the most heap any of {len(peaks)} executor(s) had in use was {size_text(top)} of "
            f"{size_text(memory)} ({top / memory:.0%}; alert under {HEAP_USED_LOW:.0%}): memory "
            "paid for and not used.",
            "",
            NONE,
            "",
            0.0,
        )
        _memory_knob(alert, inputs, _right_size(top) / memory, "the heap the run used")
        out.append(alert)
    return out


def _right_size(peak: float) -> float:
    """The heap suggested for a peak in use: half as much again, Spark's 300 MiB reserve,
    at least 1 GiB."""
    return max(peak * 1.5 + 300 * MiB, GiB)


# -- quantifying -----------------------------------------------------------------------------


Check = Callable[[Mapping[str, str], Alert], str | None]
"""Whether settings act on an alert's stages or join, by the plan: None if they do, else why
not."""
Predict = Callable[[Mapping[str, str]], Prediction]


def quantify_alerts(
    alerts: list[Alert],
    check: Check,
    predict: Predict,
    *,
    max_predicted: int = MAX_PREDICTED,
    max_checked: int = MAX_CHECKED,
) -> None:
    """Choose each alert's settings by the plan and predict the runtime with them.

    Alerts are taken most impact first. Of each, the first candidate the plan shows to act
    is suggested; one whose candidates all leave its stages as they are says so (and keeps
    no setting). Alerts whose suggestions give one setting different values (two stages'
    shuffles both set by ``spark.sql.shuffle.partitions``) get one value, the one predicted
    fastest (`_one_value`): a user sets a key once for the application. Up to
    ``max_predicted`` distinct settings are replayed; an alert with the same settings as one
    already replayed shares its prediction.
    """
    chosen = _choose_settings(alerts, check, max_checked)
    replays = _Replays(predict, max_predicted)
    shared = _conflicts(chosen)
    settled: set[int] = set()
    for alert in chosen:
        group = shared.get(id(alert))
        if group is not None and id(alert) not in settled:
            _one_value(group, replays)
            settled.update(id(a) for a in group)
        result = replays.get(alert.settings)
        if result is None:
            alert.not_predicted = (
                f"only the {max_predicted} alerts of most impact are predicted; "
                f"predict --conf {_conf_args(alert.settings)} predicts it"
            )
            continue
        if isinstance(result, str):
            alert.not_predicted = f"the what-if refused it: {result}"
            continue
        alert.predicted_s = result.predicted_s
        alert.predicted_low_s = result.predicted_low_s
        alert.predicted_high_s = result.predicted_high_s
        alert.baseline_s = result.baseline_replay_s
        alert.not_predicted = ""


def _choose_settings(alerts: list[Alert], check: Check, max_checked: int) -> list[Alert]:
    """Each alert's settings: the first of its candidates the plan shows to act. Returns the
    alerts that have settings to predict, in order."""
    out: list[Alert] = []
    checked = 0
    for alert in alerts:
        if not alert.candidates:
            continue
        if checked >= max_checked:
            alert.not_predicted = (
                f"only the {max_checked} alerts of most impact are checked and predicted; "
                f"predict --conf {_conf_args(alert.candidates[0])} predicts it"
            )
            continue
        checked += 1
        chosen: dict[str, str] | None = None
        reasons: list[str] = []
        for candidate in alert.candidates:
            why = check(candidate, alert)
            if why is None:
                chosen = dict(candidate)
                break
            reasons.append(f"{_settings_text(candidate)}: {why}")
        if chosen is None:
            alert.settings = {}
            alert.knob += " (by Spark's rules, none of the values tried acts here)"
            alert.suggestion = "no setting the model finds in control"
            alert.not_predicted = "by Spark's rules, " + "; ".join(reasons)
            alert.knob_kind = NONE
            continue
        _suggest(alert, chosen)
        out.append(alert)
    return out


def _suggest(alert: Alert, settings: Mapping[str, str]) -> None:
    alert.settings = dict(settings)
    if (
        alert.knob_kind != CODE_KNOB  # a code edit's suggestion is the code, not its key
        and alert.suggestion
        and not alert.suggestion.startswith(_settings_text(settings))
    ):
        alert.suggestion = _settings_text(settings)


class _Replays:
    """Each distinct setting's prediction, replayed once, at most ``limit`` of them; a
    refusal of the what-if is kept as its message, not raised."""

    def __init__(self, predict: Predict, limit: int) -> None:
        self._predict = predict
        self._limit = limit
        self._done: dict[tuple[tuple[str, str], ...], Prediction | str] = {}

    def get(self, settings: Mapping[str, str]) -> Prediction | str | None:
        """The prediction with ``settings``; None once the replays allowed are spent."""
        key = tuple(sorted(settings.items()))
        if key not in self._done:
            if sum(isinstance(v, Prediction) for v in self._done.values()) >= self._limit:
                return None
            try:
                self._done[key] = self._predict(dict(settings))
            except PerfmodelError as exc:
                self._done[key] = str(exc)
        return self._done[key]


def _conflicts(alerts: list[Alert]) -> dict[int, list[Alert]]:
    """Alerts on settings (not code) grouped through the keys they share, by ``id`` of each
    member, where a group's alerts do not all suggest the same settings; alerts in no such
    group are left out, and so are those that weigh cost (`WEIGH_COST`)."""
    on_settings = [a for a in alerts if a.knob_kind == SETTING and a.kind not in WEIGH_COST]
    parent = list(range(len(on_settings)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, alert in enumerate(on_settings):
        for key in alert.settings:  # every alert on a key joins its group, whatever its value
            parent[root(i)] = root(first.setdefault(key, i))
    groups: dict[int, list[Alert]] = defaultdict(list)
    for i, alert in enumerate(on_settings):
        groups[root(i)].append(alert)
    return {
        id(a): members
        for members in groups.values()
        if len({tuple(sorted(m.settings.items())) for m in members}) > 1
        for a in members
    }


def _one_value(group: list[Alert], replays: _Replays) -> None:
    """The alerts of ``group`` suggest different values of the same settings; each gets the
    one whose replay predicts the application fastest (of those the replay budget reaches,
    the most impactful alert's first), and says so."""
    options: list[dict[str, str]] = []
    for alert in group:
        if alert.settings not in options:
            options.append(dict(alert.settings))
    timed: list[tuple[float, int]] = []
    for i, option in enumerate(options):
        result = replays.get(option)
        if isinstance(result, Prediction):
            timed.append((result.predicted_s, i))
    if not timed:
        return
    best = options[min(timed)[1]]
    keys = sorted({k for o in options for k in o})

    def name(option: Mapping[str, str]) -> str:
        # One key: its values alone (72 and 27); else each option in full.
        return option[keys[0]] if len(keys) == 1 else _settings_text(option)

    tried = ", ".join(
        f"{name(options[i])}: {s:.1f} s" for s, i in sorted(timed, key=lambda t: t[1])
    )
    untried = len(options) - len(timed)
    ids = [str(sid) for sid in sorted({sid for a in group for sid in a.stage_ids})]
    stages = ", ".join(ids[:-1]) + f" and {ids[-1]}" if len(ids) > 1 else "".join(ids)
    where = f"stages {stages} get" if len(ids) > 1 else "these alerts get"
    what = keys[0] if len(keys) == 1 else "these settings"
    note = (
        f"{what} is set once for the application, so {where} one value: of those "
        f"their alerts suggest ({tried}"
        + (f"; {untried} more not replayed" if untried else "")
        + f"), {name(best)} is predicted fastest"
    )
    for alert in group:
        _suggest(alert, best)
        alert.shared = note


def _conf_args(settings: Mapping[str, str]) -> str:
    return " --conf ".join(f"{k}={v}" for k, v in settings.items())
