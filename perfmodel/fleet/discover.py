"""Which event logs a fleet run covers: a History Server directory, a glob, or a listing.

Every shape Spark writes counts as one log (see `perfmodel.profile.eventlog_paths`): a file
(plain or compressed, ``.inprogress`` included), a rolling ``eventlog_v2_*`` directory or a
legacy ``EVENT_LOG_<n>`` directory. A directory is scanned one level deep, as the History
Server scans its own. Files are not sniffed for content here: a damaged or foreign file in
a log directory must show up in the ``errors`` table with its reason, not vanish; only
hidden files, Hadoop's ``.crc`` checksums and obvious documents (``SOURCES.md``) are left out.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


def scan_dir(d: Path, exclude: Path | None = None) -> list[Path]:
    """The logs directly inside a History Server directory."""
    out: list[Path] = []
    for entry in sorted(os.scandir(d), key=lambda e: e.name):
        p = Path(entry.path)
        if _skipped(entry.name) or (exclude is not None and p.resolve() == exclude):
            continue
        if entry.is_dir():
            if is_log_dir(p):
                out.append(p)
        elif entry.is_file():
            out.append(p)
    return out


def _is_listing(p: Path) -> bool:
    """A plain-text file of paths (one per line), not a plain-text event log."""
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
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return not first.startswith("{") and ("/" in first or first.startswith("hdfs"))


def expand_inputs(inputs: Sequence[str], exclude: Path | None = None) -> list[str]:
    """Every log path the inputs name, in order, each once (remote URIs kept as given)."""
    seen: set[str] = set()
    out: list[str] = []

    def add(paths: Iterable[str]) -> None:
        for p in paths:
            if p not in seen:
                seen.add(p)
                out.append(p)

    for text in inputs:
        if is_remote(text):
            add([text])
            continue
        raw = local_path(text)
        p = Path(raw).expanduser()
        if p.is_dir():
            add(
                [str(p.resolve())]
                if is_log_dir(p)
                else [str(x.resolve()) for x in scan_dir(p, exclude)]
            )
        elif p.is_file() and _is_listing(p):
            lines = p.read_text(encoding="utf-8").splitlines()
            listed = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
            add(expand_inputs(listed, exclude))
        elif p.is_file():
            add([str(p.resolve())])
        elif _GLOB_CHARS & set(raw):
            matches = sorted(glob.glob(os.path.expanduser(raw)))
            add(str(Path(m).resolve()) for m in matches if not _skipped(Path(m).name))
        else:
            raise FleetInputError(f"{text}: no such file, directory or glob match")
    return out


def discover(
    inputs: Sequence[str], *, since: datetime | None = None, exclude: Path | None = None
) -> tuple[list[LogRef], list[str]]:
    """Local logs with size and mtime (modified at or after ``since``), and remote URIs
    left for the Spark engine to list."""
    refs: list[LogRef] = []
    remote: list[str] = []
    cutoff = int(since.timestamp() * 1e9) if since is not None else None
    for path in expand_inputs(inputs, exclude):
        if is_remote(path):
            remote.append(path)
            continue
        try:
            ref = stat_log(Path(path))
        except OSError:
            ref = LogRef(path, 0, 0)  # unreadable: analysing it records why
        if cutoff is None or ref.mtime_ns >= cutoff:
            refs.append(ref)
    return sorted(refs), remote
