"""Which event logs a fleet run covers: a History Server directory, a glob, or a listing.

Every shape Spark writes counts as one log (see `perfmodel.profile.eventlog_paths`): a file
(plain or compressed, ``.inprogress`` included), a rolling ``eventlog_v2_*`` directory, a
legacy ``EVENT_LOG_<n>`` directory or a profile bundle. Files are not sniffed for content
here: a damaged or foreign file in a log directory must show up in the ``errors`` table with
its reason, not vanish.

Every entry found is accounted for (docs/fleet.md, "What discovery finds"): it is a log
(analysed: a row in ``apps`` or in ``errors``), or it is unusable and gets an ``errors`` row
of its own (`Unusable`: a dangling link, a link loop, a device or FIFO, a folder named like
a log that holds none, a listing that lists itself, a path a listing names that does not
exist), or it is skipped by a documented rule: hidden names, names starting with ``_``,
Hadoop's ``.crc`` checksums, documents (``SOURCES.md``), and a second name (a link) of a log
already found. Folders are walked recursively, so logs one level down (a folder per
attempt, per day) are found, to `MAX_DEPTH` levels; each folder is walked once, however many
links lead to it, so a link loop ends. A device or FIFO is never opened.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import is_bundle

ROLLING_PREFIX = "eventlog_v2_"
_LEGACY_PART = re.compile(r"EVENT_LOG_\d+")
_NOT_LOGS = frozenset(
    {".md", ".rst", ".html", ".htm", ".css", ".py", ".sh", ".parquet", ".yaml", ".yml", ".toml"}
)
_GLOB_CHARS = frozenset("*?[")


class FleetInputError(PerfmodelError):
    """The fleet's input names nothing that could hold event logs."""


@dataclass(frozen=True, slots=True, order=True)
class LogRef:
    """One application log and what says whether it changed since it was analysed."""

    path: str
    size: int
    mtime_ns: int


def is_remote(path: str) -> bool:
    """A Hadoop URI (``hdfs://``, ``s3a://``): only the Spark engine can read it."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.lower() != "file" and len(scheme) > 1


def local_path(path: str) -> str:
    """``file:///x`` → ``/x``; other paths unchanged."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    return path


MAX_DEPTH = 8
"""Folder levels walked below an input folder; a folder deeper down is an ``errors`` row."""
LISTING_MAX_BYTES = 64 << 20
"""Largest listing file read (64 MiB: about a million paths)."""
_LOGLIKE_NAME = re.compile(
    r"^(app-\d|application_\d|local-\d)|\.(zstd|zst|lz4|snappy|lzf|gz|inprogress)$"
)
"""Names Spark gives application logs (ids, codec suffixes): a folder so named that holds no
log is reported, not passed over. (``spark-events``, the usual log folder, is not one.)"""
_PATHLIKE = re.compile(r"^(~|/|\.{1,2}/|[A-Za-z][\w+.-]*://|[\w.@-]+/|file:)")


@dataclass(frozen=True, slots=True)
class Unusable:
    """An entry discovery found that holds no log it can read: an ``errors`` row."""

    path: str
    kind: str
    reason: str


def is_log_dir(d: Path) -> bool:
    """A rolling or legacy event-log directory or a profile bundle (one application), not a
    directory of logs."""
    if d.name.startswith(ROLLING_PREFIX) or is_bundle(d):
        return True
    try:
        return any(_LEGACY_PART.fullmatch(e.name) for e in os.scandir(d))
    except OSError:
        return False


def _skipped(name: str) -> bool:
    return name.startswith((".", "_")) or name.endswith(".crc") or Path(name).suffix in _NOT_LOGS


def stat_log(path: Path) -> LogRef:
    """Size and modification time; a log directory's are those of its files together."""
    if path.is_dir():
        size, mtime = 0, path.stat().st_mtime_ns
        for entry in os.scandir(path):
            if entry.is_file() and not _skipped(entry.name):
                st = entry.stat()
                size += st.st_size
                mtime = max(mtime, st.st_mtime_ns)
        return LogRef(str(path), size, mtime)
    st = path.stat()
    return LogRef(str(path), st.st_size, st.st_mtime_ns)


def _is_listing(p: Path) -> bool:
    """A plain-text file of paths (one per line), not a plain-text event log: every line
    of its head (comments aside) reads as a path or URI, so a system file (``/etc/passwd``:
    ``root:x:0:0:...``) is not taken for one and its lines are never read as paths."""
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if not head or b"\x00" in head or b'"Event"' in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = text.splitlines()
    if len(head) == 4096 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    lines = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(_PATHLIKE.match(ln) and "\t" not in ln for ln in lines)


@dataclass(slots=True)
class _Walk:
    """What one discovery found so far (paths in order, each once), and what it refused."""

    exclude: Path | None
    paths: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    unusable: list[Unusable] = field(default_factory=list)
    folders: set[tuple[int, int]] = field(default_factory=set)
    listings: list[str] = field(default_factory=list)

    def add(self, path: str) -> None:
        if path not in self.seen:
            self.seen.add(path)
            self.paths.append(path)

    def refuse(self, path: Path | str, kind: str, reason: str) -> None:
        # Absolute, as logs are (not resolved: a dangling link is named by itself), so that
        # runs from other folders key the same entry's errors row alike.
        self.unusable.append(Unusable(os.path.abspath(path), kind, reason))

    def input(self, text: str, *, listed_in: str | None = None) -> None:
        """One input: given on the command line, or a line of a listing (``listed_in``)."""
        if is_remote(text):
            self.add(text)
            return
        raw = local_path(text)
        p = Path(raw).expanduser()
        kind = self._kind(p)
        if kind == "missing":
            if _GLOB_CHARS & set(raw):
                found = sorted(glob.glob(os.path.expanduser(raw)))
                matches = [m for m in found if not _skipped(Path(m).name)]
                if not matches:
                    # As a missing path: a pattern that names nothing is a mistake to report,
                    # not a run that analyses nothing and succeeds.
                    why = "only names that are never logs (hidden, _*, .crc...)" if found else ""
                    why = f"matches {why or 'no file or directory'}"
                    if listed_in is not None:
                        self.refuse(p, "missing", f"a glob in the listing {listed_in}; it {why}")
                    else:
                        raise FleetInputError(f"{text}: this glob {why}")
                for m in matches:
                    self.entry(Path(m), 0)
            elif listed_in is not None:
                self.refuse(p, "missing", f"named in the listing {listed_in}; no such file")
            else:
                raise FleetInputError(f"{text}: no such file, directory or glob match")
        elif kind == "file" and _is_listing(p):
            self.listing(p)
        else:
            self.entry(p, 0)

    def listing(self, p: Path) -> None:
        key = str(p.resolve())
        if key in self.listings:
            self.refuse(
                p,
                "listing_loop",
                "a listing that lists itself (directly or through "
                "other listings); its paths are read once",
            )
            return
        try:
            size = p.stat().st_size
            if size > LISTING_MAX_BYTES:
                self.refuse(
                    p,
                    "listing_too_large",
                    f"a listing of {size} bytes; at most {LISTING_MAX_BYTES} are read",
                )
                return
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.refuse(p, "unreadable", exc.strerror or str(exc))
            return
        self.listings.append(key)
        try:
            for line in text.splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    self.input(line, listed_in=str(p))
        finally:
            self.listings.pop()

    def entry(self, p: Path, depth: int) -> None:
        """Something found in a folder, by a glob, or named: a log, a folder, or unusable."""
        kind = self._kind(p)
        if kind == "file":
            self.add(str(p.resolve()))
        elif kind == "dir":
            if self.exclude is not None and p.resolve() == self.exclude:
                return  # the fleet's own output folder
            if is_log_dir(p):
                self.add(str(p.resolve()))
            elif depth >= MAX_DEPTH:
                self.refuse(
                    p,
                    "too_deep",
                    f"a folder more than {MAX_DEPTH} levels below the "
                    "input; name it (or a folder nearer it) as an input",
                )
            else:
                self.folder(p, depth)
        else:
            self.refuse(p, kind, _WHY[kind])

    def folder(self, d: Path, depth: int) -> None:
        try:
            st = d.stat()
            key = (st.st_dev, st.st_ino)
            if key in self.folders:
                return  # a second way into a folder already walked: a link loop ends here
            self.folders.add(key)
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            self.refuse(d, "unreadable", exc.strerror or str(exc))
            return
        before = (len(self.paths), len(self.unusable))
        base = d.resolve()
        for entry in entries:
            if _skipped(entry.name):
                continue
            try:
                plain_file = entry.is_file(follow_symlinks=False)
            except OSError:
                plain_file = False
            if plain_file:  # the common case, from the listing's own data: no more calls
                self.add(str(base / entry.name))
            else:
                self.entry(Path(entry.path), depth + 1)
        found_nothing = (len(self.paths), len(self.unusable)) == before
        if found_nothing and _LOGLIKE_NAME.search(d.name):
            self.refuse(
                d,
                "not_a_log",
                "a folder named like an event log that holds none "
                "(not a rolling eventlog_v2_* or EVENT_LOG_n folder, nor a bundle)",
            )

    @staticmethod
    def _kind(p: Path) -> str:
        """missing, file, dir, or why it is unusable (without opening it)."""
        try:
            os.lstat(p)
        except FileNotFoundError:
            return "missing"
        except OSError:
            return "unreadable"
        try:
            st = os.stat(p)
        except FileNotFoundError:
            return "dangling_link"
        except OSError as exc:
            return "link_loop" if exc.errno == errno.ELOOP else "unreadable"
        if stat.S_ISREG(st.st_mode):
            return "file"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        return "not_a_regular_file"


_WHY = {
    "dangling_link": "a symbolic link to nothing",
    "link_loop": "a symbolic link that leads back to itself",
    "not_a_regular_file": "a device, FIFO or socket, not a log file (never opened)",
    "unreadable": "cannot be read (permissions?)",
    "missing": "no such file",
}


def walk_inputs(
    inputs: Sequence[str], exclude: Path | None = None
) -> tuple[list[str], list[Unusable]]:
    """Every log path the inputs name, in order, each once (remote URIs kept as given), and
    every entry found that holds no readable log (module doc)."""
    walk = _Walk(exclude)
    for text in inputs:
        walk.input(text)
    return walk.paths, walk.unusable


def expand_inputs(inputs: Sequence[str], exclude: Path | None = None) -> list[str]:
    """The log paths of `walk_inputs`."""
    return walk_inputs(inputs, exclude)[0]


def discover(
    inputs: Sequence[str], *, since: datetime | None = None, exclude: Path | None = None
) -> tuple[list[LogRef], list[str], list[Unusable]]:
    """Local logs with size and mtime (modified at or after ``since``), remote URIs left
    for the engine to list, and the entries found that hold no readable log."""
    refs: list[LogRef] = []
    remote: list[str] = []
    cutoff = int(since.timestamp() * 1e9) if since is not None else None
    paths, unusable = walk_inputs(inputs, exclude)
    for path in paths:
        if is_remote(path):
            remote.append(path)
            continue
        try:
            ref = stat_log(Path(path))
        except OSError:
            ref = LogRef(path, 0, 0)  # unreadable: analysing it records why
        if cutoff is None or ref.mtime_ns >= cutoff:
            refs.append(ref)
    return sorted(refs), remote, unusable
