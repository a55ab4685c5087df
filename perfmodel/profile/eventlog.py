"""Finding a Spark event log on disk and streaming its lines.

Spark writes an application's event log in several shapes, and users point at them in several
ways, so resolving "the log the user means" is a step of its own:

* a single file ``<appId>[_<attempt>][.<codec>][.inprogress]`` (Spark 1.3+);
* a rolling directory ``eventlog_v2_<appId>[_<attempt>]/`` with parts ``events_<n>_...`` and an
  ``appstatus_...[.inprogress]`` marker (Spark 3.0+, the default since Spark 4);
* a legacy directory with ``EVENT_LOG_<n>`` files and an ``APPLICATION_COMPLETE`` marker
  (Spark 1.0-1.2);
* a directory holding any of the above, or a path prefix naming an application whose attempts
  (``<appId>_1``, ``<appId>_2``) lie beside it.

Streaming is kept deliberately dumb and fast: decompressed data arrives in multi-megabyte pieces,
``bytes.split`` cuts them into lines, and nothing else happens per line, because the JSON decoding
that follows is where the time should go. Damage (a cut-off stream, an unreadable part) is
collected as :class:`LogProblem` records instead of exceptions, so a diagnosis can still be made
from the part of a log that survived.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from perfmodel.errors import (
    AmbiguousEventLogError,
    DecompressionLimitError,
    EventLogNotFoundError,
    NotAnEventLogError,
    PerfmodelError,
)
from perfmodel.profile.codecs import (
    CODEC_SUFFIXES,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_MAX_DECOMPRESSED,
    HEAD_SIZE,
    DecompressionBudget,
    StreamProblem,
    format_bytes,
    iter_decompressed,
    sniff_codec,
)
from perfmodel.profile.linecheck import is_cut_event, repair_utf8

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "MAX_LINE_BYTES",
    "EventLogSource",
    "LineBatch",
    "LogProblem",
    "RawLine",
    "iter_line_batches",
    "iter_lines",
    "resolve_event_log",
]

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Longest line kept. Real events stay far below (the biggest are SQL plans of a few MB); a
longer "line" is binary junk without newlines, and holding it would defeat streaming."""

_ROLLING_PREFIX = "eventlog_v2_"
_APPSTATUS_PREFIX = "appstatus_"
_EVENTS_RE = re.compile(r"events_(\d+)_(.+)")
_LEGACY_EVENTS_RE = re.compile(r"EVENT_LOG_(\d+)")
_LEGACY_COMPLETE = "APPLICATION_COMPLETE"
_IN_PROGRESS = ".inprogress"
_COMPACT = ".compact"
# Suffixes people add to plain logs; stripped from the app key only.
_PLAIN_SUFFIXES = frozenset({"json", "jsonl", "txt", "log"})
# YARN application ids contain underscores themselves; other ids (local-…, app-…, spark-…) do not.
_YARN_ATTEMPT_RE = re.compile(r"(application_\d+_\d+)_(\d+)")
_OTHER_ATTEMPT_RE = re.compile(r"([^_]+)_(\d+)")
_MAX_LISTED = 20
_NEWLINE = ord("\n")
_NUMPY_COUNT_MIN = 64 * 1024  # below this, numpy's per-call overhead outweighs its speed

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class LogProblem:
    """One problem found while reading; shown to the user."""

    file: str
    line: int | None  # 1-based line in the decompressed part; None if not line-specific
    message: str
    kind: str | None = None
    """The kind of damage (`perfmodel.profile.quality.DAMAGE_KINDS`), if it is damage; a
    line problem without one is classified from its message (`DataQuality.count_reading`)."""


@dataclass(slots=True)
class EventLogSource:
    """What a user's path resolved to."""

    path: Path  # the path the user gave
    app_key: str  # app id (+ attempt) as inferred from the name
    parts: list[Path]  # files to read, in order
    attempt: str | None
    other_attempts: list[str] = field(default_factory=list)
    in_progress: bool = False
    missing_parts: list[int] = field(default_factory=list)
    """Numbers absent from a rolling (or legacy) log's parts, e.g. 2 of events_1, events_3."""


@dataclass(slots=True)
class RawLine:
    file: str
    line: int  # 1-based within the part
    data: bytes  # one JSON line without the trailing newline


@dataclass(slots=True)
class LineBatch:
    """Consecutive lines of one part: ``lines[i]`` is line ``first_line + i``.

    Empty lines are kept (so numbering needs no per-line bookkeeping); skip them. This is the
    fast path for a decoder that wants to loop over plain ``bytes`` itself.
    """

    file: str
    first_line: int
    lines: list[bytes]


@dataclass(slots=True)
class TextBlock:
    """Whole consecutive lines of one part as one buffer, starting at line ``first_line``.

    ``data`` is a view into the decompressed piece where possible (no copy per line): the
    fastest input for a decoder that can parse many JSON lines in one call. It ends with a
    newline, except for the last block of a part whose last line has none.
    """

    file: str
    first_line: int
    data: bytes | memoryview
    lines: int
    """Lines in ``data`` (a final line without a newline counts)."""


# ---------------------------------------------------------------------------------------------
# Names


def _split_name(name: str) -> tuple[str, bool]:
    """``(key, in_progress)`` from a log file name: strip ``.inprogress``/``.compact``/codec."""
    in_progress = False
    while True:
        if name.endswith(_IN_PROGRESS):
            name = name[: -len(_IN_PROGRESS)]
            in_progress = True
        elif name.endswith(_COMPACT):
            name = name[: -len(_COMPACT)]
        else:
            break
    stem, dot, ext = name.rpartition(".")
    if dot and stem and (ext.lower() in CODEC_SUFFIXES or ext.lower() in _PLAIN_SUFFIXES):
        name = stem
    return name, in_progress


def _split_attempt(key: str) -> tuple[str, str | None]:
    """``(app id, attempt)`` from a key; Spark appends ``_<attempt>`` to the app id.

    Only numeric attempts after a recognisable app id count, so names like
    ``spark_event_log_example`` or ``my_job_2024`` are not misread as attempts.
    """
    m = _YARN_ATTEMPT_RE.fullmatch(key)
    if m is None and not key.startswith("application_"):
        m = _OTHER_ATTEMPT_RE.fullmatch(key)
    if m is None:
        return key, None
    return m.group(1), m.group(2)


def _attempt_order(attempt: str | None) -> tuple[int, int, str]:
    if attempt is None:
        return (0, 0, "")
    if attempt.isdigit():
        return (1, int(attempt), "")
    return (2, 0, attempt)


def _skip_entry(name: str) -> bool:
    # Hidden files include Hadoop's .<name>.crc checksums that local-FS writes leave beside logs.
    return name.startswith(".") or name.endswith(".crc")


@dataclass(slots=True)
class _Candidate:
    path: Path
    key: str
    kind: str  # "file" | "rolling" | "legacy"
    app: str = ""
    attempt: str | None = None

    def __post_init__(self) -> None:
        self.app, self.attempt = _split_attempt(self.key)


def _list_dir(d: Path) -> list[str]:
    with os.scandir(d) as it:
        return [e.name for e in it]


def _rolling_key_from_parts(d: Path) -> str | None:
    try:
        names = sorted(_list_dir(d))
    except OSError:
        return None
    for name in names:
        m = _EVENTS_RE.fullmatch(name)
        if m:
            return _split_name(m.group(2))[0]
    return None


def _is_legacy_dir(d: Path) -> bool:
    try:
        return any(_LEGACY_EVENTS_RE.fullmatch(name) for name in _list_dir(d))
    except OSError:
        return False


def _dir_candidate(d: Path) -> _Candidate | None:
    name = d.name
    if name.startswith(_ROLLING_PREFIX):
        return _Candidate(d, name[len(_ROLLING_PREFIX) :], "rolling")
    if _is_legacy_dir(d):
        return _Candidate(d, name, "legacy")
    key = _rolling_key_from_parts(d)
    if key is not None:  # a rolling directory that someone renamed
        return _Candidate(d, key, "rolling")
    return None


def _file_candidate(p: Path) -> _Candidate:
    return _Candidate(p, _split_name(p.name)[0], "file")


def _looks_like_log(p: Path) -> bool:
    """Cheap content check for directory scans. Plain text must mention an "Event" field near
    its start (every Spark event has one), so READMEs, manifests and other JSON are not taken
    for logs; compressed data is recognised by its magic bytes."""
    try:
        with open(p, "rb") as f:
            head = f.read(HEAD_SIZE)
    except OSError:
        return False
    codec = sniff_codec(head) if head else None
    if codec == "plain":
        return b'"Event"' in head
    return codec is not None


def _scan(d: Path, *, sniff: bool) -> list[_Candidate]:
    """Event logs directly inside ``d``. ``sniff`` checks file contents (slower, but a directory
    of logs often holds READMEs and such); without it, names decide."""
    out: list[_Candidate] = []
    try:
        with os.scandir(d) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as e:
        raise NotAnEventLogError(f"Cannot list {d}: {e.strerror or e}.") from None
    for entry in entries:
        if _skip_entry(entry.name):
            continue
        p = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir:
            cand = _dir_candidate(p) if sniff else None
            if cand is None and entry.name.startswith(_ROLLING_PREFIX):
                cand = _Candidate(p, entry.name[len(_ROLLING_PREFIX) :], "rolling")
            if cand is not None:
                out.append(cand)
        elif not sniff or _looks_like_log(p):
            out.append(_file_candidate(p))
    return out


# ---------------------------------------------------------------------------------------------
# Resolution


def resolve_event_log(path: str | Path, attempt: str | None = None) -> EventLogSource:
    """Turn what the user typed into the list of files of one application attempt.

    ``attempt`` picks an attempt of a multi-attempt application (default: the latest). Pointing
    at one part of a rolling directory (or its ``appstatus`` marker) means the whole directory:
    a lone later part lacks the events that start the application, so reading it alone would
    only produce a misleading diagnosis.
    """
    given = Path(path)
    p = given.expanduser()
    if attempt is not None:
        attempt = str(attempt)
    if p.is_file():
        parent = p.parent
        in_rolling = parent.name.startswith(_ROLLING_PREFIX) and (
            _EVENTS_RE.fullmatch(p.name) is not None or p.name.startswith(_APPSTATUS_PREFIX)
        )
        in_legacy = _LEGACY_EVENTS_RE.fullmatch(p.name) is not None and _is_legacy_dir(parent)
        if in_rolling or in_legacy:
            cand = _dir_candidate(parent)
            assert cand is not None
            return _resolve_with_siblings(given, cand, attempt)
        return _resolve_with_siblings(given, _file_candidate(p), attempt)
    if p.is_dir():
        cand = _dir_candidate(p)
        if cand is not None:
            return _resolve_with_siblings(given, cand, attempt)
        cands = _scan(p, sniff=True)
        if not cands:
            raise NotAnEventLogError(
                f"{given} is a directory without Spark event logs in it (no JSON-lines or "
                "compressed event-log files, no eventlog_v2_* directories)."
            )
        return _select(given, cands, attempt, where=f"{given}")
    if p.exists():
        raise NotAnEventLogError(f"{given} is neither a file nor a directory.")
    return _resolve_prefix(given, p, attempt)


def _resolve_prefix(given: Path, p: Path, attempt: str | None) -> EventLogSource:
    """``logs/application_1_0001`` when only ``logs/application_1_0001_<n>`` exist."""
    parent = p.parent
    if not parent.is_dir():
        raise EventLogNotFoundError(
            f"No event log at {given}: the directory {parent} does not exist either."
        )
    key = _split_name(p.name)[0]
    cands = _scan(parent, sniff=False)
    matching = [c for c in cands if c.app == key or c.key == key]
    if matching:
        return _select(given, matching, attempt, where=f"{parent} for {key}")
    names = [c.path.name for c in cands]
    close = difflib.get_close_matches(p.name, names, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(str(parent / n) for n in close)}?" if close else ""
    if not close and names:
        hint = f" Point perfmodel at {parent} itself to list the event logs there."
    raise EventLogNotFoundError(f"No event log at {given}.{hint}")


def _resolve_with_siblings(given: Path, cand: _Candidate, attempt: str | None) -> EventLogSource:
    """The user named one log; still look beside it for other attempts of the same app."""
    siblings = [c for c in _scan(cand.path.parent, sniff=False) if c.app == cand.app]
    if not any(c.path == cand.path for c in siblings):
        siblings.append(cand)
    if attempt is not None and attempt != cand.attempt:
        return _select(given, siblings, attempt, where=f"{cand.path.parent} for {cand.app}")
    return _materialize(given, cand, _other_attempts(siblings, cand.attempt))


def _other_attempts(cands: Iterable[_Candidate], chosen: str | None) -> list[str]:
    others = {c.attempt for c in cands if c.attempt is not None and c.attempt != chosen}
    return sorted(others, key=_attempt_order)


def _listing(paths: list[Path]) -> str:
    shown = [f"  {p}" for p in paths[:_MAX_LISTED]]
    if len(paths) > _MAX_LISTED:
        shown.append(f"  ... and {len(paths) - _MAX_LISTED} more")
    return "\n".join(shown)


def _select(
    given: Path, cands: list[_Candidate], attempt: str | None, *, where: str
) -> EventLogSource:
    apps = sorted({c.app for c in cands})
    if len(apps) > 1:
        raise AmbiguousEventLogError(
            f"{given} holds event logs of {len(apps)} applications; point at one of them:\n"
            + _listing([c.path for c in cands])
        )
    by_attempt: dict[str | None, list[_Candidate]] = defaultdict(list)
    for c in cands:
        by_attempt[c.attempt].append(c)
    if attempt is None:
        chosen_attempt = max(by_attempt, key=_attempt_order)
    elif attempt in by_attempt:
        chosen_attempt = attempt
    else:
        known = [a for a in sorted(by_attempt, key=_attempt_order) if a is not None]
        listed = ", ".join(known) if known else "none (the log carries no attempt id)"
        raise EventLogNotFoundError(
            f"No attempt {attempt} of application {apps[0]} in {where}; attempts found: {listed}."
        )
    chosen = by_attempt[chosen_attempt]
    if len(chosen) > 1:
        raise AmbiguousEventLogError(
            f"{given} holds several event logs for the same application attempt "
            f"({chosen[0].key}); point at one of them:\n" + _listing([c.path for c in chosen])
        )
    return _materialize(given, chosen[0], _other_attempts(cands, chosen_attempt))


def _materialize(given: Path, cand: _Candidate, others: list[str]) -> EventLogSource:
    missing: list[int] = []
    if cand.kind == "rolling":
        parts, in_progress, missing = _rolling_parts(cand.path)
    elif cand.kind == "legacy":
        parts, in_progress, missing = _legacy_parts(cand.path)
    else:
        in_progress = _split_name(cand.path.name)[1]
        try:
            empty = cand.path.stat().st_size == 0
        except OSError as e:
            raise NotAnEventLogError(f"Cannot read {cand.path}: {e.strerror or e}.") from None
        if empty:
            why = " (Spark has only just started writing it)" if in_progress else ""
            raise NotAnEventLogError(f"{cand.path} is empty{why}; there are no events to read.")
        parts = [cand.path]
    return EventLogSource(
        path=given,
        app_key=cand.key,
        parts=parts,
        attempt=cand.attempt,
        other_attempts=others,
        in_progress=in_progress,
        missing_parts=missing,
    )


def _missing_numbers(numbers: list[int], first: int) -> list[int]:
    """Part numbers absent between ``first`` and the highest present (sorted input).

    Spark numbers rolling parts from 1 without gaps, so a gap is a part that was lost
    (deleted, not copied); its events are missing from the analysis.
    """
    present = set(numbers)
    if not numbers:
        return []
    return [n for n in range(first, numbers[-1]) if n not in present]


def _rolling_parts(d: Path) -> tuple[list[Path], bool, list[int]]:
    """Parts in numeric order (``events_10`` after ``events_9``), the in-progress flag and
    the numbers missing from the sequence.

    Follows Spark's reader: when compaction has run, reading starts at the newest
    ``*.compact`` part, which replaces all parts before it. Without an ``appstatus`` marker the
    state is unknown; it is taken as complete (the events themselves tell the rest).
    """
    events: list[tuple[int, str, Path]] = []
    statuses: list[str] = []
    try:
        with os.scandir(d) as it:
            entries = list(it)
    except OSError as e:
        raise NotAnEventLogError(f"Cannot list {d}: {e.strerror or e}.") from None
    for entry in entries:
        name = entry.name
        if _skip_entry(name):
            continue
        m = _EVENTS_RE.fullmatch(name)
        if m is not None and entry.is_file():
            events.append((int(m.group(1)), name, Path(entry.path)))
        elif name.startswith(_APPSTATUS_PREFIX):
            statuses.append(name)
    if not events:
        raise NotAnEventLogError(
            f"{d} is a rolling event-log directory without any events_<n>_* part "
            "(Spark may not have written the first part yet)."
        )
    events.sort()
    start = max(
        (i for i, (_, name, _) in enumerate(events) if name.endswith(_COMPACT)),
        default=0,
    )
    kept = events[start:]
    parts = [p for _, _, p in kept]
    # After compaction, the compact part stands for all numbers up to its own.
    missing = _missing_numbers([n for n, _, _ in kept], kept[0][0] if start else 1)
    return parts, any(s.endswith(_IN_PROGRESS) for s in statuses), missing


def _legacy_parts(d: Path) -> tuple[list[Path], bool, list[int]]:
    """Spark 1.0-1.2 log directories: ``EVENT_LOG_<n>`` files, done once APPLICATION_COMPLETE
    exists. The codec (named by a ``COMPRESSION_CODEC_*`` marker) is recognised from the data."""
    events = []
    for name in _list_dir(d):
        m = _LEGACY_EVENTS_RE.fullmatch(name)
        if m is not None:
            events.append((int(m.group(1)), d / name))
    events.sort()
    missing = _missing_numbers([n for n, _ in events], events[0][0] if events else 1)
    return [p for _, p in events], not (d / _LEGACY_COMPLETE).exists(), missing


# ---------------------------------------------------------------------------------------------
# Streaming


def iter_lines(
    source: EventLogSource,
    problems: list[LogProblem],
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[RawLine]:
    """Every non-empty line of every part, in order; problems go to ``problems``.

    Empty and whitespace-only lines are skipped (their numbers still count). A last line
    without a newline is yielded too (it may be cut off; parsing will tell). A line may end in
    ``\r`` (CRLF files); JSON parsers accept that as trailing whitespace.
    Raises :class:`NotAnEventLogError` (or another ``PerfmodelError``) only if no part at all
    could be read, and :class:`~perfmodel.errors.DecompressionLimitError` on the cap.
    """
    for batch in iter_line_batches(source, problems, max_decompressed_bytes=max_decompressed_bytes):
        file = batch.file
        for n, data in enumerate(batch.lines, batch.first_line):
            if data and not data.isspace():  # O(1) for JSON: stops at the "{"
                yield RawLine(file, n, data)


def iter_line_batches(
    source: EventLogSource,
    problems: list[LogProblem],
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[LineBatch]:
    """Like :func:`iter_lines`, but hands over whole lists of lines (the fast path)."""
    return _iter_parts(
        source, problems, max_decompressed_bytes, chunk_size, max_line_bytes, _split_lines
    )


def iter_blocks(
    source: EventLogSource,
    problems: list[LogProblem],
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[TextBlock]:
    """Like :func:`iter_line_batches`, but without cutting lines apart (the fastest path)."""
    return _iter_parts(
        source, problems, max_decompressed_bytes, chunk_size, max_line_bytes, _split_blocks
    )


@dataclass(slots=True)
class _ReadState:
    """What reading one log has met so far, across its parts."""

    lines_out: bool = False
    """Some whole line has been handed over (so a cap or junk later cuts a log short, rather
    than meeting something that was never a log)."""
    capped: bool = False


def _iter_parts(
    source: EventLogSource,
    problems: list[LogProblem],
    max_decompressed_bytes: int,
    chunk_size: int,
    max_line_bytes: int,
    split: Callable[[str, Iterator[bytes], list[LogProblem], int, _ReadState], Iterator[_T]],
) -> Iterator[_T]:
    """Every part's decompressed pieces, cut by ``split``; unreadable parts become problems."""
    budget = DecompressionBudget(max_decompressed_bytes)
    state = _ReadState()
    failures: list[tuple[str, PerfmodelError]] = []
    read_any = False
    last = len(source.parts) - 1
    legacy = bool(source.parts) and source.parts[0].name.startswith("EVENT_LOG_")
    for n in source.missing_parts:
        name = f"EVENT_LOG_{n}" if legacy else f"events_{n}_*"
        problems.append(
            LogProblem(
                str(Path(source.path) / name),
                None,
                f"part {n} of the log is missing (no {name} file); its events are not in the "
                "analysis",
                "missing_rolling_part",
            )
        )
    for i, part in enumerate(source.parts):
        file = str(part)
        if state.capped:
            problems.append(LogProblem(file, None, "not read: the decompression cap was reached"))
            continue
        # Only the newest part of an in-progress log is still open for writing; earlier rolled
        # parts were closed and must be complete.
        chunks = iter_decompressed(
            part,
            budget=budget,
            chunk_size=chunk_size,
            in_progress=source.in_progress and i == last,
        )
        try:
            first = next(chunks)
        except StopIteration:
            read_any = True
            continue
        except StreamProblem as e:  # damaged before the first decodable piece
            read_any = True
            problems.append(LogProblem(file, None, e.message, _stream_kind(e)))
            continue
        except DecompressionLimitError as e:
            if not state.lines_out:
                raise
            state.capped = True
            problems.append(LogProblem(file, None, _capped_message(e), "capped_stream"))
            continue
        except NotAnEventLogError as e:
            failures.append((file, e))
            continue
        except OSError as e:
            failures.append((file, PerfmodelError(f"Cannot read {file}: {e.strerror or e}.")))
            continue
        if not read_any:
            read_any = True
            problems.extend(_unreadable(f, e) for f, e in failures)
            failures = []
        yield from split(file, itertools.chain((first,), chunks), problems, max_line_bytes, state)
    if not state.lines_out and not failures:
        _refuse_if_cut_before_any_line(source, problems)
    if failures:
        if read_any:
            problems.extend(_unreadable(f, e) for f, e in failures)
        elif len(failures) == 1:
            raise failures[0][1]
        else:
            raise NotAnEventLogError(
                f"None of the {len(failures)} parts of {source.path} could be read:\n"
                + "\n".join(f"  {e}" for _, e in failures)
            )


def _refuse_if_cut_before_any_line(source: EventLogSource, problems: list[LogProblem]) -> None:
    """A log whose data ends or breaks before its first whole line is cut off, not empty."""
    cut = [p for p in problems if p.kind in ("truncated_tail", "corrupt_stream")]
    if cut:
        raise NotAnEventLogError(
            f"{source.path} holds no complete event: its data is cut off or damaged before "
            f"the first line ends ({cut[0].message})."
        )


def _unreadable(file: str, error: PerfmodelError) -> LogProblem:
    """A part that could not be read at all while others could: its events are lost."""
    return LogProblem(file, None, str(error), "corrupt_stream")


def _stream_kind(problem: StreamProblem) -> str:
    return "truncated_tail" if problem.truncated else "corrupt_stream"


def _capped_message(error: DecompressionLimitError) -> str:
    return f"{error} Events up to the cap were read; the rest of the log was not."


def _junk_without_newlines(file: str, max_line: int) -> NotAnEventLogError:
    return NotAnEventLogError(
        f"{file} is not a Spark event log: its first {format_bytes(max_line)} of (decompressed) "
        "data hold no line break, so no event could be read (binary data or a stream of zeros; "
        "reading stopped there)."
    )


def _split_blocks(
    file: str,
    chunks: Iterator[bytes],
    problems: list[LogProblem],
    max_line: int,
    state: _ReadState,
) -> Iterator[TextBlock]:
    """Cut pieces at their last newline, handing the whole lines over as views (no copies);
    a line spanning pieces is glued from its fragments into a block of its own.

    Lines that are not UTF-8 are blanked here (their numbers kept), so no decoder downstream
    meets them; the check is one ``isascii`` per piece unless the piece has other bytes.
    """
    lineno = 1
    pending: list[bytes] = []
    pending_len = 0
    skipping = False
    ended_early = False
    try:
        for chunk in chunks:
            first_nl = chunk.find(b"\n")
            if first_nl < 0:
                if not skipping:
                    pending.append(chunk)
                    pending_len += len(chunk)
                    if pending_len > max_line:
                        if not state.lines_out:
                            raise _junk_without_newlines(file, max_line)
                        problems.append(_too_long(file, lineno, max_line))
                        pending, pending_len, skipping = [], 0, True
                continue
            start = first_nl + 1
            if skipping:
                skipping = False
                lineno += 1
            elif pending:
                pending.append(chunk[:start])
                glued = b"".join(pending)
                yield _utf8_only(TextBlock(file, lineno, glued, 1), glued.isascii(), problems)
                state.lines_out = True
                lineno += 1
            else:
                start = 0
            pending, pending_len = [], 0
            last_nl = chunk.rfind(b"\n")
            if last_nl + 1 > start:
                n = _count_newlines(chunk, start, last_nl + 1)
                block = TextBlock(file, lineno, memoryview(chunk)[start : last_nl + 1], n)
                yield _utf8_only(block, chunk.isascii(), problems)
                state.lines_out = True
                lineno += n
            if last_nl + 1 < len(chunk):
                tail = chunk[last_nl + 1 :]
                pending, pending_len = [tail], len(tail)
    except StreamProblem as e:
        problems.append(LogProblem(file, lineno if pending else None, e.message, _stream_kind(e)))
        ended_early = True
    except DecompressionLimitError as e:
        if not state.lines_out:
            raise
        state.capped = True
        problems.append(LogProblem(file, None, _capped_message(e), "capped_stream"))
        ended_early = True
    except OSError as e:
        problems.append(
            LogProblem(
                file,
                lineno if pending else None,
                f"reading stopped: {e.strerror or e}",
                "corrupt_stream",
            )
        )
        ended_early = True
    if pending and not skipping:
        tail = b"".join(pending)
        if is_cut_event(tail):
            if not ended_early:  # a stream that ended early is counted once, above
                problems.append(
                    LogProblem(
                        file,
                        lineno,
                        "the last line is an event cut off in the middle (the log was copied or "
                        "Spark stopped while writing it); dropped it",
                        "truncated_tail",
                    )
                )
        else:
            yield _utf8_only(TextBlock(file, lineno, tail, 1), tail.isascii(), problems)
            state.lines_out = True


def _utf8_only(block: TextBlock, is_ascii: bool, problems: list[LogProblem]) -> TextBlock:
    """``block`` with the bytes that are not UTF-8 replaced (`linecheck.repair_utf8`), each
    damaged line counted; an ASCII block is passed through untouched."""
    if is_ascii:
        return block
    repaired, damaged = repair_utf8(block.data)
    if repaired is None:
        return block
    for index, message in damaged:
        problems.append(
            LogProblem(block.file, block.first_line + index, message, "undecodable_line")
        )
    return TextBlock(block.file, block.first_line, repaired, block.lines)


def _count_newlines(chunk: bytes, start: int, end: int) -> int:
    """``chunk.count(b"\\n", start, end)``, four times as fast: ``bytes.count`` tests one byte
    at a time, while numpy's comparison and count run vectorised (no copy of the data)."""
    if end - start < _NUMPY_COUNT_MIN:
        return chunk.count(b"\n", start, end)
    view = np.frombuffer(chunk, np.uint8, end - start, start)
    return int(np.count_nonzero(view == _NEWLINE))


def _too_long(file: str, lineno: int, max_line: int) -> LogProblem:
    return LogProblem(
        file,
        lineno,
        f"line is longer than {format_bytes(max_line)} (binary data, not an event?); skipped it",
        "undecodable_line",
    )


def _split_lines(
    file: str,
    chunks: Iterator[bytes],
    problems: list[LogProblem],
    max_line: int,
    state: _ReadState,
) -> Iterator[LineBatch]:
    """Cut pieces into lines. A line that spans pieces is glued once from a list of fragments
    (not by ``tail + chunk``, which would copy every multi-megabyte piece again)."""
    lineno = 1  # number of the line that starts next
    pending: list[bytes] = []  # fragments of an unfinished line
    pending_len = 0
    skipping = False  # inside an over-long line, dropping data until its end
    try:
        for chunk in chunks:
            lines = chunk.split(b"\n")
            if len(lines) == 1:
                if not skipping:
                    pending.append(chunk)
                    pending_len += len(chunk)
                    if pending_len > max_line:
                        if not state.lines_out:
                            raise _junk_without_newlines(file, max_line)
                        problems.append(_too_long(file, lineno, max_line))
                        pending, pending_len, skipping = [], 0, True
                continue
            tail = lines.pop()
            if skipping:
                lines[0] = b""
                skipping = False
            elif pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
                pending = []
            yield LineBatch(file, lineno, lines)
            state.lines_out = True
            lineno += len(lines)
            if tail:
                pending, pending_len = [tail], len(tail)
            else:
                pending_len = 0
    except StreamProblem as e:
        problems.append(LogProblem(file, lineno if pending else None, e.message, _stream_kind(e)))
    except DecompressionLimitError as e:
        if not state.lines_out:
            raise
        state.capped = True
        pending = []
        problems.append(LogProblem(file, None, _capped_message(e), "capped_stream"))
    except OSError as e:
        problems.append(
            LogProblem(
                file,
                lineno if pending else None,
                f"reading stopped: {e.strerror or e}",
                "corrupt_stream",
            )
        )
    if pending and not skipping:
        yield LineBatch(file, lineno, [b"".join(pending)])
