"""The framework-independent execution profile: application → jobs → stages → operations/tasks.

Every front end (Spark first) builds these plain data classes; everything downstream
(attribution of stack samples, resource inference, what-if replay, reports) reads only
them. Nothing here knows about a particular framework's event names, so a second front
end only has to fill the same fields. Times are epoch milliseconds (floats where
sub-millisecond precision matters); durations are milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from perfmodel.dag.tasks import TaskRun, TaskTable, concat_tables

if TYPE_CHECKING:
    from perfmodel.profile.jvm_cpu import JvmCpu
    from perfmodel.profile.thread_cpu import ThreadCpu

StageKey = tuple[int, int]
"""(stage id, attempt number): a stage attempt is the unit that runs tasks."""


@dataclass(slots=True)
class OperationNode:
    """A narrow-dependency operation inside a stage (an RDD in Spark's terms)."""

    op_id: int
    name: str
    scope_name: str = ""
    call_site: str = ""
    parent_ids: list[int] = field(default_factory=list)
    num_partitions: int = 0
    cached: bool = False
    """True when the operation's output was persisted (storage level uses memory or disk)."""


@dataclass(frozen=True, slots=True)
class TaskInputs:
    """Which tasks of earlier stages each task of a stage read, where the framework records
    it task by task (a Dask task's dependencies), as arrays over the stage's task rows: task
    row ``i`` read row ``rows[j]`` of stage ``stage_ids[j]``'s table for ``j`` in
    ``ptr[i]:ptr[i + 1]``. Where a stage's tasks can only start once a whole parent stage
    has ended (Spark's shuffle), the stage barrier says so and a stage has none."""

    ptr: np.ndarray
    stage_ids: np.ndarray
    rows: np.ndarray
    lag_ms: np.ndarray
    """Per task row, from the end of the last of its inputs to when it was given to a worker
    and could start (a scheduler's round trip; 0 where not recorded): a latency that more
    threads hide but do not shorten."""


@dataclass(slots=True)
class StageNode:
    """One attempt of a stage: a DAG of narrow operations run by a set of parallel tasks."""

    stage_id: int
    attempt: int
    name: str
    num_tasks: int
    parent_stage_ids: list[int] = field(default_factory=list)
    job_ids: list[int] = field(default_factory=list)
    submit_ms: float | None = None
    complete_ms: float | None = None
    status: str = "PENDING"
    """COMPLETE, FAILED, RUNNING (submitted, never completed), SKIPPED (declared by a job
    that reused earlier output instead of running it: no tasks), PENDING (declared, the
    log ends before it ran)."""
    failure_reason: str | None = None
    details: str = ""
    op_nodes: list[OperationNode] = field(default_factory=list)
    """Its operations (RDDs), in the order the log lists them; each names its parents, so
    the list is the stage's operation graph (edges parent → child via `parent_ids`)."""
    ops_cache: dict[int, OperationNode] | None = field(default=None, repr=False, compare=False)
    """`operations`, once asked for: a log of 100,000 stages should not pay for an index a
    stage at load unless something looks its operations up by id."""
    table: TaskTable = field(default_factory=TaskTable.empty)
    """Its task attempts as columns, in launch order (see `perfmodel.dag.tasks`)."""
    inputs: TaskInputs | None = None
    """The parent tasks each task read, where the framework records them; None where a task
    depends on its parent stages whole (see `TaskInputs`)."""
    accumulable_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Metric ids updated by this stage, sorted, unique (an array: 8 bytes an id, where a
    set took ~60); links query-plan operators to the stage."""

    @property
    def tasks(self) -> list[TaskRun]:
        """Its task attempts as objects, made on each access from `table` (cold paths)."""
        return self.table.runs()

    @tasks.setter
    def tasks(self, runs: list[TaskRun]) -> None:
        self.table = TaskTable.from_runs(runs)

    @property
    def key(self) -> StageKey:
        return (self.stage_id, self.attempt)

    @property
    def duration_ms(self) -> float:
        """Submit-to-complete wall time, falling back to the span of its tasks."""
        if self.submit_ms is not None and self.complete_ms is not None:
            return max(0.0, self.complete_ms - self.submit_ms)
        table = self.table
        if not len(table):
            return 0.0
        finish = table.finish_ms
        if np.isnan(finish).all():
            return 0.0
        return max(0.0, float(np.nanmax(finish)) - float(table.launch_ms.min()))

    @property
    def operations(self) -> dict[int, OperationNode]:
        """Its operations by op id, in log order (a repeated id keeps its first place and its
        last entry, as the log's later mention is the fuller one). Made on first access from
        `op_nodes`."""
        if self.ops_cache is None:
            self.ops_cache = {op.op_id: op for op in self.op_nodes}
        return self.ops_cache

    def operation(self, op_id: int) -> OperationNode:
        return self.operations[op_id]


@dataclass(slots=True)
class JobNode:
    """A unit of work the driver submitted (an action): a DAG of stages."""

    job_id: int
    stage_ids: list[int] = field(default_factory=list)
    submit_ms: float | None = None
    complete_ms: float | None = None
    result: str = "RUNNING"
    """SUCCEEDED, FAILED, RUNNING (never ended)."""
    failure_reason: str | None = None
    query_id: int | None = None
    description: str = ""

    @property
    def duration_ms(self) -> float:
        if self.submit_ms is None or self.complete_ms is None:
            return 0.0
        return max(0.0, self.complete_ms - self.submit_ms)


@dataclass(slots=True)
class PlanNode:
    """An operator of a query's physical plan."""

    name: str
    description: str = ""
    children: list[PlanNode] = field(default_factory=list)
    metric_ids: dict[int, str] = field(default_factory=dict)
    """Accumulator id → metric name; the ids that stages report link operator to stage."""
    stage_keys: list[StageKey] = field(default_factory=list)

    def walk(self) -> list[PlanNode]:
        """All operators, this one first (pre-order), without recursion limits."""
        out: list[PlanNode] = []
        stack: list[PlanNode] = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass(slots=True)
class QueryNode:
    """A declarative query (SQL/DataFrame execution) and the jobs that ran it."""

    query_id: int
    description: str = ""
    start_ms: float | None = None
    end_ms: float | None = None
    plan: PlanNode | None = None
    job_ids: list[int] = field(default_factory=list)
    error: str | None = None
    driver_metrics: dict[int, int] = field(default_factory=dict)
    """Plan metric values the driver set (accumulator id → value; a metric sent with several
    values in one update, such as a shuffle read's partition sizes, holds their sum)."""
    modified_configs: dict[str, str] = field(default_factory=dict)
    """Settings the session changed for this query from the application's (Spark 3.4+)."""

    @property
    def duration_ms(self) -> float:
        if self.start_ms is None or self.end_ms is None:
            return 0.0
        return max(0.0, self.end_ms - self.start_ms)


@dataclass(slots=True)
class ExecutorInfo:
    """A worker process with task slots."""

    executor_id: str
    host: str
    cores: int | None = None
    memory_bytes: int | None = None
    """Storage memory the block manager reported (an upper bound for caching)."""
    added_ms: float | None = None
    removed_ms: float | None = None
    removed_reason: str | None = None
    peak_heap_bytes: int | None = None
    """The most JVM heap it had in use (``JVMHeapMemory`` of its tasks' ends, Spark 3.0+;
    garbage not yet collected included), None where the log does not say."""


@dataclass(slots=True)
class ResourceConfig:
    """The resources the application ran with, as far as the log tells.

    ``sources`` says, per field, where the value came from ("log: spark.executor.cores",
    "observed: max concurrent tasks", "default"), so reports can state what was assumed.
    """

    master: str = ""
    executor_instances: int | None = None
    executor_cores: int | None = None
    executor_memory_bytes: int | None = None
    driver_memory_bytes: int | None = None
    dynamic_allocation: bool = False
    local_mode: bool = False
    task_cpus: int = 1
    total_slots: int | None = None
    hosts: int | None = None
    memory_fraction: float | None = None
    """The share of (heap − 300 MiB) for execution and storage memory, where the log set it
    to a value the framework accepts (None: the framework's default)."""
    hosts_fixed: bool = False
    """True when the executors ran on a fixed set of machines that a what-if keeps (a local
    cluster of worker processes on the recording host): more executors then share those
    hosts' cores instead of bringing hosts of their own."""
    executors_exchange_data: bool = False
    """True when an executor fetches every input another executor holds over a socket, on
    the same host too (Dask's workers); False where executors on one host read each other's
    output locally (Spark's host-local shuffle reads), so that only other hosts are remote."""
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class HostUsage:
    """Cores the application's processes kept busy over time, measured from outside.

    Task metrics only see task threads; this sees everything the run used on its host —
    Python workers, GC and JIT threads, the driver — so the replay can tell a task's real
    CPU demand from its thread's CPU time, and whether the host was saturated.
    """

    t_ms: list[float]
    """End of each sampling interval (epoch ms, ascending)."""
    cores: list[float]
    """Cores busy on average over the interval that ends at the same index."""


class StageGraph:
    """Stage ids and their parent → child edges: the part of networkx's DiGraph that the
    stage DAG needs (same method names), as two dicts of insertion-ordered dicts. Importing
    networkx for it cost ~0.2 s of every diagnosis's start-up, and its per-node attribute
    dicts ~1 KB a stage."""

    __slots__ = ("_parents", "_children")

    def __init__(self) -> None:
        self._parents: dict[int, dict[int, None]] = {}
        self._children: dict[int, dict[int, None]] = {}

    def add_node(self, node: int) -> None:
        if node not in self._parents:
            self._parents[node] = {}
            self._children[node] = {}

    def add_edge(self, parent: int, child: int) -> None:
        self.add_node(parent)
        self.add_node(child)
        self._parents[child][parent] = None
        self._children[parent][child] = None

    def __contains__(self, node: object) -> bool:
        return node in self._parents

    def __iter__(self) -> Iterator[int]:
        return iter(self._parents)

    def __len__(self) -> int:
        return len(self._parents)

    @property
    def nodes(self) -> list[int]:
        return list(self._parents)

    def number_of_nodes(self) -> int:
        return len(self._parents)

    def number_of_edges(self) -> int:
        return sum(len(p) for p in self._parents.values())

    def has_node(self, node: int) -> bool:
        return node in self._parents

    def has_edge(self, parent: int, child: int) -> bool:
        return parent in self._parents.get(child, ())

    def predecessors(self, node: int) -> Iterator[int]:
        return iter(self._parents[node])

    def successors(self, node: int) -> Iterator[int]:
        return iter(self._children[node])

    def edges(self) -> list[tuple[int, int]]:
        return [(p, c) for p, children in self._children.items() for c in children]


SHARED_LOCK = "executor_threads_share_lock"
"""`ApplicationProfile.extra` key a front end sets (True) when an executor's task threads
are threads of one Python process, which share its interpreter lock
(`perfmodel.simulate.interpreter_lock`)."""
LOCK_HELD_MS = "lock_held_ms"
"""`ApplicationProfile.extra` key: per stage id, how long the lock was held in its tasks'
processes while they ran (ms), where the front end probed it; stages it did not probe are
absent."""


@dataclass(slots=True)
class ApplicationProfile:
    """The whole hierarchical DAG execution profile of one application run."""

    app_id: str
    app_name: str = ""
    attempt: str | None = None
    framework: str = ""
    framework_version: str = ""
    start_ms: float | None = None
    end_ms: float | None = None
    complete: bool = False
    user: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    resources: ResourceConfig = field(default_factory=ResourceConfig)
    executors: dict[str, ExecutorInfo] = field(default_factory=dict)
    jobs: dict[int, JobNode] = field(default_factory=dict)
    stages: dict[StageKey, StageNode] = field(default_factory=dict)
    stage_graph: StageGraph = field(default_factory=lambda: StageGraph())
    """Stage ids, edge parent → child (the child reads the parent's shuffle output)."""
    queries: dict[int, QueryNode] = field(default_factory=dict)
    source: str = ""
    """Where the profile was read from (file or directory)."""
    event_count: int = 0
    event_counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    host_usage: HostUsage | None = None
    """Measured CPU use of the run's processes (a recorded bundle has it), else None."""
    thread_cpu: ThreadCpu | None = None
    """Measured CPU per thread kind and executor (bundles recorded with it), else None."""
    jvm_cpu: JvmCpu | None = None
    """Each recorded JVM's whole CPU from JFR (bundles recorded with it), else None."""
    task_thread_only: bool = False
    """True when a task's work all runs in its task thread (a Dask task's function), so
    nothing beside it (a PySpark Python worker, the JVM's GC and JIT threads) is left for the
    bare-log estimators (`perfmodel.spark.bare_demand`) to guess."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def duration_ms(self) -> float:
        if self.start_ms is None or self.end_ms is None:
            return 0.0
        return max(0.0, self.end_ms - self.start_ms)

    def tasks(self) -> list[TaskRun]:
        """All task attempts of all stage attempts, as objects (cold paths: see `task_table`)."""
        return self.task_table().runs()

    def task_table(self) -> TaskTable:
        """All task attempts of all stage attempts as one table, in stage order (a view of
        the built profile's columns, no copy)."""
        return concat_tables([s.table for s in self.stages.values()])

    def ended_total(self, keys: Iterable[StageKey], *names: str) -> float:
        """The sum of task columns over the attempts that ended (`TaskTable.total`) of the
        stages ``keys``; a key the profile does not hold adds nothing."""
        return sum(
            (self.stages[key].table.total(*names) for key in keys if key in self.stages), 0.0
        )

    def latest_attempts(self) -> dict[int, StageNode]:
        """For each stage id, its last attempt: the one whose output later stages used."""
        out: dict[int, StageNode] = {}
        for stage in self.stages.values():
            prev = out.get(stage.stage_id)
            if prev is None or stage.attempt > prev.attempt:
                out[stage.stage_id] = stage
        return out
