"""Typed, partial schemas of the Spark listener events perfmodel reads.

Decoding with msgspec into these structs is what makes ingest fast: only the declared
fields are materialised, everything else in a line (task accumulables, system
properties, executor metrics) is skipped by the C decoder without creating Python
objects. Field names follow Spark's JSON protocol; every field a Spark version may
omit (1.x logs lack many) has a default, so one schema reads Spark 1.x through 4.x.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Union

import msgspec
from msgspec import Struct, field

SQL_PREFIX = "org.apache.spark.sql.execution.ui."

Long = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
Measured = int
"""A task's times and metrics: decoded whatever their size, because the builder clamps a
value outside any physical range into range and counts it (``out_of_range_value``), so the
task is kept; refusing the event would drop the whole task from the counts."""
"""Spark writes Java longs: an integer outside their range is damage, not data. Refusing it
here keeps a 400-digit number from reaching arithmetic that would overflow; the line is
skipped and counted as an out-of-range value."""


class _Event(Struct, kw_only=True, gc=False):
    pass


class EventHeader(_Event, kw_only=True):
    Event: str


class LogStart(_Event, kw_only=True, tag_field="Event", tag="SparkListenerLogStart"):
    spark_version: str = field(name="Spark Version", default="")


class ApplicationStart(
    _Event, kw_only=True, tag_field="Event", tag="SparkListenerApplicationStart"
):
    app_name: str = field(name="App Name", default="")
    app_id: str | None = field(name="App ID", default=None)
    timestamp: Long = field(name="Timestamp", default=0)
    user: str = field(name="User", default="")
    attempt_id: str | None = field(name="App Attempt ID", default=None)


class ApplicationEnd(_Event, kw_only=True, tag_field="Event", tag="SparkListenerApplicationEnd"):
    timestamp: Long = field(name="Timestamp", default=0)


class EnvironmentUpdate(
    _Event, kw_only=True, tag_field="Event", tag="SparkListenerEnvironmentUpdate"
):
    spark_properties: Any = field(name="Spark Properties", default=None)
    """A JSON object in most versions; a list of [key, value] pairs in some."""


class ExecutorInfoJson(_Event, kw_only=True):
    host: str = field(name="Host", default="")
    total_cores: Long | None = field(name="Total Cores", default=None)


class ExecutorAdded(_Event, kw_only=True, tag_field="Event", tag="SparkListenerExecutorAdded"):
    timestamp: Long = field(name="Timestamp", default=0)
    executor_id: str = field(name="Executor ID")
    info: ExecutorInfoJson = field(name="Executor Info", default_factory=ExecutorInfoJson)


class ExecutorRemoved(_Event, kw_only=True, tag_field="Event", tag="SparkListenerExecutorRemoved"):
    timestamp: Long = field(name="Timestamp", default=0)
    executor_id: str = field(name="Executor ID")
    reason: str | None = field(name="Removed Reason", default=None)


class BlockManagerId(_Event, kw_only=True):
    executor_id: str = field(name="Executor ID", default="")
    host: str = field(name="Host", default="")


class BlockManagerAdded(
    _Event, kw_only=True, tag_field="Event", tag="SparkListenerBlockManagerAdded"
):
    block_manager: BlockManagerId = field(name="Block Manager ID", default_factory=BlockManagerId)
    max_memory: Long | None = field(name="Maximum Memory", default=None)
    timestamp: Long | None = field(name="Timestamp", default=None)


class StorageLevelJson(_Event, kw_only=True):
    use_disk: bool = field(name="Use Disk", default=False)
    use_memory: bool = field(name="Use Memory", default=False)


class RddInfoJson(_Event, kw_only=True):
    rdd_id: Long = field(name="RDD ID")
    name: str = field(name="Name", default="")
    scope: str | None = field(name="Scope", default=None)
    callsite: str = field(name="Callsite", default="")
    parent_ids: list[Long] = field(name="Parent IDs", default_factory=list)
    storage_level: StorageLevelJson | None = field(name="Storage Level", default=None)
    num_partitions: Long = field(name="Number of Partitions", default=0)


class AccumulableJson(_Event, kw_only=True):
    acc_id: Long = field(name="ID")


class StageInfoJson(_Event, kw_only=True):
    stage_id: Long = field(name="Stage ID")
    attempt: Long = field(name="Stage Attempt ID", default=0)
    name: str = field(name="Stage Name", default="")
    num_tasks: Long = field(name="Number of Tasks", default=0)
    rdd_info: list[RddInfoJson] = field(name="RDD Info", default_factory=list)
    parent_ids: list[Long] | None = field(name="Parent IDs", default=None)
    details: str = field(name="Details", default="")
    submission_time: Long | None = field(name="Submission Time", default=None)
    completion_time: Long | None = field(name="Completion Time", default=None)
    failure_reason: str | None = field(name="Failure Reason", default=None)
    accumulables: list[AccumulableJson] = field(name="Accumulables", default_factory=list)


class JobStart(_Event, kw_only=True, tag_field="Event", tag="SparkListenerJobStart"):
    job_id: Long = field(name="Job ID")
    submission_time: Long | None = field(name="Submission Time", default=None)
    stage_infos: list[StageInfoJson] = field(name="Stage Infos", default_factory=list)
    stage_ids: list[Long] = field(name="Stage IDs", default_factory=list)
    properties: dict[str, Any] | None = field(name="Properties", default=None)


class JobResultJson(_Event, kw_only=True):
    result: str = field(name="Result", default="")
    exception: Any = field(name="Exception", default=None)


class JobEnd(_Event, kw_only=True, tag_field="Event", tag="SparkListenerJobEnd"):
    job_id: Long = field(name="Job ID")
    completion_time: Long | None = field(name="Completion Time", default=None)
    job_result: JobResultJson = field(name="Job Result", default_factory=JobResultJson)


class StageSubmitted(_Event, kw_only=True, tag_field="Event", tag="SparkListenerStageSubmitted"):
    stage_info: StageInfoJson = field(name="Stage Info")


class StageCompleted(_Event, kw_only=True, tag_field="Event", tag="SparkListenerStageCompleted"):
    stage_info: StageInfoJson = field(name="Stage Info")


class TaskInfoJson(_Event, kw_only=True):
    task_id: Long = field(name="Task ID")
    index: Long = field(name="Index", default=0)
    attempt: Long = field(name="Attempt", default=0)
    launch_time: Measured = field(name="Launch Time", default=0)
    executor_id: str = field(name="Executor ID", default="")
    host: str = field(name="Host", default="")
    locality: str = field(name="Locality", default="")
    speculative: bool = field(name="Speculative", default=False)
    getting_result_time: Measured = field(name="Getting Result Time", default=0)
    finish_time: Measured = field(name="Finish Time", default=0)
    failed: bool = field(name="Failed", default=False)
    killed: bool = field(name="Killed", default=False)


class TaskStart(_Event, kw_only=True, tag_field="Event", tag="SparkListenerTaskStart"):
    stage_id: Long = field(name="Stage ID")
    stage_attempt: Long = field(name="Stage Attempt ID", default=0)
    task_info: TaskInfoJson = field(name="Task Info")


class ShuffleReadJson(_Event, kw_only=True):
    remote_bytes: Measured = field(name="Remote Bytes Read", default=0)
    local_bytes: Measured = field(name="Local Bytes Read", default=0)
    fetch_wait: Measured = field(name="Fetch Wait Time", default=0)
    records: Measured = field(name="Total Records Read", default=0)


class ShuffleWriteJson(_Event, kw_only=True):
    bytes_written: Measured = field(name="Shuffle Bytes Written", default=0)
    write_time_ns: Measured = field(name="Shuffle Write Time", default=0)
    records: Measured = field(name="Shuffle Records Written", default=0)


class InputJson(_Event, kw_only=True):
    bytes_read: Measured = field(name="Bytes Read", default=0)
    records: Measured = field(name="Records Read", default=0)


class OutputJson(_Event, kw_only=True):
    bytes_written: Measured = field(name="Bytes Written", default=0)
    records: Measured = field(name="Records Written", default=0)


class TaskMetricsJson(_Event, kw_only=True):
    deserialize_time: Measured = field(name="Executor Deserialize Time", default=0)
    run_time: Measured = field(name="Executor Run Time", default=0)
    cpu_time_ns: Measured | None = field(name="Executor CPU Time", default=None)
    result_size: Measured = field(name="Result Size", default=0)
    gc_time: Measured = field(name="JVM GC Time", default=0)
    result_serialization_time: Measured = field(name="Result Serialization Time", default=0)
    memory_spilled: Measured = field(name="Memory Bytes Spilled", default=0)
    disk_spilled: Measured = field(name="Disk Bytes Spilled", default=0)
    peak_execution_memory: Measured = field(name="Peak Execution Memory", default=0)
    shuffle_read: ShuffleReadJson | None = field(name="Shuffle Read Metrics", default=None)
    shuffle_write: ShuffleWriteJson | None = field(name="Shuffle Write Metrics", default=None)
    input: InputJson | None = field(name="Input Metrics", default=None)
    output: OutputJson | None = field(name="Output Metrics", default=None)


class TaskEndReasonJson(_Event, kw_only=True):
    reason: str = field(name="Reason", default="")
    class_name: str | None = field(name="Class Name", default=None)
    description: str | None = field(name="Description", default=None)
    kill_reason: str | None = field(name="Kill Reason", default=None)
    loss_reason: str | None = field(name="Loss Reason", default=None)
    message: str | None = field(name="Message", default=None)


class TaskExecutorMetricsJson(_Event, kw_only=True):
    """The executor's peak memory metrics as of a task's end (Spark 3.0+): only the heap's."""

    jvm_heap: Measured = field(name="JVMHeapMemory", default=0)


class TaskEnd(_Event, kw_only=True, tag_field="Event", tag="SparkListenerTaskEnd"):
    stage_id: Long = field(name="Stage ID")
    stage_attempt: Long = field(name="Stage Attempt ID", default=0)
    task_type: str = field(name="Task Type", default="")
    reason: TaskEndReasonJson = field(name="Task End Reason", default_factory=TaskEndReasonJson)
    task_info: TaskInfoJson = field(name="Task Info")
    metrics: TaskMetricsJson | None = field(name="Task Metrics", default=None)
    executor_metrics: TaskExecutorMetricsJson | None = field(
        name="Task Executor Metrics", default=None
    )


class SqlMetricJson(_Event, kw_only=True):
    name: str = ""
    accumulator_id: Long = field(name="accumulatorId", default=-1)


class SparkPlanInfoJson(_Event, kw_only=True):
    node_name: str = field(name="nodeName", default="")
    simple_string: str = field(name="simpleString", default="")
    children: list[SparkPlanInfoJson] = field(default_factory=list)
    metrics: list[SqlMetricJson] = field(default_factory=list)


class SqlExecutionStart(
    _Event, kw_only=True, tag_field="Event", tag=SQL_PREFIX + "SparkListenerSQLExecutionStart"
):
    execution_id: Long = field(name="executionId")
    description: str = ""
    plan_info: SparkPlanInfoJson | None = field(name="sparkPlanInfo", default=None)
    time: Long = 0
    modified_configs: dict[str, str] = field(name="modifiedConfigs", default_factory=dict)
    """SQL settings the session changed from the application's (Spark 3.4+): the settings
    the query ran with, beside the environment update's."""


class SqlExecutionEnd(
    _Event, kw_only=True, tag_field="Event", tag=SQL_PREFIX + "SparkListenerSQLExecutionEnd"
):
    execution_id: Long = field(name="executionId")
    time: Long = 0
    error_message: str | None = field(name="errorMessage", default=None)


class SqlAdaptiveUpdate(
    _Event,
    kw_only=True,
    tag_field="Event",
    tag=SQL_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate",
):
    execution_id: Long = field(name="executionId")
    plan_info: SparkPlanInfoJson | None = field(name="sparkPlanInfo", default=None)


class DriverAccumUpdates(
    _Event, kw_only=True, tag_field="Event", tag=SQL_PREFIX + "SparkListenerDriverAccumUpdates"
):
    """Values of plan metrics set on the driver: a scan's files and bytes, an exchange's
    partition count, AQE's shuffle reads, a broadcast's size."""

    execution_id: Long = field(name="executionId")
    accum_updates: list[tuple[Long, Long]] = field(name="accumUpdates", default_factory=list)


EVENT_TYPES: dict[str, type[_Event]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (
        LogStart,
        ApplicationStart,
        ApplicationEnd,
        EnvironmentUpdate,
        ExecutorAdded,
        ExecutorRemoved,
        BlockManagerAdded,
        JobStart,
        JobEnd,
        StageSubmitted,
        StageCompleted,
        TaskStart,
        TaskEnd,
        SqlExecutionStart,
        SqlExecutionEnd,
        SqlAdaptiveUpdate,
        DriverAccumUpdates,
    )
}
"""Events the DAG is built from; other events are counted, not decoded."""

PASSIVE_EVENTS: tuple[str, ...] = (
    "SparkListenerTaskGettingResult",
    "SparkListenerBlockManagerRemoved",
    "SparkListenerBlockUpdated",
    "SparkListenerUnpersistRDD",
    "SparkListenerExecutorMetricsUpdate",
    "SparkListenerStageExecutorMetrics",
    "SparkListenerSpeculativeTaskSubmitted",
    "SparkListenerResourceProfileAdded",
    "SparkListenerMiscellaneousProcessAdded",
    "SparkListenerUnschedulableTaskSetAdded",
    "SparkListenerUnschedulableTaskSetRemoved",
    "SparkListenerExecutorBlacklisted",
    "SparkListenerExecutorUnblacklisted",
    "SparkListenerNodeBlacklisted",
    "SparkListenerNodeUnblacklisted",
    "SparkListenerExecutorBlacklistedForStage",
    "SparkListenerNodeBlacklistedForStage",
    "SparkListenerExecutorExcluded",
    "SparkListenerExecutorUnexcluded",
    "SparkListenerNodeExcluded",
    "SparkListenerNodeUnexcluded",
    "SparkListenerExecutorExcludedForStage",
    "SparkListenerNodeExcludedForStage",
    SQL_PREFIX + "SparkListenerSQLAdaptiveSQLMetricUpdates",
)
"""Standard events the DAG does not need; in the block decoder they decode to empty
tagged structs (their fields are skipped) so a block of lines stays one C call."""

_PASSIVE_TYPES = tuple(
    msgspec.defstruct(
        "Passive" + name.rsplit(".", 1)[-1],
        [],
        bases=(_Event,),
        tag_field="Event",
        tag=name,
        kw_only=True,
    )
    for name in PASSIVE_EVENTS
)
PASSIVE_TYPE_NAMES: dict[type, str] = {t: str(t.__struct_config__.tag) for t in _PASSIVE_TYPES}

BLOCK_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
    Union[tuple(EVENT_TYPES.values()) + _PASSIVE_TYPES]  # noqa: UP007
)
"""Decodes a whole block of lines (`decode_lines`) when every line is a standard event;
a block with anything else falls back to line-by-line decoding."""

DECODERS: dict[bytes, msgspec.json.Decoder[Any]] = {
    name.encode(): msgspec.json.Decoder(cls) for name, cls in EVENT_TYPES.items()
}
HEADER_DECODER: msgspec.json.Decoder[EventHeader] = msgspec.json.Decoder(EventHeader)

EVENT_PREFIX = b'{"Event":"'


def event_name(line: bytes) -> bytes:
    """The event's type name, read without decoding the line when Spark's layout allows.

    Spark writes ``{"Event":"<name>",...`` first on every line; other writers (or a
    hand-edited log) may not, and then the header is decoded properly. Raises
    ``msgspec.DecodeError`` for a line that is not a JSON event.
    """
    if line.startswith(EVENT_PREFIX):
        end = line.find(b'"', 10)
        if end > 10:
            return line[10:end]
    return HEADER_DECODER.decode(line).Event.encode()


_SPARK_NAMESPACE = "org.apache.spark."


def is_known_event(name: str) -> bool:
    """Whether Spark itself writes events of this type (any version, any module).

    Events of Spark's own modules are named by class in the ``org.apache.spark`` namespace
    (SQL, streaming, the thrift server, Connect); core events by their short name. Anything
    else comes from a custom listener or a damaged line.
    """
    return (
        name in EVENT_TYPES
        or name in PASSIVE_EVENTS
        or name.startswith(_SPARK_NAMESPACE)
        or name in _OTHER_CORE_EVENTS
    )


_OTHER_CORE_EVENTS = frozenset(
    {
        "SparkListenerBlockManagerRemoved",
        "SparkListenerEnvironmentUpdate",
        "SparkListenerExecutorResourceRequestsUpdated",
    }
)


_BEFORE_LOG_START = frozenset(
    "SparkListener" + name
    for name in (
        "ApplicationStart",
        "ApplicationEnd",
        "BlockManagerAdded",
        "BlockManagerRemoved",
        "EnvironmentUpdate",
        "ExecutorMetricsUpdate",
        "JobStart",
        "JobEnd",
        "StageSubmitted",
        "StageCompleted",
        "TaskStart",
        "TaskGettingResult",
        "TaskEnd",
        "UnpersistRDD",
    )
)
"""Every event Spark 1.0-1.2 wrote; those logs have no version line (SparkListenerLogStart
came with 1.3, as the first line of every log)."""


def unknown_version(event_counts: Mapping[str, int]) -> str:
    """What to say for a log without a version line: a log of Spark 1.2 or older holds only
    the events those versions wrote; any other event means a newer log whose first line
    (the version line) was lost."""
    if all(name in _BEFORE_LOG_START for name, n in event_counts.items() if n):
        return "unknown (log predates Spark 1.3)"
    return "unknown (the log's first line, which names the version, is missing)"
