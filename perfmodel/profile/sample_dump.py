"""The reader's line format (SampleDump.java, TaskSampler.java) turned into recordings.

Both JVM samplers end in this format: the JFR reader prints it for flight recordings, and the
plugin's own sampler writes it directly. Parsing it here joins samples to the tasks the plugin
marked (by thread and time) and weights each sample by the thread time it stands for, so
nothing downstream knows which sampler ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from perfmodel.errors import PerfmodelError
from perfmodel.profile import sampletable
from perfmodel.profile.sampletable import StackDictionary

ADD_EXPORTS = "--add-exports=jdk.jfr/jdk.jfr.internal=ALL-UNNAMED"
"""Lets the plugin reach JFR's switch for excluding threads (IdleThreadExcluder.java)."""
_KINDS = {"J": "java", "N": "native", "W": "wait"}


class JfrError(PerfmodelError):
    """A recording could not be read, or the tools to read it are missing."""


@dataclass(slots=True)
class TaskSpan:
    """A task attempt running on one thread of one JVM, from the plugin's events."""

    thread_id: int
    task_id: int
    stage_id: int
    stage_attempt: int
    start_ms: float
    end_ms: float | None
    status: str = ""


@dataclass(slots=True)
class JfrRecording:
    """What one JFR file holds, as plain records; ``error`` set means nothing could be read."""

    path: str
    pid: int | None = None
    executor_id: str | None = None
    host: str | None = None
    app_id: str | None = None
    java_arguments: str = ""
    jvm_arguments: str = ""
    jvm_version: str = ""
    samples: pa.Table = field(default_factory=sampletable.empty_table)
    task_spans: list[TaskSpan] = field(default_factory=list)
    has_task_events: bool = False
    truncated_stacks: int = 0
    periods_ms: dict[str, float] = field(default_factory=dict)
    """Sampling period per event type ("jdk.ExecutionSample", ...) as the recording says."""
    excluded_threads: list[str] = field(default_factory=list)
    """Threads the plugin took out of sampling because they only ever wait (see the plugin)."""
    cpu_load_ms: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Epoch ms of each ``jdk.CPULoad`` event (`perfmodel.profile.jvm_cpu`)."""
    cpu_load: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """The JVM's CPU (user + system) in the period before, as a share of all host CPUs."""
    hw_threads: int | None = None
    """The host's logical CPUs (``jdk.CPUInformation``); None in recordings without it."""
    sampler: str = "jfr"
    """What took the samples: "jfr", or "plugin" (the plugin's own sampler, TaskSampler.java,
    which samples every task thread every period, so no round-robin weighting applies)."""
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def process(self) -> str:
        """A label for the JVM: its role and executor id."""
        if self.executor_id in (None, "", "driver"):
            return "jvm driver"
        return f"jvm executor {self.executor_id}"


def read_plugin_samples(path: Path, label: str) -> JfrRecording:
    """One file of the plugin's sampler; its dictionary ids are its own, so it parses alone.

    The plugin flushes once a second, so a JVM that was killed leaves a file whose last line
    may be cut: that line is dropped with a warning, and everything before it is kept.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return JfrRecording(path=label, error=f"{label} could not be read: {exc.strerror}")
    lines = text.split("\n")
    cut = lines.pop() if lines else ""
    if not lines or not lines[0].startswith("R\t"):
        return JfrRecording(path=label, error=f"{label} is not a perfmodel sample file")
    ended = any(line.startswith("D\t") for line in lines[-3:])
    try:
        (rec,) = parse_dump(lines, [label])
    except (ValueError, IndexError, KeyError, JfrError) as exc:
        return JfrRecording(path=label, error=f"{label} is damaged: {exc}")
    if cut or not ended:
        rec.warnings.append(
            f"{label}: recording ends early (the JVM stopped before its sampler closed the "
            "file); what came before is kept"
        )
    return rec


@dataclass(slots=True)
class _Pending:
    """Samples of one recording while its dump is being parsed."""

    recording: JfrRecording
    ts_ns: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)
    stacks: list[int] = field(default_factory=list)
    durations_ns: list[int] = field(default_factory=list)
    task_events: list[tuple[int, str, int, int, int, int, str]] = field(default_factory=list)
    cpu_load: list[tuple[float, float]] = field(default_factory=list)


def parse_dump(lines: Iterable[str], labels: Sequence[str]) -> list[JfrRecording]:
    """Turn the reader's line format (see SampleDump.java) into recordings."""
    names: list[str] = []
    stack_frames: list[np.ndarray] = []
    stack_lines: list[np.ndarray] = []
    truncated: list[bool] = []
    threads: dict[int, tuple[int, str]] = {}
    done: list[_Pending] = []
    current: _Pending | None = None
    for line in lines:
        tag, _, rest = line.partition("\t")
        if tag == "S" and current is not None:
            ts, kind, thread, stack, *duration = rest.split("\t")
            current.ts_ns.append(int(ts))
            current.kinds.append(kind)
            current.threads.append(int(thread))
            current.stacks.append(int(stack))
            current.durations_ns.append(int(duration[0]) if duration else 0)
        elif tag == "K":
            sid, frames, lns, trunc = rest.split("\t")
            if int(sid) != len(stack_frames):
                raise JfrError("the JFR reader's output is out of order (stack ids)")
            stack_frames.append(np.array(frames.split(",") if frames else [], dtype=np.int32))
            stack_lines.append(np.array(lns.split(",") if lns else [], dtype=np.int32))
            truncated.append(trunc == "1")
        elif tag == "F":
            fid, name = rest.split("\t", 1)
            if int(fid) != len(names):
                raise JfrError("the JFR reader's output is out of order (frame ids)")
            names.append(name)
        elif tag == "H":
            ref, java_id, _os_id, tname = rest.split("\t", 3)
            threads[int(ref)] = (int(java_id), tname)
        elif tag == "T" and current is not None:
            ts, phase, thread, task, stage, attempt, status = rest.split("\t", 6)
            current.task_events.append(
                (int(ts), phase, int(thread), int(task), int(stage), int(attempt), status)
            )
        elif tag == "C" and current is not None:
            ts, user, system = rest.split("\t")
            current.cpu_load.append((int(ts) / 1e6, float(user) + float(system)))
        elif tag == "I" and current is not None:
            key, _, value = rest.partition("\t")
            _set_info(current.recording, key, value)
        elif tag == "X" and current is not None:
            _java_id, tname, reason = rest.split("\t", 2)
            _note_exclusion(current.recording, tname, reason)
        elif tag == "R":
            label = labels[len(done)] if len(done) < len(labels) else rest
            current = _Pending(JfrRecording(path=label))
            done.append(current)
        elif tag == "W" and current is not None:
            current.recording.warnings.append(f"{current.recording.path}: recording {rest}")
        elif tag == "E" and current is not None:
            current.recording.error = f"{current.recording.path} is not a readable JFR file: {rest}"
    stacks = StackDictionary(names, stack_frames, stack_lines)
    out = []
    for pending in done:
        rec = pending.recording
        if rec.error is None:
            _finish(pending, stacks, threads, truncated)
        out.append(rec)
    return out


def _note_exclusion(rec: JfrRecording, thread_name: str, reason: str) -> None:
    """An excluded thread, or (no name) why the plugin could not exclude or stopped doing so."""
    if thread_name:
        rec.excluded_threads.append(thread_name)
        return
    # "unavailable: ..." is JFR's switch out of reach (the flag missing); "stopped: ..." an
    # error after some threads were excluded, which the flag would not cure.
    hint = f"; the JVM needs {ADD_EXPORTS} (perfmodel record adds it)"
    rec.warnings.append(
        f"{rec.path}: the plugin could not take idle threads out of sampling ({reason}), so "
        "task threads waiting in native code were sampled less often"
        + (hint if reason.startswith("unavailable") else "")
    )


def _set_info(rec: JfrRecording, key: str, value: str) -> None:
    if key == "pid" and value.isdigit():
        rec.pid = int(value)
    elif key == "executor_id" and value:
        rec.executor_id = value
    elif key == "host" and value:
        rec.host = value
    elif key == "app_id" and value:
        rec.app_id = value
    elif key == "java_arguments":
        rec.java_arguments = value
        if rec.executor_id is None:
            rec.executor_id = _executor_from_args(value)
        if rec.host is None:
            match = re.search(r"--hostname\s+(\S+)", value)
            rec.host = match.group(1) if match else None
    elif key == "jvm_arguments":
        rec.jvm_arguments = value
    elif key == "jvm_version":
        rec.jvm_version = value
    elif key == "sampler" and value:
        rec.sampler = value
    elif key == "hw_threads" and value.isdigit() and int(value) > 0:
        rec.hw_threads = int(value)
    elif key.startswith("period."):
        ms = _period_ms(value)
        if ms is not None:
            rec.periods_ms[key.removeprefix("period.")] = ms


_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def _period_ms(value: str) -> float | None:
    """``"20 ms"`` → 20.0; JFR also writes values like ``"everyChunk"``, meaningless here."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*", value)
    if not match or match.group(2) not in _UNIT_MS:
        return None
    return float(match.group(1)) * _UNIT_MS[match.group(2)]


def _weights(
    ts_ms: np.ndarray, is_native: np.ndarray, thread_ids: np.ndarray, periods: dict[str, float]
) -> np.ndarray:
    """Thread time each sample stands for.

    A Java sample stands for one Java period of its thread. JFR takes one native sample per
    native period, round-robin over all threads in native code, so a native sample stands for
    (native period × threads in native at the time); the thread count is estimated per second
    as the distinct threads seen in native samples then.
    """
    java_period = periods.get("jdk.ExecutionSample")
    native_period = periods.get("jdk.NativeMethodSample")
    n = len(ts_ms)
    weights = np.empty(n, dtype=np.float64)
    if n == 0:
        return weights
    bins = ((ts_ms - ts_ms.min()) // 1000.0).astype(np.int64)
    if java_period is None:
        java_period = _median_gap(ts_ms[~is_native], thread_ids[~is_native]) or 20.0
    weights[~is_native] = java_period
    native = np.nonzero(is_native)[0]
    if native.size:
        pairs = np.unique(np.stack([bins[native], thread_ids[native]]), axis=1)
        per_bin = np.bincount(pairs[0], minlength=int(bins.max()) + 1)
        counts = np.bincount(bins[native], minlength=int(bins.max()) + 1)
        if native_period is None:
            # Without the setting, a bin's native samples share its thread-seconds evenly.
            weights[native] = per_bin[bins[native]] * 1000.0 / counts[bins[native]]
        else:
            weights[native] = native_period * per_bin[bins[native]]
    return weights


def _median_gap(ts_ms: np.ndarray, thread_ids: np.ndarray) -> float | None:
    """Typical time between consecutive samples of one thread (the period, when unknown)."""
    if ts_ms.size < 2:
        return None
    order = np.lexsort((ts_ms, thread_ids))
    same = thread_ids[order][1:] == thread_ids[order][:-1]
    gaps = np.diff(ts_ms[order])[same]
    return float(np.median(gaps)) if gaps.size else None


def _executor_from_args(java_arguments: str) -> str | None:
    """Executor id from a JVM's main-class arguments, for recordings made without the plugin."""
    match = re.search(r"--executor-id\s+(\S+)", java_arguments)
    if match:
        return match.group(1)
    if "org.apache.spark.deploy.SparkSubmit" in java_arguments:
        return "driver"
    return None


def _spans(events: list[tuple[int, str, int, int, int, int, str]], threads: dict) -> list[TaskSpan]:
    """Pair start and end events per thread; a start without an end runs to the next start."""
    out: list[TaskSpan] = []
    open_by_thread: dict[int, TaskSpan] = {}
    for ts, phase, ref, task, stage, attempt, status in sorted(events):
        java_id = threads.get(ref, (ref, ""))[0]
        if phase == "B":
            prev = open_by_thread.pop(java_id, None)
            if prev is not None and prev.end_ms is None:
                prev.end_ms = ts / 1e6
            span = TaskSpan(java_id, task, stage, attempt, ts / 1e6, None)
            out.append(span)
            open_by_thread[java_id] = span
        else:
            ended = open_by_thread.pop(java_id, None)
            if ended is not None and ended.task_id == task:
                ended.end_ms = ts / 1e6
                span.status = status
    return out


def _finish(
    pending: _Pending,
    stacks: StackDictionary,
    threads: dict[int, tuple[int, str]],
    truncated: list[bool],
) -> None:
    rec = pending.recording
    load = sorted(pending.cpu_load)
    rec.cpu_load_ms = np.array([t for t, _ in load], dtype=np.float64)
    rec.cpu_load = np.array([v for _, v in load], dtype=np.float64)
    rec.task_spans = _spans(pending.task_events, threads)
    rec.has_task_events = bool(pending.task_events)
    n = len(pending.ts_ns)
    ts_ms = np.array(pending.ts_ns, dtype=np.int64) / 1e6
    stack_ids = np.array(pending.stacks, dtype=np.int64)
    java_ids = np.array([threads[r][0] for r in pending.threads], dtype=np.int64)
    thread_names = [threads[r][1] for r in pending.threads]
    rec.truncated_stacks = int(sum(truncated[s] for s in set(pending.stacks)))
    task = np.full(n, -1, dtype=np.int64)
    stage = np.full(n, -1, dtype=np.int64)
    attempt = np.full(n, -1, dtype=np.int64)
    end_of_recording = float(ts_ms.max()) if n else 0.0
    by_thread: dict[int, list[TaskSpan]] = {}
    for span in rec.task_spans:
        by_thread.setdefault(span.thread_id, []).append(span)
    for java_id, spans in by_thread.items():
        rows = np.nonzero(java_ids == java_id)[0]
        if rows.size == 0:
            continue
        starts = np.array([s.start_ms for s in spans])
        ends = np.array([s.end_ms if s.end_ms is not None else end_of_recording for s in spans])
        idx = np.searchsorted(starts, ts_ms[rows], side="right") - 1
        ok = idx >= 0
        ok[ok] &= ts_ms[rows][ok] <= ends[idx[ok]]
        hit = rows[ok]
        chosen = idx[ok]
        task[hit] = [spans[i].task_id for i in chosen]
        stage[hit] = [spans[i].stage_id for i in chosen]
        attempt[hit] = [spans[i].stage_attempt for i in chosen]
    known = task >= 0
    kinds = np.array(pending.kinds, dtype=object)
    is_wait = kinds == "W"
    is_native = kinds == "N"
    if rec.sampler == "plugin":
        # Every task thread every period: each sample stands for one period of its thread.
        weights = np.full(int((~is_wait).sum()), rec.periods_ms.get("jdk.ExecutionSample", 20.0))
    else:
        weights = _weights(ts_ms[~is_wait], is_native[~is_wait], java_ids[~is_wait], rec.periods_ms)
    all_weights = np.empty(n, dtype=np.float64)
    all_weights[~is_wait] = weights
    all_weights[is_wait] = np.array(pending.durations_ns, dtype=np.float64)[is_wait] / 1e6
    frames, lines = sampletable.stack_columns(stacks, stack_ids)
    rec.samples = sampletable.make_table(
        {
            "timestamp_ms": ts_ms,
            "source": pa.array(["jfr"] * n, pa.string()),
            "kind": pa.array([_KINDS[k] for k in pending.kinds], pa.string()),
            "weight_ms": all_weights,
            "process": pa.array([rec.process] * n, pa.string()),
            "pid": pa.array(np.full(n, rec.pid if rec.pid is not None else -1), pa.int64()),
            "executor_id": pa.array([rec.executor_id] * n, pa.string()),
            "host": pa.array([rec.host] * n, pa.string()),
            "thread_id": pa.array(java_ids, pa.int64()),
            "thread": pa.array(thread_names, pa.string()),
            "task_id": pa.array(task, pa.int64(), mask=~known),
            "stage_id": pa.array(stage, pa.int32(), mask=~known),
            "stage_attempt": pa.array(attempt, pa.int32(), mask=~known),
            "task_events": pa.array(np.full(n, rec.has_task_events), pa.bool_()),
            "stack_id": pa.array(stack_ids, pa.int64()),
            "frames": frames,
            "lines": lines,
            "recording": pa.array([rec.path] * n, pa.string()),
        }
    )


def spans_table(recordings: Sequence[JfrRecording]) -> pa.Table:
    """The plugin's task spans of all recordings, for ``task_spans.parquet``."""
    rows = [(r, s) for r in recordings for s in r.task_spans]
    return pa.table(
        {
            "recording": pa.array([r.path for r, _ in rows], pa.string()),
            "executor_id": pa.array([r.executor_id for r, _ in rows], pa.string()),
            "pid": pa.array([r.pid for r, _ in rows], pa.int64()),
            "thread_id": pa.array([s.thread_id for _, s in rows], pa.int64()),
            "task_id": pa.array([s.task_id for _, s in rows], pa.int64()),
            "stage_id": pa.array([s.stage_id for _, s in rows], pa.int32()),
            "stage_attempt": pa.array([s.stage_attempt for _, s in rows], pa.int32()),
            "start_ms": pa.array([s.start_ms for _, s in rows], pa.float64()),
            "end_ms": pa.array([s.end_ms for _, s in rows], pa.float64()),
            "status": pa.array([s.status for _, s in rows], pa.string()),
        }
    )
