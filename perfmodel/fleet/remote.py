"""The logs a fleet run finds on an object store, HDFS or a History Server (local engine).

An object-store prefix is listed one level deep, as a History Server scans its log
directory: each object is a log, each ``eventlog_v2_*`` (or legacy) directory one log
whose size and mtime are its parts' together. A listing carries every object's size and
mtime, so nothing is read or stat'ed per log, and a later run skips what did not change,
exactly as for local files. A History Server is asked for its application list; each
attempt is one log, recorded under its UI address, and "changed" is the server's own
last-updated time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import PurePosixPath

from perfmodel.errors import EventLogNotFoundError
from perfmodel.fleet.discover import LogRef
from perfmodel.profile.sources.history import HistoryClient
from perfmodel.profile.sources.locate import store_path
from perfmodel.profile.sources.stores import Entry, RemotePath, SourceOptions, iter_entries
from perfmodel.profile.sources.uri import app_url, is_history_url

_ROLLING = "eventlog_v2_"
_LEGACY_PART = re.compile(r"EVENT_LOG_\d+")
_NOT_LOGS = frozenset(
    {".md", ".rst", ".html", ".htm", ".css", ".py", ".sh", ".parquet", ".yaml", ".yml", ".toml"}
)


def _skipped(name: str) -> bool:
    return (
        name.startswith((".", "_"))
        or name.endswith(".crc")
        or PurePosixPath(name).suffix in _NOT_LOGS
    )


def _dir_ref(d: RemotePath) -> LogRef | None:
    """A log directory as one log (its parts' sizes summed, their newest mtime), or None for
    a directory that holds no log parts."""
    size, mtime, parts = 0, 0, 0
    for _, e in iter_entries(d):
        if e.is_dir or _skipped(e.name):
            continue
        size += e.size
        mtime = max(mtime, e.mtime_ns)
        parts += 1
    return LogRef(str(d), size, mtime) if parts else None


def _is_log_dir(d: RemotePath, entries: list[Entry] | None = None) -> bool:
    if d.name.startswith(_ROLLING):
        return True
    names = (
        [e.name for e in entries] if entries is not None else [e.name for _, e in iter_entries(d)]
    )
    return any(_LEGACY_PART.fullmatch(n) for n in names)


def list_store_refs(
    uris: Sequence[str], options: SourceOptions, since: datetime | None = None
) -> Iterator[LogRef]:
    """Every log under the given object-store or HDFS URIs (modified at or after ``since``)."""
    cutoff = int(since.timestamp() * 1e9) if since is not None else None
    for uri in uris:
        if is_history_url(uri):  # one application's address
            yield LogRef(uri, 0, 0)
            continue
        root = store_path(uri, options)
        entry = root.entry()
        if entry is None:
            raise EventLogNotFoundError(f"{root}: no such object or prefix")
        if not entry.is_dir:
            refs: list[LogRef] = [LogRef(str(root), entry.size, entry.mtime_ns)]
        elif _is_log_dir(root):
            ref = _dir_ref(root)
            refs = [ref] if ref is not None else []
        else:
            refs = list(_scan_prefix(root))
        for ref in refs:
            if cutoff is None or ref.mtime_ns >= cutoff:
                yield ref


def _scan_prefix(root: RemotePath) -> Iterator[LogRef]:
    for child, e in iter_entries(root):
        if _skipped(e.name):
            continue
        if not e.is_dir:
            yield LogRef(str(child), e.size, e.mtime_ns)
        elif isinstance(child, RemotePath) and _is_log_dir(child):
            ref = _dir_ref(child)
            if ref is not None:
                yield ref


def history_refs(
    server: str, options: SourceOptions, since: datetime | None = None
) -> list[LogRef]:
    """One log per application attempt the History Server lists."""
    client = HistoryClient(server, options)
    refs = []
    for app in client.applications(since):
        url = app_url(client.shown, app.app_id, app.attempt)
        refs.append(LogRef(url, 0, app.last_updated_ms * 1_000_000))
    return sorted(set(refs))
