"""Spark front end: a Spark event log → the framework-independent `ApplicationProfile`.

Events are folded into the profile one line at a time, so memory grows with the DAG
(jobs, stages, task attempts) and never with the log. Bad lines are reported with file
and line number and skipped; the rest is still analysed. This module reads: files,
blocks of lines and damaged text; `perfmodel.spark.builder` folds the decoded events.
"""

from __future__ import annotations

import gc
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from perfmodel.dag.loaded import LoadedProfile
from perfmodel.dag.model import HostUsage
from perfmodel.errors import NotAnEventLogError
from perfmodel.extras import require_extra
from perfmodel.profile import jvm_cpu, thread_cpu
from perfmodel.profile.bundle import find_event_log, is_bundle, load_resources, read_manifest
from perfmodel.profile.eventlog import (
    DEFAULT_MAX_DECOMPRESSED,
    EventLogSource,
    LogProblem,
    ProblemList,
    TextBlock,
    iter_blocks,
    resolve_event_log,
)
from perfmodel.profile.quality import line_problem_kind
from perfmodel.profile.sources.stores import LogPath
from perfmodel.profile.sources.uri import is_local, local_part
from perfmodel.spark import events as ev
from perfmodel.spark.builder import ProfileBuilder

SNIFF_LINES = 200
"""Lines read before a file with no Spark event in them is declared not an event log."""


def build_profile(
    path: str | LogPath,
    attempt: str | None = None,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> LoadedProfile:
    """Read the event log at ``path`` (file, compressed file, rolling directory or bundle;
    local or remote: see `perfmodel.profile.sources`)."""
    # A bundle is a local directory `perfmodel record` wrote; a remote location never is one.
    local = path if isinstance(path, Path) else None
    if isinstance(path, str) and is_local(path):
        local = Path(local_part(path))
    bundle = local if local is not None and is_bundle(local) else None
    if bundle is not None:
        # Before any reading: a bundle's sample tables are Parquet.
        require_extra("bundles", f"reading the recorded bundle {bundle}")
    source = resolve_event_log(find_event_log(bundle) if bundle else path, attempt)
    loaded = fold_source(source, max_decompressed_bytes=max_decompressed_bytes)
    if bundle is not None:
        loaded.bundle = bundle
        manifest = read_manifest(bundle)
        if manifest.host_cores:
            # What-if replay needs the host's real core count; a local run's log lacks it.
            loaded.profile.extra["host_cores"] = manifest.host_cores
        if manifest.executor_hosts:
            # Executors that ran on the recording machine, and their CPU limits.
            loaded.profile.extra["executor_hosts"] = manifest.executor_hosts
        loaded.profile.host_usage = _host_usage(bundle)
        loaded.profile.thread_cpu = thread_cpu.load(bundle)
        loaded.profile.jvm_cpu = jvm_cpu.load(bundle)
    return loaded


Hook = Callable[[Any], None]
"""A function of one decoded event (`perfmodel.spark.events`)."""


def fold_source(
    source: EventLogSource,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    hooks: Mapping[bytes, Hook] | None = None,
) -> LoadedProfile:
    """Fold a resolved log's events into a profile.

    ``hooks`` are called after the builder's own handler for the events they name (an
    event name such as ``b"SparkListenerStageCompleted"`` → a function of the decoded
    event): how `perfmodel.spark.live` sees stages complete while a log is still being
    written, with the same reader and builder as any other load. The source's parts may
    grow while they are read (`perfmodel.profile.sources.follow`).
    """
    problems = ProblemList()
    builder = ProfileBuilder(source)
    handlers = dict(builder.handlers)
    for name, hook in (hooks or {}).items():
        handlers[name] = _chained(handlers.get(name), hook)
    reader = _EventReader(source, handlers)
    blocks = iter_blocks(source, problems, max_decompressed_bytes=max_decompressed_bytes)
    with gc_paused():
        builder.profile.event_counts = reader.consume(blocks, problems)
        builder.profile.event_count = reader.valid_events
        loaded = _loaded(builder, reader.header_lines, problems)
        builder.release()
    counts = loaded.profile.event_counts
    unknown = {name: n for name, n in counts.items() if not ev.is_known_event(name)}
    loaded.quality.count_reading(problems, unknown)
    note = problems.summary()
    if note is not None:
        list.append(problems, note)
    return loaded


def _chained(first: Hook | None, then: Hook) -> Hook:
    if first is None:
        return then

    def both(event: Any) -> None:
        first(event)
        then(event)

    return both


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while the DAG is built (and, in the facade,
    while the workload is compiled, replayed and diagnosed).

    Ingest allocates tracked objects per event and frees no cycles, so every collection
    is wasted work, and the full ones walk the whole growing DAG again and again. Nothing
    is left for the collector afterwards either (decoded events are freed by reference
    counting), so pausing it costs no memory. The same holds for the analysis steps after
    it, where the collections walked the whole loaded profile: ~0.5 s of a 2.5 s diagnosis
    of a 6,000-stage log.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _host_usage(bundle: Path) -> HostUsage | None:
    samples = load_resources(bundle)
    if len(samples) < 2:
        return None
    return HostUsage(
        t_ms=[s.t_ms for s in samples],
        cores=[s.cpu_cores for s in samples],
    )


def _loaded(
    builder: ProfileBuilder, header_lines: int, problems: list[LogProblem]
) -> LoadedProfile:
    """The finished profile, with what reading it met."""
    profile = builder.finish()
    bad = (
        problems.line_problems
        if isinstance(problems, ProblemList)
        else sum(1 for pr in problems if pr.line is not None)
    )
    if bad:
        profile.warnings.append(f"{bad} line(s) could not be read and were skipped (see problems)")
    tasks = builder.tasks
    return LoadedProfile(
        profile=profile,
        source=builder.source,
        problems=problems,
        task_end_events=tasks.task_end_events,
        task_end_reasons=dict(sorted(tasks.task_end_reasons.items())),
        header_lines_skipped=header_lines,
        quality=builder.quality,
    )


class _EventReader:
    """Decodes the log's lines and hands each event to its handler in the builder."""

    def __init__(
        self, source: EventLogSource, handlers: dict[bytes, Callable[[Any], None]]
    ) -> None:
        self.source = source
        self.handlers = handlers
        self.header_lines = 0
        self._first_problem: LogProblem | None = None
        self._seen_lines = 0
        self.valid_events = 0

    def consume(self, blocks: Iterable[TextBlock], problems: list[LogProblem]) -> dict[str, int]:
        """Hand every line's event to its handler, and count the events by name: the hot
        loop of ingest.

        A block of lines is decoded in one C call when every line in it is a standard
        Spark event; a block with anything else (a header, a corrupt line, a custom
        listener's event) is decoded line by line, which finds and reports the culprit.
        """
        counts: dict[bytes, int] = {}
        type_counts: Counter[type[msgspec.Struct]] = Counter()
        handler_of = {
            cls: self.handlers[name.encode()]
            for name, cls in ev.EVENT_TYPES.items()
            if name.encode() in self.handlers
        }
        decode_block = ev.BLOCK_DECODER.decode_lines
        errors = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
        for block in blocks:
            if self.valid_events:
                try:
                    events = decode_block(block.data)
                except errors:
                    pass
                else:
                    self.valid_events += len(events)
                    self._seen_lines += len(events)
                    type_counts.update(map(type, events))
                    for event in events:
                        handler = handler_of.get(type(event))
                        if handler is not None:
                            handler(event)
                    continue
            self._consume_lines(block, problems, counts)
        for cls, n in type_counts.items():
            name = str(cls.__struct_config__.tag).encode()
            counts[name] = counts.get(name, 0) + n
        first_problem = self._first_problem
        if self.valid_events == 0:
            if first_problem is None:
                raise NotAnEventLogError(
                    f"{self.source.path}: no events in it (empty after decompression)."
                )
            raise NotAnEventLogError(_not_an_event_log(self.source, first_problem))
        if self.header_lines:
            problems.insert(
                0,
                LogProblem(
                    first_problem.file if first_problem else str(self.source.path),
                    None,
                    f"skipped {self.header_lines} non-event header line(s) before the first event",
                ),
            )
        return {k.decode(): v for k, v in counts.items()}

    def _consume_lines(
        self, block: TextBlock, problems: list[LogProblem], counts: dict[bytes, int]
    ) -> None:
        """The careful path: one line at a time, with line numbers for every problem."""
        decoders = ev.DECODERS
        handlers = self.handlers
        prefix = ev.EVENT_PREFIX
        errors = (msgspec.DecodeError, msgspec.ValidationError, TooDeepError)
        bounded = problems if isinstance(problems, ProblemList) else None
        line_no = block.first_line - 1
        for data in bytes(block.data).split(b"\n")[: block.lines]:
            line_no += 1
            if not data or data.isspace():
                continue
            self._seen_lines += 1
            try:
                end = data.find(b'"', 10) if data.startswith(prefix) else -1
                name = data[10:end] if end > 10 else _deep(ev.event_name, data)
                decoder = decoders.get(name)
                event = _deep(decoder.decode, data) if decoder is not None else None
            except errors as exc:
                if self.valid_events == 0:
                    # Lines before the first event are a header some writers put there
                    # (Spark 1.2 metadata, vendor banners); they are not the log's events.
                    self.header_lines += 1
                    if self._first_problem is None:
                        self._first_problem = LogProblem(block.file, line_no, _describe(exc, data))
                    if self._seen_lines >= SNIFF_LINES:
                        message = _not_an_event_log(self.source, self._first_problem)
                        raise NotAnEventLogError(message) from exc
                    continue
                if bounded is not None and bounded.full:  # counted, no message built
                    bounded.count_only(block.file, line_no, line_problem_kind(str(exc)))
                    continue
                problems.append(LogProblem(block.file, line_no, _describe(exc, data)))
                continue
            self.valid_events += 1
            counts[name] = counts.get(name, 0) + 1
            if event is not None:
                handlers[name](event)


MAX_JSON_DEPTH = 2000
"""Deepest JSON nesting decoded (a SQL plan 1,000 operators deep: far beyond real plans,
which stay within a few hundred). msgspec recurses once per level, on the C stack; past
Python's recursion limit (1,000) a line is decoded again with the limit raised to this
bound, which the stack holds with room to spare; deeper lines are damage."""

_T = TypeVar("_T")
_DEPTH_SLACK = 50
"""Levels the decoder spends besides the JSON's own nesting (calls between them)."""


def _stack_depth() -> int:
    """Frames on the stack now (the recursion limit counts them too); only on the rare
    path of a line nested past Python's limit."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


class TooDeepError(ValueError):
    """A line nested deeper than `MAX_JSON_DEPTH`."""


def _deep(decode: Callable[[bytes], _T], data: bytes) -> _T:
    """``decode(data)``, allowing nesting up to `MAX_JSON_DEPTH` (see there)."""
    try:
        return decode(data)
    except RecursionError:
        pass
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _stack_depth() + MAX_JSON_DEPTH + _DEPTH_SLACK))
    try:
        return decode(data)
    except RecursionError:
        raise TooDeepError(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    finally:
        sys.setrecursionlimit(limit)


_PRINTABLE = re.compile(rb"[\x20-\x7e]")


def _describe(exc: Exception, data: bytes) -> str:
    snippet = data[:60]
    printable = len(_PRINTABLE.findall(snippet)) >= 0.9 * max(len(snippet), 1)
    shown = snippet.decode("utf-8", "replace") if printable else f"{len(data)} bytes of binary data"
    if isinstance(exc, msgspec.DecodeError | TooDeepError):
        kind = "not valid JSON"
    else:
        kind = "unexpected field values"
    return f"{kind} ({exc}); line starts: {shown!r}"


def _not_an_event_log(source: EventLogSource, first: LogProblem) -> str:
    return (
        f"{source.path} is not a Spark event log: no Spark listener event in its first "
        f"{SNIFF_LINES} lines (line {first.line} of {first.file}: {first.message}). "
        "Point perfmodel at a file from spark.eventLog.dir, a rolling eventlog_v2_* directory, "
        "or a profile bundle."
    )
