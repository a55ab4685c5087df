"""Frame vectors kept between commands, so a bundle read again skips the models.

Classifying a recording's frames means finding each frame's source, parsing the files it is
in and running the code models: on a recorded PySpark job, about 5 s of a `diagnose` that
then takes under 2 s more, plus 4 s of importing torch and flair. A user asks several
commands of one bundle (`diagnose`, then `predict` with a few what-ifs, then `report`), and
each asked for the same frames. Their vectors are kept in a SQLite file in the user's cache
directory; a command whose frames are all there neither imports the models nor reads a
source file.

A vector depends on the frame, the source the frame is found in, the models and the code
that joins them. The cache key stands for all four: the frame's text, and a digest of the
model files, of each source root (path, size and modification time, as the source index's
listings are keyed) and of this package's own modules and version. Anything changed gives a
new digest, and the vectors stored under the old one are no longer read; the file keeps the
most recent :data:`MAX_ROWS` vectors. A cache that cannot be opened or written (a read-only
home, a damaged file) is passed over: the vectors are then computed as if it were empty.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from perfmodel._version import __version__
from perfmodel.embed.source.roots import SourceRoot

__all__ = ["CACHE_FILE", "MAX_ROWS", "CachedFrameVectors", "cache_key", "opened_cache"]

CACHE_FILE = "frame-vectors.sqlite"
MAX_ROWS = 200_000
"""Vectors kept (about 150 bytes each); the oldest go first."""
_CHUNK = 500  # frames per query: well under SQLite's limit on bound parameters
_EMBED = Path(__file__).resolve().parent


class FrameVectorSource(Protocol):
    def frame_vectors(self, frames: Sequence[str]) -> list[dict[str, float]]: ...


def _stat_line(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}|missing"
    return f"{path}|{st.st_size}|{st.st_mtime_ns}"


def cache_key(models_dir: Path, roots: Sequence[SourceRoot]) -> str:
    """The digest of what a frame's vector depends on besides the frame itself."""
    lines = [f"perfmodel {__version__}"]
    lines += [_stat_line(p) for p in sorted(models_dir.iterdir()) if p.is_file()]
    lines += [f"{r.name}:{_stat_line(r.path)}" for r in roots]
    lines += [_stat_line(p) for p in sorted(_EMBED.rglob("*.py"))]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]


class _Store:
    """The SQLite file: (key, frame) -> the vector as JSON (floats round-trip exactly)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key TEXT NOT NULL, frame TEXT NOT NULL, "
            "vector TEXT NOT NULL, PRIMARY KEY (key, frame))"
        )
        self._db.commit()

    def get(self, key: str, frames: Sequence[str]) -> dict[str, dict[str, float]]:
        found: dict[str, dict[str, float]] = {}
        for i in range(0, len(frames), _CHUNK):
            chunk = frames[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT frame, vector FROM vectors WHERE key = ? AND frame IN ({marks})",
                (key, *chunk),
            )
            found.update((frame, json.loads(vector)) for frame, vector in rows)
        return found

    def put(self, key: str, vectors: Mapping[str, dict[str, float]]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (key, frame, vector) VALUES (?, ?, ?)",
                ((key, f, json.dumps(v)) for f, v in vectors.items()),
            )
            (rows,) = self._db.execute("SELECT count(*) FROM vectors").fetchone()
            if rows > MAX_ROWS:
                self._db.execute(
                    "DELETE FROM vectors WHERE rowid IN "
                    "(SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)",
                    (rows - MAX_ROWS,),
                )

    def close(self) -> None:
        self._db.close()


@contextmanager
def opened_cache(directory: Path) -> Iterator[_Store | None]:
    """The cache file in ``directory``, or None when it cannot be opened."""
    try:
        store = _Store(directory / CACHE_FILE)
    except (sqlite3.Error, OSError):
        yield None
        return
    try:
        yield store
    finally:
        store.close()


class CachedFrameVectors:
    """A `FrameVectorSource` that answers from the cache and builds the real source (the
    models) only for frames the cache does not hold, storing what it computes."""

    def __init__(
        self, store: _Store | None, key: str, make_source: Callable[[], FrameVectorSource]
    ) -> None:
        self._store = store
        self._key = key
        self._make_source = make_source
        self.hits = 0
        self.computed = 0

    def frame_vectors(self, frames: Sequence[str]) -> list[dict[str, float]]:
        known: dict[str, dict[str, float]] = {}
        if self._store is not None:
            try:
                known = self._store.get(self._key, frames)
            except (sqlite3.Error, ValueError):
                known = {}
        distinct = list(dict.fromkeys(frames))
        missing = [f for f in distinct if f not in known]
        self.hits = len(distinct) - len(missing)
        if missing:
            computed = dict(zip(missing, self._make_source().frame_vectors(missing), strict=True))
            self.computed = len(computed)
            if self._store is not None:
                try:
                    self._store.put(self._key, computed)
                except sqlite3.Error:
                    pass  # kept or not, the vectors are the same
            known.update(computed)
        return [known[f] for f in frames]
