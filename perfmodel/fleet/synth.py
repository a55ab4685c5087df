"""Generated fleets for tests and benchmarks: real logs copied as new applications.

Each copy is a real Spark event log with a new application id, name and start time, every
timestamp moved with the start, and (for a slowed-down run) every time stretched by a
factor: event times relative to the application's start, and the task metrics that are
durations. Nothing else changes, so each copy is as real as its source. A fleet holds
recurring applications (several runs each, run times within a few per cent of each
other), one application whose latest run is much slower (the regression a fleet run must
find), and a few corrupt files (the errors it must list).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from perfmodel.profile.codec_streams import zstd
from perfmodel.profile.eventlog import LogProblem, iter_lines, resolve_event_log

TIME_KEYS = frozenset(
    {"Timestamp", "Launch Time", "Finish Time", "Submission Time", "Completion Time", "time"}
)
"""Epoch-millisecond fields: moved with the start, stretched by the slowdown."""
DURATION_KEYS = frozenset(
    {
        "Executor Run Time",
        "Executor CPU Time",
        "JVM GC Time",
        "Executor Deserialize Time",
        "Executor Deserialize CPU Time",
        "Result Serialization Time",
        "Fetch Wait Time",
        "Shuffle Write Time",
        "Shuffle Fetch Wait Time",
        "Write Time",
    }
)
"""Task-metric durations (ms or ns): stretched by the slowdown."""
DAY_MS = 86_400_000
FLEET_START_MS = 1_790_000_000_000  # 2026-09-21


@dataclass(slots=True)
class SourceLog:
    """A real log, decoded once: its events and its start time."""

    name: str
    events: list[dict[str, Any]]
    start_ms: float


@dataclass(slots=True)
class SynthFleet:
    logs: list[Path] = field(default_factory=list)
    corrupt: list[Path] = field(default_factory=list)
    regressed: Path | None = None
    regressed_name: str = ""
    regressed_series: list[Path] = field(default_factory=list)


def read_source(path: Path) -> SourceLog:
    """A real log's events (every part of a rolling log, decompressed)."""
    problems: list[LogProblem] = []
    decoder = msgspec.json.Decoder()
    events = [decoder.decode(line.data) for line in iter_lines(resolve_event_log(path), problems)]
    start = next(
        (e["Timestamp"] for e in events if e.get("Event") == "SparkListenerApplicationStart"),
        min((e["Timestamp"] for e in events if isinstance(e.get("Timestamp"), int)), default=0),
    )
    return SourceLog(path.name, events, float(start))


def _shift(value: Any, old_start: float, new_start: int, factor: float) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in TIME_KEYS and isinstance(v, int | float) and v > 0:
                out[k] = int(new_start + (v - old_start) * factor)
            elif k in DURATION_KEYS and isinstance(v, int | float) and v > 0:
                out[k] = int(v * factor)
            else:
                out[k] = _shift(v, old_start, new_start, factor)
        return out
    if isinstance(value, list):
        return [_shift(v, old_start, new_start, factor) for v in value]
    return value


def copy_events(
    source: SourceLog, app_id: str, name: str, start_ms: int, factor: float = 1.0
) -> list[dict[str, Any]]:
    """The source's events as another application (new id, name, start; times × factor)."""
    out = []
    for event in source.events:
        e = _shift(event, source.start_ms, start_ms, factor)
        kind = e.get("Event")
        if kind == "SparkListenerApplicationStart":
            e["App ID"] = app_id
            e["App Name"] = name
        elif kind == "SparkListenerEnvironmentUpdate":
            props = e.get("Spark Properties")
            if isinstance(props, dict):
                props["spark.app.id"] = app_id
                props["spark.app.name"] = name
        out.append(e)
    return out


def write_log(directory: Path, app_id: str, events: list[dict[str, Any]], shape: str) -> Path:
    """Write events as Spark would: ``plain`` file, ``zstd`` file or ``rolling`` directory."""
    data = b"\n".join(msgspec.json.encode(e) for e in events) + b"\n"
    if shape == "zstd":
        path = directory / f"{app_id}.zstd"
        path.write_bytes(zstd.compress(data))
    elif shape == "rolling":
        path = directory / f"eventlog_v2_{app_id}"
        path.mkdir()
        (path / f"events_1_{app_id}").write_bytes(data)
        (path / f"appstatus_{app_id}").write_bytes(b"")
    else:
        path = directory / app_id
        path.write_bytes(data)
    return path


def write_corrupt(directory: Path, rng: random.Random) -> list[Path]:
    """Files a History Server directory can hold that are not readable logs."""
    junk = directory / "app-corrupt-0001"
    junk.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    cut = directory / "app-corrupt-0002.zstd"  # zstd's magic number, then noise
    cut.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(rng.randrange(256) for _ in range(4096)))
    empty = directory / "app-corrupt-0003"
    empty.write_bytes(b"")
    text = directory / "app-corrupt-0004"
    text.write_bytes(b"this is not an event log\n" * 20)
    return [junk, cut, empty, text]


def generate_fleet(
    directory: Path,
    sources: Sequence[Path],
    *,
    copies: int = 200,
    runs_per_app: tuple[int, int] = (3, 6),
    jitter: float = 0.03,
    regressed_runs: int = 6,
    slowdown: float = 1.8,
    corrupt: bool = True,
    seed: int = 0,
) -> SynthFleet:
    """About ``copies`` logs in ``directory``: recurring applications made of the sources,
    one slowed-down series, and (``corrupt``) a few unreadable files."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    decoded = [read_source(p) for p in sources]
    fleet = SynthFleet()
    serial = 0

    def emit(src: SourceLog, name: str, start: int, factor: float) -> Path:
        nonlocal serial
        serial += 1
        app_id = f"app-synth-{start // 1000}-{serial:04d}"
        shape = rng.choice(("plain", "plain", "zstd", "rolling"))
        path = write_log(directory, app_id, copy_events(src, app_id, name, start, factor), shape)
        fleet.logs.append(path)
        return path

    base = FLEET_START_MS
    fleet.regressed_name = "nightly-etl"
    regressed_src = decoded[0]
    for run in range(regressed_runs):
        last = run == regressed_runs - 1
        factor = slowdown if last else 1.0 + rng.uniform(-jitter, jitter)
        path = emit(regressed_src, fleet.regressed_name, base + run * DAY_MS, factor)
        fleet.regressed_series.append(path)
        if last:
            fleet.regressed = path
    app = 0
    while len(fleet.logs) < copies:
        src = decoded[app % len(decoded)]
        app += 1
        name = f"job-{app:03d}"
        for run in range(rng.randint(*runs_per_app)):
            if len(fleet.logs) >= copies:
                break
            start = base + run * DAY_MS + rng.randrange(3_600_000)
            emit(src, name, start, 1.0 + rng.uniform(-jitter, jitter))
    if corrupt:
        fleet.corrupt = write_corrupt(directory, rng)
    return fleet


def write_huge_log(directory: Path, source: Path, app_id: str, mib: int = 100) -> Path:
    """A real log whose environment event carries a ``mib``-MiB property value (as a huge
    SQL plan or a pasted classpath would): compressed it is small, read it needs memory."""
    events = copy_events(read_source(source), app_id, "huge-event", FLEET_START_MS)
    for e in events:
        if e.get("Event") == "SparkListenerEnvironmentUpdate":
            e.setdefault("Spark Properties", {})["spark.huge.option"] = "x" * (mib << 20)
    directory.mkdir(parents=True, exist_ok=True)
    return write_log(directory, app_id, events, "zstd")
