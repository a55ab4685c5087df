"""Lazy index over source roots, with an in-memory cache of parsed files.

Nothing is listed until a frame of that language is looked up, and nothing is parsed
until a frame points into a file; a recording has thousands of samples but few distinct
files, so both caches pay off quickly. Listings can also be cached on disk (keyed by the
root's path, size and mtime), because walking a large site-packages takes seconds.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from perfmodel.atomic import write_atomically
from perfmodel.embed.source.extract import Extractor, ParsedSource
from perfmodel.embed.source.languages import language_of
from perfmodel.embed.source.roots import OpenRoot, SourceRoot, module_of, package_of


@dataclass(frozen=True)
class SourceFile:
    """One file in one root."""

    root: SourceRoot
    logical: str
    entry: str

    @property
    def location(self) -> str:
        return self.root.describe(self.logical, self.entry)


class SourceIndex:
    """Logical path -> file across roots (first root wins), built lazily."""

    def __init__(
        self, roots: list[SourceRoot], cache_dir: Path | None = None, max_parsed: int = 256
    ) -> None:
        self.roots = list(roots)
        self._open = {r: OpenRoot(r) for r in self.roots}
        self._cache_dir = cache_dir
        self._files: dict[str, SourceFile] | None = None
        self._by_basename: dict[str, list[SourceFile]] | None = None
        self._by_directory: dict[str, list[SourceFile]] | None = None
        self._parsed: OrderedDict[tuple[SourceRoot, str], ParsedSource] = OrderedDict()
        self._max_parsed = max_parsed
        self._extractor = Extractor()

    def close(self) -> None:
        for r in self._open.values():
            r.close()

    def _listing(self, root: SourceRoot) -> dict[str, str]:
        cache = self._cache_path(root)
        if cache is not None and cache.is_file():
            try:
                return dict(json.loads(cache.read_text()))
            except (OSError, ValueError):
                pass
        entries = self._open[root].entries()
        if cache is not None:
            write_atomically(cache, json.dumps(entries))
        return entries

    def _cache_path(self, root: SourceRoot) -> Path | None:
        if self._cache_dir is None:
            return None
        st = root.path.stat()
        key = hashlib.sha256(f"{root.path}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:24]
        return self._cache_dir / f"listing-{key}.json"

    @property
    def files(self) -> dict[str, SourceFile]:
        if self._files is None:
            self._files, self._by_basename, self._by_directory = {}, {}, {}
            for root in self.roots:
                for logical, entry in self._listing(root).items():
                    if logical in self._files:
                        continue
                    sf = SourceFile(root, logical, entry)
                    self._files[logical] = sf
                    directory, _, base = logical.rpartition("/")
                    self._by_basename.setdefault(base, []).append(sf)
                    self._by_directory.setdefault(directory, []).append(sf)
        return self._files

    def by_suffix(self, path: str) -> list[SourceFile]:
        """Files whose logical path ends with ``path`` (py-spy prints shortened paths)."""
        _ = self.files
        assert self._by_basename is not None
        norm = path.replace("\\", "/").lstrip("./")
        base = norm.rsplit("/", 1)[-1]
        hits = [
            sf
            for sf in self._by_basename.get(base, [])
            if sf.logical == norm
            or sf.logical.endswith("/" + norm)
            or norm.endswith("/" + sf.logical)
        ]
        return sorted(hits, key=lambda sf: (len(sf.logical), self.roots.index(sf.root)))

    def in_directory(self, directory: str, language: str) -> list[SourceFile]:
        """Files of one language directly inside a logical directory (``java/io``); looked up
        in an index by directory, since a frame's package is asked for once per frame and a
        root lists tens of thousands of files."""
        _ = self.files
        assert self._by_directory is not None
        key = directory.rstrip("/")
        here = self._by_directory.get(key, []) if key else []
        return [sf for sf in here if language_of(sf.logical) == language]

    def parse(self, sf: SourceFile) -> ParsedSource:
        key = (sf.root, sf.entry)
        hit = self._parsed.get(key)
        if hit is not None:
            self._parsed.move_to_end(key)
            return hit
        data = self._open[sf.root].read(sf.entry)
        parsed = parse_file(self._extractor, sf.logical, data)
        self._parsed[key] = parsed
        if len(self._parsed) > self._max_parsed:
            self._parsed.popitem(last=False)
        return parsed


def parse_file(extractor: Extractor, logical: str, data: bytes) -> ParsedSource:
    """Parse a file given its logical path (which determines language and module)."""
    language = language_of(logical)
    if language is None:
        raise ValueError(f"no parser for {logical}")
    if language == "python":
        module, is_pkg = module_of(logical)
        return extractor.parse(data, language, module, is_package=is_pkg)
    return extractor.parse(data, language, package_of(logical))
