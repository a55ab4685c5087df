"""One log → its rows in every fleet table; the function both engines run per log.

Everything comes from the facade (`perfmodel.load` → `Analysis.diagnose` / `.predict`), so
a row's figures equal `perfmodel diagnose --json`'s and `perfmodel predict`'s for that log.
What the fleet adds is derived from the diagnosis and the profile the facade built:

* **held core-hours**: the cores the application held, times how long it held them. On a
  cluster, each executor's cores from its ``ExecutorAdded`` to its ``ExecutorRemoved``
  event (or the application's end), clipped to the application's run; in local mode (and
  for logs without executor events) the task slots × cores per task for the whole run.
* **busy core-hours**: every task attempt's wall time on its slot × cores per task.
* **wasted core-hours** = held − busy (never below 0): cores paid for that ran no task.
* **critical-path share**: the critical path's stage time ÷ the run; **driver-only
  share**: the critical path's gaps (no stage running: driver code, job submission,
  start-up) ÷ the run.
* **spill** / **skew** flags: some stage spilled to disk or memory; some stage's longest
  task ran ≥ 3× its median and ≥ 1 s (the rule the diagnosis' stage sentence uses).

Nothing raises: a log that cannot be analysed (unreadable, not a log, no event readable
at all, over the memory cap, or an analysis bug) becomes one ``errors`` row with its reason.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from perfmodel.dag.decomposition import COMPONENTS
from perfmodel.errors import PerfmodelError
from perfmodel.fleet.discover import LogRef
from perfmodel.fleet.limits import memory_cap
from perfmodel.profile.sources.stores import RemotePath, SourceOptions
from perfmodel.simulate.whatif import Change

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis
    from perfmodel.analysis.diagnosis import Diagnosis

SKEW_FACTOR = 3.0
SKEW_MIN_TASK_S = 1.0
"""A stage is skewed when its longest task ran this many times its median and at least
this long (as in the diagnosis' stage sentences)."""
MS_PER_HOUR = 3_600_000.0
ALERT_COLUMNS = (
    "where",
    "knob",
    "knob_kind",
    "suggestion",
    "predicted_s",
    "predicted_low_s",
    "predicted_high_s",
    "baseline_s",
    "not_predicted",
)
"""An alert's fields kept as columns of the findings table (docs/fleet.md)."""

Rows = dict[str, list[dict[str, Any]]]


def empty_rows() -> Rows:
    return {"apps": [], "stages": [], "findings": [], "predictions": [], "errors": []}


def _log_fields(ref: LogRef) -> dict[str, Any]:
    return {"log_path": ref.path, "log_size": ref.size, "log_mtime_ns": ref.mtime_ns}


def error_rows(ref: LogRef, kind: str, reason: str) -> Rows:
    rows = empty_rows()
    rows["errors"].append({**_log_fields(ref), "kind": kind, "reason": reason})
    return rows


_EXCERPT = re.compile(r"; line starts: '(?:[^'\\]|\\.)*'")


def without_excerpt(reason: str) -> str:
    """A reader's message without the quoted start of a line: the fleet's tables are shared
    with people who may not read the files themselves (a listing may name any file)."""
    return _EXCERPT.sub("", reason)


def analyse_log(
    ref: LogRef,
    scenarios: Sequence[Change] = (),
    *,
    memory_cap_bytes: int | None = None,
    read_path: str | None = None,
    max_decompressed_bytes: int | None = None,
    sources: SourceOptions | None = None,
) -> Rows:
    """The rows of one log. ``read_path`` is where its bytes are (a local copy of a remote
    log); ``ref.path`` is what the tables call it. ``sources`` says how to reach a remote
    log (an object store, HDFS, a History Server: `perfmodel.profile.sources`)."""
    try:
        with memory_cap(memory_cap_bytes):
            return _analyse(ref, scenarios, read_path or ref.path, max_decompressed_bytes, sources)
    except MemoryError:
        cap = f"{memory_cap_bytes / 2**20:.0f} MiB" if memory_cap_bytes else "the machine's"
        return error_rows(
            ref, "memory_cap", f"analysing the log needed more memory than the cap ({cap})"
        )
    except PerfmodelError as exc:
        return error_rows(ref, type(exc).__name__, without_excerpt(str(exc)))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return error_rows(ref, "OSError", f"{where}{exc.strerror or exc}")
    except Exception as exc:  # a bug in perfmodel: keep the run going, say where it was
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}"
        return error_rows(ref, "internal", f"{type(exc).__name__} at {where}: {exc}")


def _analyse(
    ref: LogRef,
    scenarios: Sequence[Change],
    read_path: str,
    max_decompressed: int | None,
    sources: SourceOptions | None = None,
) -> Rows:
    from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED, load, locate

    cap = DEFAULT_MAX_DECOMPRESSED if max_decompressed is None else max_decompressed
    log = locate(read_path, sources, max_decompressed_bytes=cap)
    if isinstance(log, RemotePath):  # the run named every log: no listing for its siblings
        log = replace(log, siblings=False)
    analysis = load(log, max_decompressed_bytes=cap)
    p = analysis.profile
    if p.start_ms is None and not p.jobs and not p.stages:
        problems = analysis.loaded.problems
        why = problems[0].message if problems else f"{p.event_count} event(s), none of them Spark's"
        return error_rows(ref, "NoApplication", f"no Spark application in the log: {why}")
    diagnosis = analysis.diagnose()
    rows = empty_rows()
    app = _app_row(ref, analysis, diagnosis)
    rows["apps"].append(app)
    on_path = set(diagnosis.critical_path)
    for s in diagnosis.stages:
        row: dict[str, Any] = {
            "log_path": ref.path,
            "app_id": diagnosis.app_id,
            "app_name": diagnosis.app_name,
            "stage_id": s.stage_id,
            "attempt": s.attempt,
            "name": s.name,
            "status": s.status,
            "job_ids": list(s.job_ids),
            "num_tasks": s.num_tasks,
            "tasks_run": s.tasks_run,
            "failed_tasks": s.failed_tasks,
            "duration_s": s.duration_s,
            "task_time_s": s.task_time_s,
        }
        for c in COMPONENTS:
            row[f"{c}_s"] = s.decomposition.get(c, 0.0)
            row[f"{c}_share"] = s.shares.get(c, 0.0)
        row.update(
            cpu_measured=s.cpu_measured,
            dominant=s.dominant,
            median_task_s=s.median_task_s,
            max_task_s=s.max_task_s,
            skew=s.skew,
            stragglers=s.stragglers,
            input_bytes=s.input_bytes,
            output_bytes=s.output_bytes,
            shuffle_read_bytes=s.shuffle_read_bytes,
            shuffle_write_bytes=s.shuffle_write_bytes,
            memory_spill_bytes=s.memory_spill_bytes,
            disk_spill_bytes=s.disk_spill_bytes,
            share_of_app=s.share_of_app,
            important=s.important,
            on_critical_path=s.stage_id in on_path,
            summary=s.summary,
        )
        rows["stages"].append(row)
    for i, text in enumerate(diagnosis.findings):
        rows["findings"].append(
            {
                "log_path": ref.path,
                "app_id": diagnosis.app_id,
                "app_name": diagnosis.app_name,
                "finding": i,
                "text": text,
            }
        )
    for i, alert in enumerate(diagnosis.alerts, start=len(diagnosis.findings)):
        rows["findings"].append(
            {
                "log_path": ref.path,
                "app_id": diagnosis.app_id,
                "app_name": diagnosis.app_name,
                "finding": i,
                "text": alert["text"],
                "alert": alert["kind"],
                **{name: alert[name] for name in ALERT_COLUMNS},
            }
        )
    for scenario in scenarios:
        rows["predictions"].append(_prediction_row(ref, analysis, diagnosis, scenario))
    return rows


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(ms: float | None) -> datetime | None:
    """A log's epoch milliseconds as an exact UTC instant (no float rounding on the way)."""
    return _EPOCH + timedelta(milliseconds=round(ms)) if ms is not None else None


MAX_HOST_CORES = 1024
"""Most cores one executor or one local-mode host is taken to hold. The largest machines
offered today have under 1,000 vCPUs; a log claiming more (``local[1000000]``, an executor
added with a million cores) would otherwise dominate the fleet's held and wasted totals."""
MAX_CLUSTER_SLOTS = 100_000
"""Most task slots a cluster without executor events is taken to have (from its settings)."""


def held_core_ms(analysis: Analysis) -> tuple[float, str]:
    """Core-milliseconds the application held, and where the figure comes from. Core counts
    the log claims are bounded (`MAX_HOST_CORES`, `MAX_CLUSTER_SLOTS`) before they are
    multiplied; the source then says what the log claimed."""
    p = analysis.profile
    res = p.resources
    start = p.start_ms
    end = p.end_ms
    run_ms = p.duration_ms
    task_cpus = max(1, res.task_cpus)
    executors = [e for e in p.executors.values() if e.executor_id != "driver"]
    if not res.local_mode and executors and start is not None and end is not None:
        held = 0.0
        claimed = 0
        for e in executors:
            cores = e.cores or res.executor_cores or task_cpus
            if cores > MAX_HOST_CORES:
                claimed = max(claimed, cores)
                cores = MAX_HOST_CORES
            added = max(e.added_ms if e.added_ms is not None else start, start)
            removed = min(e.removed_ms if e.removed_ms is not None else end, end)
            held += cores * max(0.0, removed - added)
        how = "executor added/removed events"
        if claimed:
            how += f" (an executor claims {claimed} cores; counted as {MAX_HOST_CORES})"
        return held, how
    slots = (res.total_slots or 0) * task_cpus
    limit = MAX_HOST_CORES if res.local_mode else MAX_CLUSTER_SLOTS
    how = "local mode: task slots × run" if res.local_mode else "task slots × run (no executors)"
    if slots > limit:
        how += f" (the log claims {slots} cores; counted as {limit})"
        slots = limit
    return slots * run_ms, how


def _app_row(ref: LogRef, analysis: Analysis, d: Diagnosis) -> dict[str, Any]:
    p = analysis.profile
    res = p.resources
    task_cpus = max(1, res.task_cpus)
    held_ms, held_from = held_core_ms(analysis)
    busy_ms = float(sum(s.table.duration_ms.sum() for s in p.stages.values())) * task_cpus
    duration = d.duration_s
    skews = [s.skew for s in d.stages if s.skew is not None]
    skewed = [
        s
        for s in d.stages
        if s.skew is not None and s.skew >= SKEW_FACTOR and s.max_task_s >= SKEW_MIN_TASK_S
    ]
    memory_spill = sum(s.memory_spill_bytes for s in d.stages)
    disk_spill = sum(s.disk_spill_bytes for s in d.stages)
    counts = d.data_quality.get("counts", {}) if d.data_quality else {}
    return {
        **_log_fields(ref),
        "app_id": d.app_id,
        "attempt": d.attempt,
        "app_name": d.app_name,
        "user": p.user or None,
        "spark_version": d.spark_version,
        "start": _utc(p.start_ms),
        "end": _utc(p.end_ms),
        "duration_s": duration,
        "complete": d.complete,
        "jobs": d.jobs,
        "failed_jobs": d.failed_jobs,
        "stages": len(d.stages),
        "stages_completed": d.stages_completed,
        "stages_failed": d.stages_failed,
        "stages_skipped": d.stages_skipped,
        "tasks": d.tasks,
        "failed_tasks": d.failed_tasks,
        "master": d.executors.master,
        "local_mode": res.local_mode,
        "executors": d.executors.count,
        "max_executors_alive": d.executors.max_alive,
        "executor_cores": d.executors.cores,
        "total_slots": d.executors.total_slots,
        "task_cpus": task_cpus,
        "slot_utilisation": d.slot_utilisation,
        "task_time_s": d.task_time_s,
        "held_core_hours": held_ms / MS_PER_HOUR,
        "busy_core_hours": busy_ms / MS_PER_HOUR,
        "wasted_core_hours": max(0.0, held_ms - busy_ms) / MS_PER_HOUR,
        "held_from": held_from,
        "dominant": d.dominant,
        "bottleneck": d.bottleneck,
        "model_error": d.model_error,
        "critical_path_s": d.critical_path_s,
        "critical_path_gaps_s": d.critical_path_gaps_s,
        "critical_path_share": d.critical_path_s / duration if duration > 0 else None,
        "driver_only_share": d.critical_path_gaps_s / duration if duration > 0 else None,
        "memory_spill_bytes": memory_spill,
        "disk_spill_bytes": disk_spill,
        "spill": memory_spill > 0 or disk_spill > 0,
        "skewed_stages": len(skewed),
        "max_skew": max(skews) if skews else None,
        "skew": bool(skewed),
        "findings": len(d.findings),
        "damaged_records": int(sum(int(v) for v in counts.values())),
        "warnings": len(d.warnings),
    }


def _prediction_row(
    ref: LogRef, analysis: Analysis, d: Diagnosis, scenario: Change
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "log_path": ref.path,
        "app_id": d.app_id,
        "app_name": d.app_name,
        "what_if": scenario.label,
    }
    try:
        prediction = analysis.predict(scenario)
    except PerfmodelError as exc:
        row["error"] = str(exc)
        return row
    c = prediction.config
    row.update(
        executors=c.executors,
        executor_cores=c.executor_cores,
        cores=c.executors * c.executor_cores,
        memory_bytes=c.memory_bytes,
        observed_s=prediction.observed_s,
        baseline_replay_s=prediction.baseline_replay_s,
        predicted_s=prediction.predicted_s,
        speedup=prediction.speedup,
        model_error=prediction.model_error,
        bottleneck=prediction.bottleneck,
    )
    return row
