"""Attaching sampled call stacks to the DAG: per task, per stage, and per operation.

Samples arrive as the bundle's samples table (one row per sample, frames root first; see
docs/bundle.md). JVM samples that the Spark plugin tied to a task carry its id already and are
taken as is ("plugin"). Everything else is placed by time: a sample of an executor's task thread
or Python worker at time t belongs to the task that executor was running at t if there was exactly
one ("window-task"), to the stage if all tasks running then were of one stage ("window-stage"),
and is left unattributed otherwise. Samples of a recording that had plugin events but fell outside
every task span are *not* window-placed: the plugin already said no task ran on that thread.

Operations (RDDs) are found from call sites: a stage's operation whose call site names the
file (and line) of a sampled frame gets that sample — possible for Python functions and for JVM
classes named after their source file, not for SQL operators whose call site is Spark's own code.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageKey, StageNode
from perfmodel.dag.tasks import TaskRun

if TYPE_CHECKING:
    import pyarrow as pa  # imported where used: plain event logs never need it (~0.1 s)

TASK_THREAD_PREFIX = "Executor task launch worker"

_CALL_SITE = re.compile(r"^(?P<op>\S+) at (?P<file>.+?):(?P<line>\d+)$")
_PY_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*)\)$")


@dataclass(slots=True)
class FunctionStat:
    """A function's share of a set of samples: as the leaf (self) and anywhere (total)."""

    name: str
    self_samples: int
    total_samples: int
    self_ms: float
    total_ms: float


@dataclass(slots=True)
class CallProfile:
    """Sampled call profile of one task, stage or operation.

    ``weight_ms`` is thread time (samples weighted by what each stands for, see
    docs/bundle.md); ``stacks`` maps root-first stacks to sample counts.
    """

    samples: int = 0
    weight_ms: float = 0.0
    by_kind: Counter[str] = field(default_factory=Counter)
    self_samples: Counter[str] = field(default_factory=Counter)
    total_samples: Counter[str] = field(default_factory=Counter)
    self_ms: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    total_ms: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    kind_stacks: Counter[tuple[str, tuple[str, ...]]] = field(default_factory=Counter)
    """Sample counts by (kind, stack): what ran on CPU (``java``) apart from what waited."""

    @property
    def stacks(self) -> Counter[tuple[str, ...]]:
        """Sample counts by stack, of every kind (built on each call from `kind_stacks`)."""
        out: Counter[tuple[str, ...]] = Counter()
        for (_, frames), count in self.kind_stacks.items():
            out[frames] += count
        return out

    def add(self, frames: tuple[str, ...], kind: str, count: int, weight_ms: float) -> None:
        self.samples += count
        self.weight_ms += weight_ms
        self.by_kind[kind] += count
        self.kind_stacks[(kind, frames)] += count
        if frames:
            self.self_samples[frames[-1]] += count
            self.self_ms[frames[-1]] += weight_ms
        for name in set(frames):
            self.total_samples[name] += count
            self.total_ms[name] += weight_ms

    def top(self, n: int = 10, by: str = "self") -> list[FunctionStat]:
        """The ``n`` functions with the most thread time as leaf (``by="self"``) or anywhere.

        Ranked by time, not by sample count: a sample stands for as much thread time as its
        kind says (a JFR native sample for the native period times the threads in native code,
        a py-spy sample for as long as its stack lasted), so counts of different kinds do not
        compare. Equal times are ranked by samples, then by name.
        """
        if by == "self":
            ms, count = self.self_ms, self.self_samples
        else:
            ms, count = self.total_ms, self.total_samples
        ranked = sorted(count, key=lambda name: (-ms.get(name, 0.0), -count[name], name))
        return [
            FunctionStat(
                name,
                self.self_samples.get(name, 0),
                self.total_samples.get(name, 0),
                self.self_ms.get(name, 0.0),
                self.total_ms.get(name, 0.0),
            )
            for name in ranked[:n]
        ]


OpKey = tuple[StageKey, int]


@dataclass(slots=True)
class SampleProfile:
    """Stack samples of one application, attributed to its tasks, stages and operations."""

    tasks: dict[int, CallProfile] = field(default_factory=dict)
    stages: dict[StageKey, CallProfile] = field(default_factory=dict)
    operations: dict[OpKey, CallProfile] = field(default_factory=dict)
    outside: CallProfile = field(default_factory=CallProfile)
    """Samples in no task: driver code, Spark's own threads, idle workers."""
    attribution: Counter[str] = field(default_factory=Counter)
    """Samples per method: plugin, window-task, window-stage, outside."""
    warnings: list[str] = field(default_factory=list)

    def stage(self, key: StageKey) -> CallProfile:
        return self.stages.get(key, CallProfile())


def attribute_samples(profile: ApplicationProfile, samples: pa.Table) -> SampleProfile:
    """Attribute every sample of ``samples`` (bundle schema) to the DAG of ``profile``."""
    out = SampleProfile()
    n = samples.num_rows
    if n == 0:
        return out
    ts = samples.column("timestamp_ms").to_numpy()
    task = _int_column(samples, "task_id")
    stage = _int_column(samples, "stage_id")
    attempt = _int_column(samples, "stage_attempt")
    method = np.where(task >= 0, "plugin", "outside").astype(object)

    window_rows = _window_candidates(samples, task)
    all_runs = profile.tasks()  # made once: a bundle's tasks, grouped by executor below
    tasks_by_id = {t.task_id: t for t in all_runs}
    runs_of: dict[str, list[TaskRun]] = {}
    for t in all_runs:
        runs_of.setdefault(t.executor_id, []).append(t)
    if window_rows.size:
        executors = np.array(samples.column("executor_id").to_pylist(), dtype=object)
        for executor in {e for e in executors[window_rows] if e is not None}:
            rows = window_rows[executors[window_rows] == executor]
            runs = runs_of.get(executor, [])
            _place_by_window(rows, ts, runs, profile, task, stage, attempt, method)
    unknown = [int(t) for t in set(task[task >= 0].tolist()) if int(t) not in tasks_by_id]
    if unknown:
        out.warnings.append(
            f"{len(unknown)} task id(s) in the samples are not in the event log (a different "
            "run's recording?); their samples count for their stage only"
        )

    kinds = samples.column("kind").to_pylist()
    weights = samples.column("weight_ms").to_numpy()
    stack_ids = samples.column("stack_id").to_numpy()
    frames_of = _frames_by_stack(samples, stack_ids)
    op_finder = _OperationFinder(profile)

    groups: dict[tuple[int, int, int, int, str, str], list[float]] = {}
    for i in range(n):
        key = (int(stack_ids[i]), int(task[i]), int(stage[i]), int(attempt[i]), kinds[i], method[i])
        acc = groups.get(key)
        if acc is None:
            groups[key] = [1, float(weights[i])]
        else:
            acc[0] += 1
            acc[1] += float(weights[i])
    for (sid, task_id, stage_id, stage_attempt, kind, how), (n, weight) in groups.items():
        frames = frames_of[sid]
        count = int(n)
        out.attribution[how] += count
        if stage_id < 0:
            out.outside.add(frames, kind, count, weight)
            continue
        stage_key = (stage_id, stage_attempt)
        out.stages.setdefault(stage_key, CallProfile()).add(frames, kind, count, weight)
        if task_id >= 0:
            out.tasks.setdefault(task_id, CallProfile()).add(frames, kind, count, weight)
        node = profile.stages.get(stage_key)
        if node is not None:
            op = op_finder.find(node, frames, sid)
            if op is not None:
                out.operations.setdefault((stage_key, op), CallProfile()).add(
                    frames, kind, count, weight
                )
    if out.attribution.get("window-task") or out.attribution.get("window-stage"):
        out.warnings.append(
            "some samples were placed by time window per executor (no plugin events for them), "
            "which is exact only when one task ran at a time"
        )
    return out


def _int_column(table: pa.Table, name: str) -> np.ndarray:
    """A nullable integer column as int64 with -1 for null."""
    column = table.column(name).combine_chunks()
    return column.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _window_candidates(samples: pa.Table, task: np.ndarray) -> np.ndarray:
    """Rows to place by time: unplaced task-thread JVM samples from recordings without plugin
    events, and Python worker samples (not those of a worker idle between tasks)."""
    source = np.array(samples.column("source").to_pylist(), dtype=object)
    process = np.array(samples.column("process").to_pylist(), dtype=object)
    thread = np.array(samples.column("thread").to_pylist(), dtype=object)
    had_events = samples.column("task_events").to_numpy(zero_copy_only=False)
    is_task_thread = np.array([bool(t) and t.startswith(TASK_THREAD_PREFIX) for t in thread])
    jvm = (source == "jfr") & is_task_thread & ~had_events
    kind = np.array(samples.column("kind").to_pylist(), dtype=object)
    python = (process == "python worker") & (kind != "idle")
    return np.nonzero((task < 0) & (jvm | python))[0]


def _place_by_window(
    rows: np.ndarray,
    ts: np.ndarray,
    runs: list,
    profile: ApplicationProfile,
    task: np.ndarray,
    stage: np.ndarray,
    attempt: np.ndarray,
    method: np.ndarray,
) -> None:
    """Place samples by the tasks running on their executor (see module docstring).

    Uses difference arrays over time-sorted samples: the count, id sum and stage-code sums of
    the tasks covering each sample tell whether one task, one stage, or several were running.
    """
    if not runs or rows.size == 0:
        return
    order = rows[np.argsort(ts[rows], kind="stable")]
    times = ts[order]
    m = len(order)
    count = np.zeros(m + 1, dtype=np.int64)
    id_sum = np.zeros(m + 1, dtype=np.int64)
    code_sum = np.zeros(m + 1, dtype=np.float64)
    code_sq = np.zeros(m + 1, dtype=np.float64)
    codes: dict[StageKey, int] = {}
    end_default = profile.end_ms if profile.end_ms is not None else float(times.max())
    for run in runs:
        finish = run.finish_ms if run.finish_ms is not None else end_default
        lo = int(np.searchsorted(times, run.launch_ms, side="left"))
        hi = int(np.searchsorted(times, finish, side="right"))
        if lo >= hi:
            continue
        code = codes.setdefault((run.stage_id, run.stage_attempt), len(codes) + 1)
        for arr, value in ((count, 1), (id_sum, run.task_id), (code_sum, code), (code_sq, code**2)):
            arr[lo] += value
            arr[hi] -= value
    count = np.cumsum(count)[:m]
    id_sum = np.cumsum(id_sum)[:m]
    code_sum = np.cumsum(code_sum)[:m]
    code_sq = np.cumsum(code_sq)[:m]
    by_code = {c: k for k, c in codes.items()}
    one = count == 1
    same_stage = (count > 1) & np.isclose(code_sum**2, count * code_sq)
    for positions, how in ((np.nonzero(one)[0], "window-task"), (np.nonzero(same_stage)[0], "")):
        for p in positions:
            key = by_code[int(round(code_sum[p] / count[p]))]
            row = order[p]
            stage[row], attempt[row] = key
            if how:
                task[row] = id_sum[p]
                method[row] = how
            else:
                method[row] = "window-stage"


def _frames_by_stack(samples: pa.Table, stack_ids: np.ndarray) -> dict[int, tuple[str, ...]]:
    """Frames of each distinct stack, read once from its first row."""
    import pyarrow as pa

    unique, first = np.unique(stack_ids, return_index=True)
    chosen = samples.column("frames").take(pa.array(first))
    return {int(s): tuple(f) for s, f in zip(unique, chosen.to_pylist(), strict=True)}


class _OperationFinder:
    """Matches sampled frames to operations of a stage by their call sites."""

    def __init__(self, profile: ApplicationProfile) -> None:
        self.by_stage: dict[StageKey, list[tuple[str, int, int]]] = {}
        for key, node in profile.stages.items():
            sites = []
            for op_id, op in node.operations.items():
                match = _CALL_SITE.match(op.call_site or "")
                if match:
                    sites.append(
                        (os.path.basename(match.group("file")), int(match.group("line")), op_id)
                    )
            self.by_stage[key] = sites
        self.cache: dict[tuple[StageKey, int], int | None] = {}

    def find(self, node: StageNode, frames: tuple[str, ...], stack_id: int) -> int | None:
        cache_key = (node.key, stack_id)
        if cache_key not in self.cache:
            self.cache[cache_key] = self._find(node.key, frames)
        return self.cache[cache_key]

    def _find(self, key: StageKey, frames: tuple[str, ...]) -> int | None:
        sites = self.by_stage.get(key) or []
        if not sites:
            return None
        files = {f for f, _, _ in sites}
        for frame in reversed(frames):  # the innermost user frame decides
            name = next((f for f in _frame_files(frame) if f in files), None)
            if name is not None:
                candidates = [(line, op) for f, line, op in sites if f == name]
                # Several operations of one file: the one created by the earliest call site;
                # pipelined Python operations share it anyway.
                return min(candidates)[1]
        return None


def _frame_files(frame: str) -> tuple[str, ...]:
    """Possible source files of a frame: Python frames name theirs, JVM frames imply it by their
    top-level class name (Scala and Java name files after it)."""
    match = _PY_FRAME.match(frame)
    if match:
        return (os.path.basename(match.group("file")),)
    cls = frame.rsplit(".", 1)[0]
    simple = cls.rsplit(".", 1)[-1].split("$", 1)[0]
    return (f"{simple}.scala", f"{simple}.java") if simple else ()
