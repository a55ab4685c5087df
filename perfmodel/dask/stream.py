"""Reading a Dask task stream: the JSON-lines files `perfmodel.dask.plugin` writes.

A recording holds one file per process that recorded (``scheduler-*``, ``worker-*``,
``client-*`` in the bundle's ``raw/dask``). Each line is one record, tagged by its ``e``
field, decoded into a typed struct by msgspec; a line that is not JSON, has fields of the
wrong type, has an unknown tag or values outside any physical range is counted in a
`DataQuality` by kind, listed as a `LogProblem`, and skipped: reading never stops at damage.
A last line without its newline is a process killed while writing (``truncated_tail``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from perfmodel.profile.eventlog import LogProblem, ProblemList
from perfmodel.profile.quality import DataQuality

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line read; a graph of a million tasks is ~60 MB. Longer is junk, not a record."""
MAX_SECONDS = 1e10
"""Latest time kept (year 2286); timestamps are seconds since the epoch."""


class StartStop(msgspec.Struct, frozen=True):
    """One timed activity of a task on its worker (Dask's ``startstops``)."""

    action: str
    start: float
    stop: float


class Open(msgspec.Struct, tag="open", tag_field="e", frozen=True):
    kind: str
    pid: int
    t: float
    v: int = 1


class Close(msgspec.Struct, tag="close", tag_field="e", frozen=True):
    t: float


class SchedulerStart(msgspec.Struct, tag="scheduler", tag_field="e", frozen=True):
    address: str
    version: str
    t: float


class WorkerAdded(msgspec.Struct, tag="worker-added", tag_field="e", frozen=True):
    worker: str
    host: str
    nthreads: int
    t: float
    name: str = ""
    pid: int | None = None
    memory_limit: int | None = None


class WorkerRemoved(msgspec.Struct, tag="worker-removed", tag_field="e", frozen=True):
    worker: str
    t: float


class Graph(msgspec.Struct, tag="graph", tag_field="e", frozen=True):
    """A graph submission (``update_graph``): the keys asked for and every task it added."""

    keys: list[str]
    tasks: list[str]
    t: float
    client: str = ""


class Task(msgspec.Struct, tag="task", tag_field="e", frozen=True):
    """A task that ended on a worker (processing → memory or erred), as the scheduler saw it."""

    key: str
    prefix: str
    status: str
    worker: str
    startstops: list[StartStop]
    t: float
    group: str = ""
    thread: int | None = None
    nbytes: int | None = None
    deps: list[str] = []


class WorkerStart(msgspec.Struct, tag="worker", tag_field="e", frozen=True):
    worker: str
    t: float
    nthreads: int | None = None


class Done(msgspec.Struct, tag="done", tag_field="e", frozen=True):
    """A task's result stored on its worker: the worker's memory then."""

    key: str
    t: float
    began: float | None = None
    """When the task took a worker thread (its executing transition)."""
    ready: float | None = None
    """When its inputs were all on the worker (its ready transition)."""
    memory: int | None = None
    spilled: list[int] | None = None
    delay: float = 0.0


class ThreadCpu(msgspec.Struct, tag="thread-cpu", tag_field="e", frozen=True):
    key: str
    s: float
    t: float


class ThreadIds(msgspec.Struct, tag="thread", tag_field="e", frozen=True):
    """A worker thread that ran tasks: its pthread id (Dask's) and OS thread id."""

    ident: int
    t: float
    native: int | None = None


class LockRecord(msgspec.Struct, tag="lock", tag_field="e", frozen=True):
    """A worker's interpreter-lock probes (`perfmodel.dask.plugin._LockProbe`): when each
    asked for the lock (ms after ``t0``) and how late it got it (µs)."""

    t0: float
    at: list[int]
    lag_us: list[int]
    t: float


class ClientStart(msgspec.Struct, tag="client", tag_field="e", frozen=True):
    id: str
    t: float


class Submit(msgspec.Struct, tag="submit", tag_field="e", frozen=True):
    keys: list[str]
    t: float


class Gathered(msgspec.Struct, tag="gathered", tag_field="e", frozen=True):
    keys: list[str]
    t: float


Record = (
    Open
    | Close
    | SchedulerStart
    | WorkerAdded
    | WorkerRemoved
    | Graph
    | Task
    | WorkerStart
    | Done
    | ThreadCpu
    | ThreadIds
    | LockRecord
    | ClientStart
    | Submit
    | Gathered
)
TAGS = frozenset(t.__struct_config__.tag for t in Record.__args__)
_DECODER = msgspec.json.Decoder(Record)
_ANY = msgspec.json.Decoder()


@dataclass(slots=True)
class WorkerFile:
    """What one worker process recorded: per key, its thread CPU and memory records."""

    file: str
    worker: str = ""
    pid: int | None = None
    cpu_s: dict[str, list[float]] = field(default_factory=dict)
    done: dict[str, list[Done]] = field(default_factory=dict)
    natives: dict[int, int] = field(default_factory=dict)
    """pthread id → OS thread id of the threads that ran tasks."""
    probes: list[LockRecord] = field(default_factory=list)


@dataclass(slots=True)
class ClientFile:
    file: str
    client_id: str = ""
    pid: int | None = None
    submits: list[Submit] = field(default_factory=list)
    gathers: list[Gathered] = field(default_factory=list)
    closed: bool = False


@dataclass(slots=True)
class SchedulerFile:
    file: str
    pid: int | None = None
    address: str = ""
    version: str = ""
    workers: dict[str, WorkerAdded] = field(default_factory=dict)
    removed: dict[str, float] = field(default_factory=dict)
    graphs: list[Graph] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    closed_t: float | None = None
    last_t: float | None = None


@dataclass(slots=True)
class DaskStream:
    """Every record of a recording, by the file (process) that wrote it."""

    schedulers: list[SchedulerFile] = field(default_factory=list)
    workers: list[WorkerFile] = field(default_factory=list)
    clients: list[ClientFile] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=ProblemList)
    """The first `perfmodel.profile.eventlog.MAX_PROBLEMS_KEPT` problems (every one is
    counted in ``quality``): a file of junk lines must not be remembered line by line."""
    quality: DataQuality = field(default_factory=DataQuality)
    lines: int = 0
    records: int = 0


def stream_files(directory: Path) -> list[Path]:
    """The recording's files, scheduler first (their order of reading does not matter)."""
    return sorted(directory.glob("*.jsonl"))


def read_stream(directory: Path, root: Path | None = None) -> DaskStream:
    """Read every JSON-lines file in ``directory``; ``root`` makes file names relative."""
    out = DaskStream()
    for path in stream_files(directory):
        name = str(path.relative_to(root)) if root is not None else str(path)
        read_file(path, name, out)
    return out


def read_file(path: Path, name: str, out: DaskStream) -> None:
    """Add one file's records to ``out``; its kind is in its name (``scheduler-…``)."""
    kind = path.name.split("-", 1)[0]
    if not path.is_file():  # a FIFO or device named like a recording would never end
        out.problems.append(LogProblem(name, None, "not a regular file; skipped", "corrupt_stream"))
        out.quality.add("corrupt_stream", name)
        return
    try:
        with path.open("rb") as handle:
            lines = list(_lines(handle))
    except OSError as exc:
        out.problems.append(LogProblem(name, None, f"unreadable: {exc}", "corrupt_stream"))
        out.quality.add("corrupt_stream", name)
        return
    add_lines(kind, name, lines, out)


def _lines(handle: Iterable[bytes]) -> Iterable[bytes]:
    for line in handle:
        yield line[: MAX_LINE_BYTES + 1]


def add_lines(kind: str, name: str, lines: Iterable[bytes], out: DaskStream) -> None:
    """Decode ``lines`` of a file of ``kind`` (scheduler, worker or client) into ``out``."""
    sink: SchedulerFile | WorkerFile | ClientFile
    if kind == "scheduler":
        out.schedulers.append(sink := SchedulerFile(name))
    elif kind == "worker":
        out.workers.append(sink := WorkerFile(name))
    elif kind == "client":
        out.clients.append(sink := ClientFile(name))
    else:
        out.problems.append(LogProblem(name, None, "not a perfmodel Dask file", "unknown_event"))
        out.quality.add("unknown_event", name)
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out.lines += 1
        record = _decode(line, name, number, out)
        if record is not None and _add(sink, record, name, number, out):
            out.records += 1


def _problem(out: DaskStream, name: str, number: int, kind: str, message: str) -> None:
    out.problems.append(LogProblem(name, number, message, kind))
    out.quality.add(kind, f"{name}:{number}")


def _decode(line: bytes, name: str, number: int, out: DaskStream) -> Record | None:
    if len(line) > MAX_LINE_BYTES:
        _problem(out, name, number, "undecodable_line", "line longer than 64 MB")
        return None
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError as exc:
        tag = _tag(line)
        if tag is None or tag not in TAGS:
            what = f"unknown record {tag!r}" if tag else "no record tag"
            _problem(out, name, number, "unknown_event", what)
        else:
            kind = "out_of_range_value" if "out of range" in str(exc) else "wrong_type"
            _problem(out, name, number, kind, f"{tag} record: {exc}")
    except msgspec.DecodeError as exc:
        kind = "truncated_tail" if not line.endswith(b"\n") else "undecodable_line"
        _problem(out, name, number, kind, f"not valid JSON ({exc})")
    except RecursionError:
        _problem(out, name, number, "undecodable_line", "nested too deep to be a record")
    return None


def _tag(line: bytes) -> str | None:
    try:
        data = _ANY.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    tag = data.get("e") if isinstance(data, dict) else None
    return tag if isinstance(tag, str) else None


def _time_ok(*values: float) -> bool:
    return all(math.isfinite(v) and 0.0 <= v <= MAX_SECONDS for v in values)


def _add(
    sink: SchedulerFile | WorkerFile | ClientFile,
    r: Record,
    name: str,
    number: int,
    out: DaskStream,
) -> bool:
    """File one decoded record; False (and counted) for one whose values cannot be."""
    times = [r.t]
    if isinstance(r, Task):
        times += [v for s in r.startstops for v in (s.start, s.stop)]
    if not _time_ok(*times):
        _problem(out, name, number, "out_of_range_value", f"{type(r).__name__}: time out of range")
        return False
    if isinstance(r, Open):
        sink.pid = r.pid
    elif isinstance(sink, SchedulerFile):
        sink.last_t = max(sink.last_t or r.t, r.t)
        if isinstance(r, SchedulerStart):
            sink.address, sink.version = r.address, r.version
        elif isinstance(r, WorkerAdded):
            sink.workers[r.worker] = r
        elif isinstance(r, WorkerRemoved):
            sink.removed[r.worker] = r.t
        elif isinstance(r, Graph):
            sink.graphs.append(r)
        elif isinstance(r, Task):
            if any(s.stop < s.start for s in r.startstops):
                out.quality.add("impossible_times", f"{name}:{number}")
            sink.tasks.append(r)
        elif isinstance(r, Close):
            sink.closed_t = r.t
        else:
            return _misplaced(out, name, number, r)
    elif isinstance(sink, WorkerFile):
        if isinstance(r, WorkerStart):
            sink.worker = r.worker
        elif isinstance(r, ThreadCpu):
            if not (math.isfinite(r.s) and 0.0 <= r.s <= MAX_SECONDS):
                _problem(out, name, number, "out_of_range_value", "thread time out of range")
                return False
            sink.cpu_s.setdefault(r.key, []).append(r.s)
        elif isinstance(r, LockRecord):
            if len(r.at) != len(r.lag_us) or not _time_ok(r.t0) or min(r.lag_us, default=0) < 0:
                _problem(out, name, number, "out_of_range_value", "lock probes out of range")
                return False
            sink.probes.append(r)
        elif isinstance(r, ThreadIds):
            if r.native is not None:
                sink.natives[r.ident] = r.native
        elif isinstance(r, Done):
            if r.began is not None and not (_time_ok(r.began) and r.began <= r.t):
                _problem(out, name, number, "impossible_times", "done before it began")
                return False
            sink.done.setdefault(r.key, []).append(r)
        elif not isinstance(r, Close):
            return _misplaced(out, name, number, r)
    else:
        assert isinstance(sink, ClientFile)
        if isinstance(r, ClientStart):
            sink.client_id = r.id
        elif isinstance(r, Submit):
            sink.submits.append(r)
        elif isinstance(r, Gathered):
            sink.gathers.append(r)
        elif isinstance(r, Close):
            sink.closed = True
        else:
            return _misplaced(out, name, number, r)
    return True


def _misplaced(out: DaskStream, name: str, number: int, r: Record) -> bool:
    tag = type(r).__struct_config__.tag
    _problem(out, name, number, "unknown_event", f"{tag} record in the wrong kind of file")
    return False
