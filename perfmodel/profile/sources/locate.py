"""From what the user typed to a readable log location: the one entry point.

`log_path` turns a string into a local `Path`, a `RemotePath` on an object store or HDFS,
or, for a History Server application address, a `RemotePath` into the application's
downloaded zip (`perfmodel.profile.sources.history`). Every command that takes a log goes
through it (via `perfmodel.analysis.locate`, or `perfmodel.profile.eventlog_paths.
resolve_event_log` for a string), so each accepts every kind of location.
"""

from __future__ import annotations

from pathlib import Path

from perfmodel.profile.sources.stores import LogPath, RemotePath, SourceOptions, store_for
from perfmodel.profile.sources.uri import (
    Location,
    has_scheme,
    is_history_url,
    local_part,
    parse_location,
)


def log_path(
    text: str | LogPath,
    options: SourceOptions | None = None,
    *,
    max_decompressed_bytes: int,
) -> LogPath:
    """What the user typed as a `LogPath` (a path object is returned as it is).

    Raises `perfmodel.profile.sources.uri.SourceError` for an unknown scheme or a
    malformed URI; a History Server address is fetched here (its errors are the client's),
    its download held to ``max_decompressed_bytes`` (the caller's decompression cap: the
    readers above own its default).
    """
    if isinstance(text, (Path, RemotePath)):
        return text
    if not has_scheme(text) or text.lower().startswith("file:"):
        return Path(local_part(text))
    options = options or SourceOptions()
    if is_history_url(text):
        # Imported when needed: an HTTP client (ssl, http.client, email) is a tenth of a
        # second of start-up that a command on a local log would pay for nothing.
        from perfmodel.profile.sources.history import open_history_log

        return open_history_log(text, options, max_decompressed_bytes)
    return store_path(text, options)


def store_path(text: str, options: SourceOptions) -> RemotePath:
    """An object-store or HDFS URI as a `RemotePath` (nothing is asked of the store yet)."""
    loc = parse_location(text)
    root = Location(loc.scheme, loc.authority, loc.key.rstrip("/"))
    return RemotePath(store_for(loc, options), root)


def is_remote_text(text: str) -> bool:
    """A location that is not on local disk (an object store, HDFS or a History Server)."""
    return has_scheme(text) and not text.lower().startswith("file:")
