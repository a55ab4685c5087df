"""Reading a log that is still being written: only the bytes appended since the last poll.

`follow_parts` turns a resolved log's parts into parts that are read as they grow. Each
part's stream blocks while the writer is behind: it polls the store every ``interval_s`` for
more bytes and hands over only what was appended, so the codec decoders (and, above them,
the line splitter and the profile builder) keep their state across polls and nothing is read
twice. The parts list itself grows as Spark rolls to a new ``events_<n>`` part, so the log
reader moves on to it when the part before is closed.

A part ends when the writer is done with it: a later part exists (rolling logs); its
``.inprogress`` name gave way to the final one (single files: the rest is read from the
final object); the ``appstatus`` marker lost its ``.inprogress`` (rolling logs); or the
application's end was decoded and the writer did not rename within `FINISH_GRACE_POLLS`
polls. Following stops early, handing the reader an end of data, when nothing was appended
for ``timeout_s`` or on Ctrl-C; `FollowControl.stopped` then says why.

Works on anything the sources layer reads: local files, object stores (a poll asks for the
object's size, then reads the new range), and History Server applications
(`perfmodel.profile.sources.history.LiveHistoryStore`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, cast

from perfmodel.profile.sources.stores import (
    Entry,
    LogPath,
    RemotePath,
    as_store_location,
)
from perfmodel.profile.sources.uri import Location

FINISH_GRACE_POLLS = 10
"""Polls to wait, after the application's end event, for the writer to close and rename."""

_IN_PROGRESS = ".inprogress"
_KEEP_START = 64 * 1024
_EVENTS_RE = re.compile(r"events_(\d+)_(.+)")
_APPSTATUS = "appstatus_"


@dataclass(slots=True)
class FollowControl:
    """Pacing and stopping, shared by every part of one followed log."""

    interval_s: float = 1.0
    timeout_s: float | None = None
    """Stop when nothing was appended for this long (None: wait for the application's end)."""
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    app_ended: bool = False
    """Set by the caller once the application's end event was decoded."""
    stopped: str | None = None
    """Why following stopped before the log was finished: ``timeout`` or ``interrupted``."""
    polls: int = 0
    bytes_read: int = 0
    _last_growth: float = field(default=0.0)

    def __post_init__(self) -> None:
        self._last_growth = self.clock()

    def grew(self, n: int) -> None:
        self.bytes_read += n
        self._last_growth = self.clock()

    def wait(self) -> bool:
        """Sleep one interval; False when following must stop (timeout, Ctrl-C)."""
        if self.stopped is not None:
            return False
        if self.timeout_s is not None and self.clock() - self._last_growth >= self.timeout_s:
            self.stopped = "timeout"
            return False
        try:
            self.sleep(self.interval_s)
        except KeyboardInterrupt:
            self.stopped = "interrupted"
            return False
        self.polls += 1
        return True


class _FollowedLog:
    """One log's parts as they appear, and whether the writer is done with each."""

    def __init__(self, parts: Sequence[LogPath], control: FollowControl, kind: str) -> None:
        self.control = control
        self.kind = kind  # "rolling" or "file"
        self.store, first = as_store_location(parts[0])
        self.dir = first.parent
        self.numbers: list[int] = []
        self.parts: _GrowingParts = _GrowingParts(self)
        for part in parts:
            _, loc = as_store_location(part)
            self._add(loc)
        self.finished = False
        self.ended_polls = 0

    def _add(self, loc: Location) -> None:
        m = _EVENTS_RE.fullmatch(loc.name)
        self.numbers.append(int(m.group(1)) if m else len(self.numbers))
        self.parts.append(RemotePath(_FollowStore(self, len(self.parts)), loc))

    def refresh(self) -> None:
        refresh = getattr(self.store, "refresh", None)
        if refresh is not None:
            refresh()

    def listing(self) -> list[Entry]:
        return list(self.store.iter_dir(self.dir))

    def part_done(self, index: int, loc: Location) -> tuple[bool, Location]:
        """Whether the writer is done with part ``index`` (and where its bytes now live)."""
        if self.finished:  # a log that was complete when resolved, or whose end was seen
            return True, loc
        self.refresh()
        if self.control.app_ended:
            self.ended_polls += 1
        grace_over = self.ended_polls > FINISH_GRACE_POLLS
        if self.kind == "rolling":
            newer = []
            app_done = False
            for e in self.listing():
                m = _EVENTS_RE.fullmatch(e.name)
                if m is not None and not e.is_dir and int(m.group(1)) > self.numbers[-1]:
                    newer.append((int(m.group(1)), e.name))
                elif e.name.startswith(_APPSTATUS) and not e.name.endswith(_IN_PROGRESS):
                    app_done = True
            for _, name in sorted(newer):
                self._add(self.dir.child(name))
            if index < len(self.parts) - 1:
                return True, loc
            if app_done or grace_over:
                self.finished = True
                return True, loc
            return False, loc
        if not loc.name.endswith(_IN_PROGRESS):
            self.finished = True
            return True, loc
        final = loc.parent.child(loc.name[: -len(_IN_PROGRESS)])
        if self.store.info(final) is not None and self.store.info(loc) is None:
            self.finished = True
            return True, final
        if grace_over:
            self.finished = True
            return True, loc
        return False, loc


class _GrowingParts(list[LogPath]):
    """A parts list that the log reader iterates while it grows (new rolling parts are
    appended when the part before them is done); iteration ends with the last part."""

    def __init__(self, log: _FollowedLog) -> None:
        super().__init__()
        self._log = log

    def __iter__(self) -> Iterator[LogPath]:
        i = 0
        while i < len(self):
            yield self[i]
            i += 1


class _FollowStore:
    """The store of one followed part: reads block until the writer appends or is done."""

    def __init__(self, log: _FollowedLog, index: int) -> None:
        self.log = log
        self.index = index

    def describe(self, loc: Location) -> str:
        return self.log.store.describe(loc)

    def info(self, loc: Location) -> Entry | None:
        return self.log.store.info(loc)

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        return self.log.store.iter_dir(loc)

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        return cast(BinaryIO, _Tail(self.log, self.index, loc, offset))


class _Tail:
    """A growing part read from ``offset`` on; see the module docstring."""

    def __init__(self, log: _FollowedLog, index: int, loc: Location, offset: int) -> None:
        self.log = log
        self.index = index
        self.loc = loc
        self.offset = offset
        self._f: BinaryIO | None = None
        self._done = False
        self._start = bytearray()
        """The part's first bytes, kept so that the codec sniffing its head and seeking back
        to 0 does not read them from the store again."""
        self._replay = b""

    def _read_now(self, n: int) -> bytes:
        store = self.log.store
        if self._f is None:
            entry = store.info(self.loc)
            if entry is None or entry.size <= self.offset:
                return b""
            self._f = store.open(self.loc, self.offset)
        data = self._f.read(n)
        if not data:  # at the end of what the open stream can see: look again next poll
            self._f.close()
            self._f = None
        return data

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = 1 << 30
        control = self.log.control
        if self._replay:
            data, self._replay = self._replay[:n], self._replay[n:]
            return data
        while True:
            data = self._read_now(n)
            if data:
                if self.offset == len(self._start) and self.offset < _KEEP_START:
                    self._start += data[: _KEEP_START - self.offset]
                self.offset += len(data)
                control.grew(len(data))
                return data
            if self._done or control.stopped is not None:
                return b""
            done, where = self.log.part_done(self.index, self.loc)
            if done:
                self._done = True
                if where != self.loc:  # renamed when finished: the rest is in the final object
                    self.loc = where
                    if self._f is not None:
                        self._f.close()
                        self._f = None
                continue  # drain what was written before it was done
            if not control.wait():
                return b""

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise OSError("a followed log can only seek to an absolute offset")
        if offset < self.offset and self.offset <= len(self._start):
            self._replay = bytes(self._start[offset : self.offset])
            return offset
        self._replay = b""
        if self._f is not None:
            self._f.close()
            self._f = None
        self.offset = offset
        return offset

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None

    def __enter__(self) -> _Tail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def follow_parts(
    parts: Sequence[LogPath], control: FollowControl, *, in_progress: bool
) -> list[LogPath]:
    """A resolved log's ``parts`` as parts that are read as they grow (see the module
    docstring); the list itself grows as the writer rolls to new parts.

    The parts of a log that is not ``in_progress`` are read once, to their end, as usual.
    """
    first = parts[0]
    rolling = first.parent.name.startswith("eventlog_v2_") or _EVENTS_RE.fullmatch(first.name)
    log = _FollowedLog(parts, control, "rolling" if rolling else "file")
    if not in_progress:
        log.finished = True
    return log.parts
