"""py-spy recordings of a PySpark application: reading them into the samples table.

Why chrometrace: it is py-spy's only output with time stamps (microseconds since the sampler
started); the wall clock taken just before starting py-spy aligns them with the event log (error:
py-spy's start-up, a few milliseconds). Chrometrace records *changes* of a thread's stack, so
samples are rebuilt from the time each stack lasted. ``--idle`` is on so that a thread's stack is
refreshed at every sample; without it a thread that went idle would keep its last busy stack until
it woke up, smearing busy time over idle time. Recording (one py-spy per Python process, started
and stopped as processes come, go busy and go idle): `perfmodel.profile.record.pyspy_recorder`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from perfmodel.errors import PerfmodelError
from perfmodel.profile import sampletable
from perfmodel.profile.sampletable import StackDictionary


class PySpyError(PerfmodelError):
    """A py-spy recording could not be read, or py-spy could not sample."""


@dataclass(slots=True)
class PySpyMeta:
    """What a recording needs besides py-spy's own output (kept in ``<file>.meta.json``)."""

    pid: int
    start_ms: float
    """Wall clock (epoch ms) taken just before py-spy started: time zero of its time stamps."""
    interval_ms: float
    role: str = "python"
    """"python driver", "python worker" or "python" (unknown)."""
    executor_id: str | None = None
    ppid: int | None = None
    cmdline: list[str] = field(default_factory=list)
    start_estimated: bool = False
    """True when ``start_ms`` was inferred from the file's modification time."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> PySpyMeta:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(slots=True)
class PySpyRecording:
    """Samples of one py-spy file; ``error`` set means nothing could be read."""

    path: str
    meta: PySpyMeta | None = None
    samples: pa.Table = field(default_factory=sampletable.empty_table)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def meta_path(recording: Path) -> Path:
    return recording.with_name(recording.name + ".meta.json")


def py_spy_executable() -> str | None:
    """py-spy next to the running interpreter (the venv), else on PATH."""
    here = Path(sys.executable).parent / "py-spy"
    if here.is_file():
        return str(here)
    return shutil.which("py-spy")


def py_spy_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip()


# --------------------------------------------------------------------------- reading


def read_pyspy(
    path: str | Path, meta: PySpyMeta | None = None, *, name: str | None = None
) -> PySpyRecording:
    """Samples of a py-spy chrometrace file, on the wall clock.

    ``meta`` defaults to the ``.meta.json`` beside the file; without one, time zero is
    estimated as the file's modification time minus its last time stamp (py-spy writes the file
    right after its last sample), and the recording says so in ``warnings``.
    """
    path = Path(path)
    rec = PySpyRecording(path=name or str(path))
    try:
        events = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        rec.error = (
            f"{path} is not py-spy chrometrace output ({exc.__class__.__name__}); record with "
            "`py-spy record --format chrometrace`"
        )
        return rec
    if not isinstance(events, list) or not all(
        isinstance(e, dict) and "ph" in e and "ts" in e for e in events[:100]
    ):
        rec.error = (
            f"{path} is JSON but not py-spy chrometrace output (speedscope or another format?); "
            "record with `py-spy record --format chrometrace`"
        )
        return rec
    if meta is None and meta_path(path).is_file():
        meta = PySpyMeta.read(meta_path(path))
    if meta is None:
        last_us = max((float(e.get("ts", 0)) for e in events), default=0.0)
        pid = next((int(e["pid"]) for e in events if "pid" in e), -1)
        meta = PySpyMeta(
            pid=pid,
            start_ms=path.stat().st_mtime * 1000.0 - last_us / 1000.0,
            interval_ms=10.0,
            start_estimated=True,
        )
        rec.warnings.append(
            f"{path}: no .meta.json beside it; its start time was estimated from the file's "
            "modification time and the sampling interval assumed to be py-spy's default 10 ms"
        )
    rec.meta = meta
    rec.samples = _samples(events, meta, rec.path)
    return rec


def _samples(events: list[dict], meta: PySpyMeta, label: str) -> pa.Table:
    """Rebuild samples from chrometrace begin/end events (see the module docstring)."""
    thread_names: dict[tuple[int, int], str] = {}
    stacks_now: dict[tuple[int, int], list[tuple[str, int]]] = {}
    last_change: dict[tuple[int, int], float] = {}
    segments: list[tuple[tuple[int, int], float, float, tuple[tuple[str, int], ...]]] = []
    # Events are written in time order; group the changes of one thread at one time stamp.
    for event in events:
        ph = event.get("ph")
        key = (int(event.get("pid", 0)), int(event.get("tid", 0)))
        if ph == "M":
            raw = str((event.get("args") or {}).get("name", ""))
            thread_names[key] = raw
            continue
        if ph not in ("B", "E"):
            continue
        ts = float(event["ts"])
        args = event.get("args") or {}
        filename = str(args.get("filename") or "")
        name = str(event.get("name", ""))
        if not filename and name.startswith("process "):
            continue  # --subprocesses adds a pseudo frame per process
        stack = stacks_now.setdefault(key, [])
        prev = last_change.get(key)
        if prev is not None and ts > prev and stack:
            segments.append((key, prev, ts, tuple(stack)))
        last_change[key] = ts
        if ph == "B":
            line = args.get("line")
            stack.append((f"{name} ({filename})", int(line) if line is not None else 0))
        elif stack:
            stack.pop()
    interval_us = meta.interval_ms * 1000.0
    names: list[str] = []
    name_ids: dict[str, int] = {}
    stack_ids: dict[tuple[tuple[str, int], ...], int] = {}
    frames: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    ts_out: list[np.ndarray] = []
    sid_out: list[np.ndarray] = []
    keys_out: list[np.ndarray] = []
    key_ids: dict[tuple[int, int], int] = {}
    for key, start, end, segment in segments:
        sid = stack_ids.get(segment)
        if sid is None:
            sid = len(frames)
            stack_ids[segment] = sid
            ids = []
            for frame, _line in segment:
                fid = name_ids.get(frame)
                if fid is None:
                    fid = len(names)
                    name_ids[frame] = fid
                    names.append(frame)
                ids.append(fid)
            frames.append(np.array(ids, dtype=np.int32))
            lines.append(np.array([ln for _f, ln in segment], dtype=np.int32))
        count = max(1, int(round((end - start) / interval_us)))
        ts_out.append(start + np.arange(count) * interval_us)
        sid_out.append(np.full(count, sid, dtype=np.int64))
        keys_out.append(np.full(count, key_ids.setdefault(key, len(key_ids)), dtype=np.int64))
    if not ts_out:
        return sampletable.empty_table()
    ts_us = np.concatenate(ts_out)
    sids = np.concatenate(sid_out)
    kidx = np.concatenate(keys_out)
    order = np.argsort(ts_us, kind="stable")
    ts_us, sids, kidx = ts_us[order], sids[order], kidx[order]
    key_list = list(key_ids)
    thread_id, thread_name = [], []
    for pid_tid in key_list:
        label_name = thread_names.get(pid_tid, "")
        os_id, _, tname = label_name.partition(": ")
        thread_id.append(int(os_id) if os_id.isdigit() else pid_tid[1])
        thread_name.append(tname or "python thread")
    n = len(ts_us)
    idle_stacks = np.array([_waiting_for_task(names, f) for f in frames], dtype=bool)
    kind = np.where(idle_stacks[sids], "idle", "python")
    frames_col, lines_col = sampletable.stack_columns(StackDictionary(names, frames, lines), sids)
    return sampletable.make_table(
        {
            "timestamp_ms": meta.start_ms + ts_us / 1000.0,
            "source": pa.array(["pyspy"] * n, pa.string()),
            "kind": pa.array(kind, pa.string()),
            "weight_ms": np.full(n, meta.interval_ms),
            "process": pa.array([meta.role] * n, pa.string()),
            "pid": pa.array([key_list[k][0] or meta.pid for k in kidx], pa.int64()),
            "executor_id": pa.array([meta.executor_id] * n, pa.string()),
            "thread_id": pa.array([thread_id[k] for k in kidx], pa.int64()),
            "thread": pa.array([thread_name[k] for k in kidx], pa.string()),
            "task_events": np.zeros(n, dtype=bool),
            "stack_id": pa.array(sids, pa.int64()),
            "frames": frames_col,
            "lines": lines_col,
            "recording": pa.array([label] * n, pa.string()),
        }
    )


def _waiting_for_task(names: list[str], frame_ids: np.ndarray) -> bool:
    """True for a PySpark worker parked between tasks.

    A reused worker waits for its next task in a ``read_int`` at the start of ``worker.main``
    (Spark 4 wraps it in ``SparkMessageReceiver.get_init_message``). With ``--idle`` those
    samples are recorded too, and they must not count as work of whatever task the executor
    runs meanwhile. Waiting *inside* a task (for input rows) has other callers.
    """
    if len(frame_ids) < 2 or not names[frame_ids[-1]].startswith("read_int ("):
        return False
    parent = names[frame_ids[-2]]
    if parent.startswith("main (") and parent.rstrip(")").endswith("worker.py"):
        return True
    return any(".get_init_message (" in names[f] for f in frame_ids[-4:])


def recordings_in(directory: Path) -> list[Path]:
    """The py-spy recordings (not their sidecars) in a directory."""
    return sorted(p for p in directory.glob("*.json") if not p.name.endswith(".meta.json"))
