"""Replicate a real Spark event log's jobs N times with fresh ids: the (c) series of the scale
benchmark, a log k× the size of a real one with the same shape per job.

    .venv/bin/python benchmarks/replicate_log.py LOG --times 4 [--out FILE.zstd]

Why replicate rather than run Spark longer: the series must hold the job mix fixed so that
time per stage across 1×, 4× and 16× measures how the analysis scales, not how the workload
changed. Each replica is a copy of every job-level event (jobs, stages, tasks, SQL executions,
driver accumulator updates, block updates) with every id that links events renumbered past the
previous replica's (job, stage, task, RDD, SQL execution and accumulator ids, shuffle ids of
fetch failures, ``rdd_N_M`` block ids) and every timestamp shifted so the replicas follow one
another without overlap. Application-level events (log start, environment, application start,
executors and block managers, resource profiles) appear once, from the original, and the
application end comes last, shifted to the end of the last replica.

Reads plain JSON lines or zstd (Spark's framing: ordinary frames, read across frame ends);
writes zstd framed as Spark does (level 1, a frame per flush) unless the name ends in .json.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

# Events copied into every replica; everything else is application-level and kept once.
_JOB_EVENTS = frozenset(
    {
        "SparkListenerJobStart",
        "SparkListenerJobEnd",
        "SparkListenerStageSubmitted",
        "SparkListenerStageCompleted",
        "SparkListenerTaskStart",
        "SparkListenerTaskGettingResult",
        "SparkListenerTaskEnd",
        "SparkListenerStageExecutorMetrics",
        "SparkListenerSpeculativeTaskSubmitted",
        "SparkListenerUnschedulableTaskSetAdded",
        "SparkListenerUnschedulableTaskSetRemoved",
        "SparkListenerBlockUpdated",
        "SparkListenerUnpersistRDD",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveSQLMetricUpdates",
        "org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates",
    }
)
_APP_END = "SparkListenerApplicationEnd"

# Keys whose integer value is an id, by id space. "Parent IDs" and "ID" depend on the dict
# they sit in (an RDD's parents are RDDs, a stage's are stages; "ID" is an accumulator's).
_ID_KEYS = {
    "Job ID": "job",
    "Stage ID": "stage",
    "stageId": "stage",
    "Stage IDs": "stage",
    "Task ID": "task",
    "Map ID": "task",
    "RDD ID": "rdd",
    "executionId": "sql",
    "rootExecutionId": "sql",
    "accumulatorId": "accum",
    "Shuffle ID": "shuffle",
}
_TIME_KEYS = frozenset(
    {"Submission Time", "Completion Time", "Launch Time", "Finish Time", "Getting Result Time"}
)
_SQL_TIME_KEY = "time"
_EXECUTION_ID_PROPERTIES = ("spark.sql.execution.id", "spark.sql.execution.root.id")
SPACES = ("job", "stage", "task", "rdd", "sql", "accum", "shuffle")


@dataclass
class Shift:
    """What one replica adds to every id (per id space) and to every timestamp (ms)."""

    ids: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPACES, 0))
    millis: int = 0


def _space_of(key: str, owner: dict[str, Any]) -> str | None:
    if key == "Parent IDs":
        return "rdd" if "RDD ID" in owner else "stage"
    if key == "ID":
        return "accum"
    return _ID_KEYS.get(key)


def _block_id(value: str, rdd_offset: int) -> str:
    if value.startswith("rdd_"):
        parts = value.split("_")
        if len(parts) == 3 and parts[1].isdigit():
            return f"rdd_{int(parts[1]) + rdd_offset}_{parts[2]}"
    return value


def _walk(node: Any, shift: Shift, seen: dict[str, int] | None) -> Any:
    """Returns ``node`` with ids and times shifted; with ``seen``, records the largest id per
    space instead (the shift is then zero). One function for both so they cannot disagree
    about which keys are ids."""
    if isinstance(node, list):
        return [_walk(item, shift, seen) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        space = _space_of(key, node)
        if space is not None and isinstance(value, int) and not isinstance(value, bool):
            if seen is not None:
                seen[space] = max(seen[space], value)
            out[key] = value + shift.ids[space] if value >= 0 else value
        elif space is not None and isinstance(value, list):
            ints = [v for v in value if isinstance(v, int)]
            if seen is not None and ints:
                seen[space] = max(seen[space], *ints)
            out[key] = [v + shift.ids[space] if isinstance(v, int) else v for v in value]
        elif key in _TIME_KEYS and isinstance(value, int):
            out[key] = value + shift.millis if value > 0 else value
        elif key == "accumUpdates" and isinstance(value, list):
            pairs = [p for p in value if isinstance(p, list) and p and isinstance(p[0], int)]
            if seen is not None and pairs:
                seen["accum"] = max(seen["accum"], *(p[0] for p in pairs))
            out[key] = [[p[0] + shift.ids["accum"], *p[1:]] for p in pairs]
        elif key == "Block ID" and isinstance(value, str):
            out[key] = _block_id(value, shift.ids["rdd"])
        elif key == "Properties" and isinstance(value, dict):
            props = dict(value)
            for name in _EXECUTION_ID_PROPERTIES:
                raw = props.get(name)
                if isinstance(raw, str) and raw.lstrip("-").isdigit():
                    if seen is not None:
                        seen["sql"] = max(seen["sql"], int(raw))
                    if int(raw) >= 0:
                        props[name] = str(int(raw) + shift.ids["sql"])
            out[key] = props
        else:
            out[key] = _walk(value, shift, seen)
    if _SQL_TIME_KEY in out and "executionId" in out and isinstance(out[_SQL_TIME_KEY], int):
        out[_SQL_TIME_KEY] += shift.millis
    return out


def read_lines(path: Path) -> Iterator[bytes]:
    """Lines of a plain or zstd event log (zstd frames read across, as Spark writes them)."""
    with path.open("rb") as raw:
        head = raw.read(4)
        raw.seek(0)
        if head == ZSTD_MAGIC:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            yield from io.BufferedReader(reader, buffer_size=1 << 20)
        else:
            yield from raw


def _events(path: Path) -> Iterator[dict[str, Any]]:
    for line in read_lines(path):
        if line.strip():
            yield json.loads(line)


@dataclass
class Survey:
    """One pass over the source: the largest id per space and the time span of the jobs."""

    max_ids: dict[str, int]
    first_ms: int
    last_ms: int


def survey(path: Path) -> Survey:
    seen = dict.fromkeys(SPACES, -1)
    times: list[int] = []
    zero = Shift()
    for event in _events(path):
        if event.get("Event") not in _JOB_EVENTS:
            continue
        _walk(event, zero, seen)
        for key in ("Submission Time", "Completion Time", "time"):
            if isinstance(event.get(key), int):
                times.append(event[key])
        info = event.get("Task Info") or {}
        if isinstance(info.get("Finish Time"), int) and info["Finish Time"] > 0:
            times.append(info["Finish Time"])
    if not times:
        sys.exit(f"{path}: no job events to replicate")
    return Survey(max_ids=seen, first_ms=min(times), last_ms=max(times))


def replica_shift(found: Survey, index: int, gap_ms: int = 1000) -> Shift:
    """Replica ``index`` (0 is the original) renumbers past all earlier replicas' ids and
    starts ``gap_ms`` after the previous replica's last job event."""
    span = found.last_ms - found.first_ms + gap_ms
    ids = {space: index * (found.max_ids[space] + 1) for space in SPACES}
    return Shift(ids=ids, millis=index * span)


def replicate(path: Path, times: int) -> Iterator[dict[str, Any]]:
    """The replicated log's events, in order: the original (with its application-level events),
    then ``times - 1`` copies of its job events, then the application end."""
    found = survey(path)
    app_end: dict[str, Any] | None = None
    for event in _events(path):
        if event.get("Event") == _APP_END:
            app_end = event
        else:
            yield event
    for index in range(1, times):
        shift = replica_shift(found, index)
        for event in _events(path):
            if event.get("Event") in _JOB_EVENTS:
                yield _walk(event, shift, None)
    if app_end is not None:
        end = dict(app_end)
        last = replica_shift(found, times - 1).millis
        if isinstance(end.get("Timestamp"), int):
            end["Timestamp"] += last
        yield end


# Events Spark's EventLoggingListener writes without a flush; every other event flushes, and
# zstd-jni ends the frame at each flush.
_UNFLUSHED = frozenset(
    {
        "SparkListenerTaskStart",
        "SparkListenerTaskGettingResult",
        "SparkListenerTaskEnd",
        "SparkListenerStageSubmitted",
        "SparkListenerEnvironmentUpdate",
        "SparkListenerStageExecutorMetrics",
    }
)


def write_events(events: Iterable[dict[str, Any]], out: Path) -> int:
    """Writes JSON lines (zstd unless ``out`` ends in .json); returns the raw byte count.

    zstd is framed as Spark writes it, so decompression costs what it costs on Spark's own
    logs: level 1, no content size, and a frame ends after every event Spark flushes (jobs,
    completed stages, SQL and other events), while task events run on in the same frame."""
    raw_bytes = 0
    compressor = zstandard.ZstdCompressor(level=1, write_content_size=False)
    plain = out.suffix == ".json"
    with out.open("wb") as fh:
        frame, pending = compressor.compressobj(), False
        for event in events:
            line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
            raw_bytes += len(line)
            if plain:
                fh.write(line)
                continue
            fh.write(frame.compress(line))
            pending = True
            if event.get("Event") not in _UNFLUSHED:
                fh.write(frame.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
                frame, pending = compressor.compressobj(), False
        if pending:
            fh.write(frame.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
    return raw_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="a Spark event log (plain JSON lines or zstd)")
    parser.add_argument("--times", type=int, default=4, help="copies of the jobs (1 = as is)")
    parser.add_argument("--out", type=Path, help="output file (default build/bench/...)")
    args = parser.parse_args()
    if args.times < 1:
        parser.error("--times must be at least 1")
    out = args.out or (
        Path(__file__).resolve().parents[1] / "build" / "bench" / f"replicated-{args.times}x.zstd"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    raw = write_events(replicate(args.log, args.times), tmp)
    tmp.replace(out)
    print(f"wrote {out}: {raw / 1e6:.1f} MB raw, {out.stat().st_size / 1e6:.1f} MB on disk")


if __name__ == "__main__":
    main()
