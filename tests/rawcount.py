"""Independent ground truth for the shared logs: count events the simplest way possible.

Decompresses with the plain libraries and json.loads every line, deliberately sharing no
code with perfmodel's reader, so the two can be compared.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

SQL = "org.apache.spark.sql.execution.ui."


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith((".zstd", ".zst")):
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(data), read_across_frames=True
        )
        return reader.read()
    if path.name.endswith(".gz"):
        return gzip.decompress(data)
    return data


def parts(path: Path) -> list[Path]:
    if path.is_dir():
        found = [p for p in path.iterdir() if p.name.startswith("events_")]
        return sorted(found, key=lambda p: int(re.match(r"events_(\d+)_", p.name).group(1)))
    return [path]


@dataclass
class RawCounts:
    events: Counter = field(default_factory=Counter)
    task_end_reasons: Counter = field(default_factory=Counter)
    stage_completed: set = field(default_factory=set)
    stage_failed: set = field(default_factory=set)
    app_start: int | None = None
    app_end: int | None = None

    @property
    def jobs(self) -> int:
        return self.events["SparkListenerJobStart"]

    @property
    def sql(self) -> int:
        return self.events[SQL + "SparkListenerSQLExecutionStart"]

    @property
    def task_ends(self) -> int:
        return self.events["SparkListenerTaskEnd"]

    @property
    def failed_tasks(self) -> int:
        return sum(n for r, n in self.task_end_reasons.items() if r != "Success")


def count(path: Path) -> RawCounts:
    out = RawCounts()
    for part in parts(path):
        for line in _read(part).splitlines():
            if not line.strip():
                continue
            event = json.loads(line)
            name = event["Event"]
            out.events[name] += 1
            if name == "SparkListenerTaskEnd":
                out.task_end_reasons[event["Task End Reason"]["Reason"]] += 1
            elif name == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                key = (info["Stage ID"], info.get("Stage Attempt ID", 0))
                (out.stage_failed if "Failure Reason" in info else out.stage_completed).add(key)
            elif name == "SparkListenerApplicationStart":
                out.app_start = event["Timestamp"]
            elif name == "SparkListenerApplicationEnd":
                out.app_end = event["Timestamp"]
    return out
