"""Streaming the lines of a Spark event log, once `perfmodel.profile.eventlog_paths` has
found its parts.

Streaming is kept deliberately dumb and fast: decompressed data arrives in multi-megabyte pieces,
``bytes.split`` cuts them into lines, and nothing else happens per line, because the JSON decoding
that follows is where the time should go. Damage (a cut-off stream, an unreadable part) is
collected as :class:`LogProblem` records instead of exceptions, so a diagnosis can still be made
from the part of a log that survived.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from perfmodel.errors import (
    DecompressionLimitError,
    NotAnEventLogError,
    PerfmodelError,
)
from perfmodel.profile.codecs import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_MAX_DECOMPRESSED,
    DecompressionBudget,
    StreamProblem,
    format_bytes,
    iter_decompressed,
)
from perfmodel.profile.eventlog_paths import EventLogSource, resolve_event_log
from perfmodel.profile.linecheck import is_cut_event, repair_utf8
from perfmodel.profile.quality import MAX_EXAMPLES, line_problem_kind

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "MAX_LINE_BYTES",
    "EventLogSource",
    "LineBatch",
    "LogProblem",
    "ProblemList",
    "RawLine",
    "iter_line_batches",
    "iter_lines",
    "resolve_event_log",
]

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Longest line kept. Real events stay far below (the biggest are SQL plans of a few MB); a
longer "line" is binary junk without newlines, and holding it would defeat streaming."""

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
    count: int = 1
    """Occurrences this one record stands for (a run of missing parts is one record)."""


MAX_PROBLEMS_KEPT = 1000
"""Problems kept whole (file, line, message) per log; beyond them, each is only counted by
kind. A small compressed file of junk lines holds hundreds of millions of bad lines: one
record each would exhaust memory long before the decompression cap stops the reading."""


class ProblemList(list[LogProblem]):
    """The problems of one log: the first `MAX_PROBLEMS_KEPT` whole, every one counted.

    A plain list to every reader (the kept problems, in order); `counts` holds every
    damaged line or stream by kind (`perfmodel.profile.quality.DAMAGE_KINDS`) as it
    arrives, so nothing is lost at the bound. A line that is repaired (bad UTF-8) and then
    still fails to decode is one damaged line, not two: the lines repaired in the block
    being read are remembered (a set bounded by a block's lines, cleared per block).
    """

    def __init__(self, limit: int = MAX_PROBLEMS_KEPT) -> None:
        super().__init__()
        self.limit = limit
        self.counts: dict[str, int] = {}
        self.examples: dict[str, list[str]] = {}
        self.line_problems = 0
        """Lines with a problem (each counted once)."""
        self.omitted = 0
        """Problems counted but not kept."""
        self._repaired: set[tuple[str, int]] = set()
        self._kept_lines: set[tuple[str, int]] = set()

    @property
    def full(self) -> bool:
        return len(self) >= self.limit

    def add_repaired(self, problems: Iterable[LogProblem]) -> None:
        """The lines of one block whose bad UTF-8 was replaced: each is damaged once, even
        if it then fails to decode. Lines repaired in earlier blocks can no longer meet
        another problem, so only this block's are remembered."""
        self._repaired.clear()
        for problem in problems:
            self.append(problem)
            if problem.line is not None:
                self._repaired.add((problem.file, problem.line))

    def append(self, problem: LogProblem) -> None:
        self._count(problem)
        if len(self) < self.limit:
            super().append(problem)
            if problem.line is not None:
                self._kept_lines.add((problem.file, problem.line))
        else:
            self.omitted += 1

    def extend(self, problems: Iterable[LogProblem]) -> None:
        for problem in problems:
            self.append(problem)

    def count_only(self, file: str, line: int, kind: str) -> None:
        """A damaged line past the bound, counted without building its message."""
        self.omitted += 1
        if self._repaired and (file, line) in self._repaired:
            return
        self.line_problems += 1
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def _count(self, problem: LogProblem) -> None:
        kind = problem.kind
        if problem.line is not None:
            key = (problem.file, problem.line)
            if key in self._repaired or key in self._kept_lines:
                return  # this line is counted already
            self.line_problems += 1
            if kind is None:
                kind = line_problem_kind(problem.message)
        if kind is None:
            return
        self.counts[kind] = self.counts.get(kind, 0) + problem.count
        seen = self.examples.setdefault(kind, [])
        if len(seen) < MAX_EXAMPLES:
            seen.append(f"{problem.file}:{problem.line}" if problem.line else problem.file)

    def summary(self) -> LogProblem | None:
        """One closing note for the problems counted but not listed."""
        if not self.omitted:
            return None
        return LogProblem(
            self[-1].file if self else "",
            None,
            f"... and {self.omitted:,} more problem(s) not listed (each is counted in the data "
            "quality)",
        )


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
    for lo, hi in source.missing_parts:
        name = f"EVENT_LOG_{lo}" if legacy else f"events_{lo}_*"
        what = f"part {lo} of the log is missing (no {name} file)"
        if hi > lo:
            last_name = f"EVENT_LOG_{hi}" if legacy else f"events_{hi}_*"
            what = (
                f"parts {lo} to {hi} of the log are missing ({hi - lo + 1:,} parts: "
                f"no {name} to {last_name})"
            )
        problems.append(
            LogProblem(
                str(source.path / name),
                None,
                f"{what}; their events are not in the analysis"
                if hi > lo
                else f"{what}; its events are not in the analysis",
                "missing_rolling_part",
                hi - lo + 1,
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
        pieces: Iterator[bytes] = itertools.chain((first,), chunks)
        if b"\n" not in first and b"\r" in first:
            # Lines ended by CR alone (an old Mac editor, a converted copy): JSON text holds
            # no raw CR inside a line, so each CR ends one.
            problems.append(LogProblem(file, None, "lines end in CR alone; read as lines"))
            pieces = (piece.replace(b"\r", b"\n") for piece in pieces)
        yield from split(file, pieces, problems, max_line_bytes, state)
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
    found = [
        LogProblem(block.file, block.first_line + index, message, "undecodable_line")
        for index, message in damaged
    ]
    if isinstance(problems, ProblemList):
        problems.add_repaired(found)
    else:
        problems.extend(found)
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
