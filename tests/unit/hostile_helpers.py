"""Shared pieces of the hostile-input tests (issue 42): a real Spark log as events to edit,
and the memory-limited command worker of the fuzz suites (`tests.fuzz_support.Worker`), so
growth sized by a number in the input fails a test instead of exhausting the machine."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import msgspec

from perfmodel.profile.codecs import iter_decompressed
from tests.conftest import TEST_DATA

WORDCOUNT = TEST_DATA / "eventlogs" / "wordcount.zstd"
"""A real Spark 4 log (local mode, one SQL query, 11 tasks), in the repository."""


@functools.cache
def _wordcount_lines() -> tuple[bytes, ...]:
    data = b"".join(iter_decompressed(WORDCOUNT))
    return tuple(line for line in data.split(b"\n") if line)


def wordcount_events() -> list[dict[str, Any]]:
    """The events of `WORDCOUNT`, decoded afresh (each caller may edit its copy)."""
    return [json.loads(line) for line in _wordcount_lines()]


def write_events(path: Path, events: list[Any]) -> Path:
    """JSON lines; an event given as ``bytes`` or ``str`` is written as it is."""
    with path.open("wb") as f:
        for event in events:
            if isinstance(event, bytes):
                f.write(event)
            elif isinstance(event, str):
                f.write(event.encode())
            else:
                f.write(msgspec.json.encode(event))
            f.write(b"\n")
    return path


def first(events: list[dict[str, Any]], name: str, **where: Any) -> dict[str, Any]:
    """The first event named ``name`` (``SparkListener`` may be left out)."""
    for event in events:
        if event["Event"] in (name, "SparkListener" + name):
            if all(event.get(k) == v for k, v in where.items()):
                return event
    raise AssertionError(f"no {name} event")
