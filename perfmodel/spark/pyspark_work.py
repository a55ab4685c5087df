"""PySpark work recognised in a bare event log, and the share of task time it hides.

Evidence. A Spark task that runs Python code hands rows to a separate Python worker
process (``PythonRunner``): the task thread blocks reading the worker's results while the
worker burns its own core. Spark's task metrics time only the task thread (its CPU time,
GC, shuffle waits), so the worker's work shows up as *unattributed* run time — run time
that no metric covers. The log names such stages in two places that need no samples:

* RDD names of the stage's operations: ``PythonRDD`` (``rdd.map(lambda ...)`` and every
  RDD API call in Python), ``PairwiseRDD`` (Python key/value shuffles);
* physical-plan operators (the operations' scope names and the SQL plan): ``BatchEvalPython``
  (row-at-a-time Python UDFs), ``ArrowEvalPython`` (``pandas_udf``), ``FlatMapGroupsInPandas``,
  ``MapInPandas``, ``FlatMapCoGroupsInPandas``, ``AggregateInPandas``, ``WindowInPandas``,
  ``MapInArrow``, ``PythonMapInArrow``, ``*InPandasWithState``.

A recognised stage's unattributed time is taken to be Python-worker time; an unrecognised
stage's stays unknown (the report says so, and the prediction's interval widens).

The workload class (`workload_class`) names the kind of Python work that dominates the
application's task time; prediction intervals are calibrated per class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel.dag.decomposition import decompose_table
from perfmodel.dag.model import ApplicationProfile, StageKey, StageNode

PYTHON_RDD_NAMES = ("PythonRDD", "PairwiseRDD", "PythonPartitioner")
"""RDD names of the RDD API's Python operations."""
PANDAS_OPERATORS = (
    "ArrowEvalPython",
    "FlatMapGroupsInPandas",
    "FlatMapCoGroupsInPandas",
    "MapInPandas",
    "AggregateInPandas",
    "WindowInPandas",
    "MapInArrow",
    "PythonMapInArrow",
    "FlatMapGroupsInPandasWithState",
    "ArrowEvalPythonUDTF",
)
"""Plan operators that run vectorised (Arrow/pandas) Python code."""
UDF_OPERATORS = ("BatchEvalPython", "BatchEvalPythonUDTF")
"""Plan operators that run row-at-a-time Python UDFs."""

PYTHON_RDD = "python-rdd"
PYTHON_UDF = "python-udf"
PANDAS = "pandas"
JVM = "jvm"
KINDS = (PYTHON_RDD, PYTHON_UDF, PANDAS)
"""Kinds of Python work, in the order a stage holding several is named by."""

WORKLOAD_CLASSES = ("python-rdd", "python-udf", "jvm-sql")
"""Classes prediction intervals are calibrated by (pandas work counts as ``python-udf``)."""


@dataclass(frozen=True, slots=True)
class PythonWork:
    """What the log shows of one stage attempt's Python work."""

    kind: str
    """``python-rdd``, ``python-udf``, ``pandas``; ``jvm`` when nothing Python was seen."""
    markers: tuple[str, ...]
    """The names that gave it away (RDD names, plan operators), sorted."""
    unattributed_share: float
    """Unattributed share of the stage's task run time (launch overheads excluded)."""

    @property
    def is_python(self) -> bool:
        return self.kind != JVM

    @property
    def evidence(self) -> str:
        if not self.markers:
            return "no Python operator in its RDD names or plan"
        return "the log names " + ", ".join(self.markers)


def _kind_of(marker: str) -> str:
    base = marker.split(" (")[0]
    if base in PYTHON_RDD_NAMES:
        return PYTHON_RDD
    if base in UDF_OPERATORS:
        return PYTHON_UDF
    return PANDAS


def _is_marker(name: str) -> str | None:
    """The Python marker a name is, without codegen ids (``ArrowEvalPython`` of
    ``ArrowEvalPython (3)``), or None."""
    base = name.split(" (")[0].strip()
    if base in PYTHON_RDD_NAMES or base in UDF_OPERATORS or base in PANDAS_OPERATORS:
        return base
    return None


def stage_markers(profile: ApplicationProfile) -> dict[StageKey, set[str]]:
    """Python markers per stage attempt: its operations' names and scopes, and the plan
    operators the SQL plan links to it (by the metric ids the stage updated)."""
    out: dict[StageKey, set[str]] = {}
    for key, stage in profile.stages.items():
        found = {
            m
            for op in stage.op_nodes
            for m in (_is_marker(op.name), _is_marker(op.scope_name))
            if m
        }
        if found:
            out[key] = found
    for query in profile.queries.values():
        if query.plan is None:
            continue
        for node in query.plan.walk():
            marker = _is_marker(node.name)
            if marker is None:
                continue
            for key in node.stage_keys:
                out.setdefault(key, set()).add(marker)
    return out


@dataclass(frozen=True, slots=True)
class StageSums:
    """Per stage attempt (in ``profile.stages`` order), sums over its ended attempts (ms),
    from one decomposition of the application's task table."""

    keys: list[StageKey]
    bounds: np.ndarray
    """Row offsets into the app task table: stage i holds rows bounds[i]:bounds[i + 1]."""
    thread: np.ndarray
    """CPU + GC time of the task threads."""
    unattributed: np.ndarray
    run: np.ndarray
    """Run time: thread + shuffle waits + unattributed."""


def stage_sums(profile: ApplicationProfile) -> StageSums:
    """`StageSums` of every stage attempt, with one pass over the task table (no per-stage
    numpy calls: a log of 100,000 stages costs the same few array operations)."""
    parts = decompose_table(profile.task_table())
    sizes = np.array([len(s.table) for s in profile.stages.values()], dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    ended = parts.ended
    thread = np.where(ended, parts.cpu + parts.gc, 0.0)
    unattributed = np.where(ended, parts.unattributed, 0.0)
    waits = np.where(ended, parts.network + parts.disk, 0.0)

    def per_stage(values: np.ndarray) -> np.ndarray:
        cum = np.concatenate([[0.0], np.cumsum(values)])
        return cum[bounds[1:]] - cum[bounds[:-1]]

    t, u = per_stage(thread), per_stage(unattributed)
    return StageSums(list(profile.stages), bounds, t, u, t + u + per_stage(waits))


def python_work(
    profile: ApplicationProfile, sums: StageSums | None = None
) -> dict[StageKey, PythonWork]:
    """Every stage attempt with its Python kind, markers and unattributed share."""
    markers = stage_markers(profile)
    sums = sums or stage_sums(profile)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(sums.run > 0, sums.unattributed / sums.run, 0.0).tolist()
    out: dict[StageKey, PythonWork] = {}
    for key, share in zip(sums.keys, shares, strict=True):
        found = tuple(sorted(markers.get(key, ())))
        kinds = {_kind_of(m) for m in found}
        kind = next((k for k in KINDS if k in kinds), JVM)
        out[key] = PythonWork(kind, found, share)
    return out


def unattributed_share(stage: StageNode) -> float:
    """Unattributed share of a stage's task run time (0 for a stage without tasks)."""
    parts = decompose_table(stage.table)
    ended = parts.ended
    if not ended.any():
        return 0.0
    unattributed = float(parts.unattributed[ended].sum())
    run = unattributed + float((parts.cpu + parts.gc + parts.network + parts.disk)[ended].sum())
    return unattributed / run if run > 0 else 0.0


def workload_class(profile: ApplicationProfile, sums: StageSums | None = None) -> str:
    """The application's class for calibrated intervals: the Python kind holding most task
    run time (``pandas`` counts as ``python-udf``), else ``jvm-sql``."""
    sums = sums or stage_sums(profile)
    work = python_work(profile, sums)
    time_by_kind: dict[str, float] = {}
    for key, total in zip(sums.keys, sums.run.tolist(), strict=True):
        w = work[key]
        kind = PYTHON_UDF if w.kind == PANDAS else w.kind
        time_by_kind[kind] = time_by_kind.get(kind, 0.0) + total
    python = {k: v for k, v in time_by_kind.items() if k != JVM and v > 0}
    if not python:
        return "jvm-sql"
    jvm = time_by_kind.get(JVM, 0.0)
    best = max(python.items(), key=lambda kv: kv[1])
    # A job whose Python stages hold a sliver of its time is still a JVM job.
    if best[1] < 0.2 * (jvm + sum(python.values())):
        return "jvm-sql"
    return best[0]
