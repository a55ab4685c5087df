"""Frame vectors kept between commands, so a bundle read again skips the models.

Classifying a recording's frames means finding each frame's source, parsing the files it is
in and running the code models: on a recorded PySpark job, about 5 s of a `diagnose` that
then takes under 2 s more, plus 2 s of importing torch. A user asks several
commands of one bundle (`diagnose`, then `predict` with a few what-ifs, then `report`), and
each asks for the same frames. Their vectors are kept in a SQLite file in the user's cache
directory; a command whose frames are all there neither imports the models nor parses a
source file.

A vector depends on the frame, the code the frame is found in, the models and the code that
joins them. A stored vector is used only while all four are unchanged:

* the key digests the model files, each source root (path, size and modification time, as
  the source index keys its listings) and this package's own modules and version;
* each vector is stored with the file its code was read from (a source file, the archive
  holding it, or the file a Python frame names when it could not be read) and that file's
  size and modification time, which are checked again on every read: a user's script edited
  between two recordings, or a package file edited in place, gives a new vector.

The file keeps the :data:`MAX_ROWS` vectors computed last. A cache file that cannot be used
(another version's, or damaged) is made anew; one that cannot be opened at all (a read-only
home) is passed over, and the vectors are computed as if it were empty.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from perfmodel._version import __version__
from perfmodel.embed.source.roots import SourceRoot

__all__ = [
    "CACHE_FILE",
    "MAX_ROWS",
    "CachedFrameVectors",
    "LocatingSource",
    "VectorStore",
    "cache_key",
    "opened_cache",
]

CACHE_FILE = "frame-vectors.sqlite"
MAX_ROWS = 200_000
"""Vectors kept (about 330 bytes each with real frames); the first computed go first."""
SCHEMA_VERSION = 1
_CHUNK = 500  # frames per query: well under SQLite's limit on bound parameters
_BUSY_TIMEOUT_S = 2.0  # an optional cache: a locked file is waited for 2 s, then passed over
_EMBED = Path(__file__).resolve().parent

Vector = dict[str, float]


class LocatingSource(Protocol):
    """What computes a vector (the classifier): each frame's vector and the file its code
    was read from (`ResourceClassifier.frame_vectors_and_files`)."""

    def frame_vectors_and_files(self, frames: Sequence[str]) -> list[tuple[Vector, str | None]]: ...


def _stat_line(path: Path | str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return f"{st.st_size}|{st.st_mtime_ns}"


def cache_key(models_dir: Path, roots: Sequence[SourceRoot]) -> str:
    """The digest of what every frame's vector depends on besides the frame's own code."""
    lines = [f"perfmodel {__version__}"]
    lines += [f"{p}|{_stat_line(p)}" for p in sorted(models_dir.iterdir()) if p.is_file()]
    lines += [f"{r.name}:{r.path}|{_stat_line(r.path)}" for r in roots]
    lines += [f"{p}|{_stat_line(p)}" for p in sorted(_EMBED.rglob("*.py"))]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32]


class VectorStore:
    """The SQLite file: (key, frame) -> the vector as JSON (floats round-trip exactly), and
    the file its code came from with that file's size and modification time."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open(path)
        except sqlite3.DatabaseError:  # damaged, or not a database: made anew
            for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                stale.unlink(missing_ok=True)
            self._db = self._open(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S)
        try:
            (version,) = db.execute("PRAGMA user_version").fetchone()
            if version != SCHEMA_VERSION:
                db.execute("DROP TABLE IF EXISTS vectors")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key TEXT NOT NULL, frame TEXT NOT NULL, "
                "vector TEXT NOT NULL, file TEXT, file_stat TEXT, PRIMARY KEY (key, frame))"
            )
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.commit()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def get(self, key: str, frames: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of ``frames`` whose code file is as it was when stored."""
        found: dict[str, Vector] = {}
        now: dict[str, str] = {}
        for i in range(0, len(frames), _CHUNK):
            chunk = frames[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT frame, vector, file, file_stat FROM vectors "
                f"WHERE key = ? AND frame IN ({marks})",
                (key, *chunk),
            )
            for frame, vector, file, file_stat in rows:
                if file is not None:
                    if file not in now:
                        now[file] = _stat_line(file)
                    if now[file] != file_stat:
                        continue
                found[frame] = json.loads(vector)
        return found

    def put(self, key: str, vectors: Mapping[str, tuple[Vector, str | None]]) -> None:
        rows = [
            (key, frame, json.dumps(v), file, None if file is None else _stat_line(file))
            for frame, (v, file) in vectors.items()
        ]
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (key, frame, vector, file, file_stat) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            (count,) = self._db.execute("SELECT count(*) FROM vectors").fetchone()
            if count > MAX_ROWS:
                self._db.execute(
                    "DELETE FROM vectors WHERE rowid IN "
                    "(SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)",
                    (count - MAX_ROWS,),
                )

    def close(self) -> None:
        self._db.close()


@contextmanager
def opened_cache(directory: Path) -> Iterator[VectorStore | None]:
    """The cache file in ``directory``, or None when it cannot be opened."""
    try:
        store = VectorStore(directory / CACHE_FILE)
    except (sqlite3.Error, OSError):
        yield None
        return
    try:
        yield store
    finally:
        store.close()


class CachedFrameVectors:
    """A `FrameVectorSource` (`perfmodel.embed.aggregate`) that answers from the cache and
    builds the real source (the models) only for frames the cache cannot answer, storing
    what it computes."""

    def __init__(
        self, store: VectorStore | None, key: str, make_source: Callable[[], LocatingSource]
    ) -> None:
        self._store = store
        self._key = key
        self._make_source = make_source

    def frame_vectors(self, frames: Sequence[str]) -> list[Vector]:
        known: dict[str, Vector] = {}
        if self._store is not None:
            try:
                known = self._store.get(self._key, frames)
            except (sqlite3.Error, ValueError):
                known = {}
        missing = [f for f in dict.fromkeys(frames) if f not in known]
        if missing:
            computed = dict(
                zip(missing, self._make_source().frame_vectors_and_files(missing), strict=True)
            )
            if self._store is not None:
                try:
                    self._store.put(self._key, computed)
                except sqlite3.Error:
                    pass  # kept or not, the vectors are the same
            known.update((f, vector) for f, (vector, _) in computed.items())
        return [known[f] for f in frames]
