"""The frame-vector cache: a bundle read again takes its vectors from the cache and builds no
models; anything its vectors depend on changes the key; a cache that cannot be used is passed
over."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from perfmodel.embed import vector_cache
from perfmodel.embed.source.roots import SourceRoot
from perfmodel.embed.vector_cache import CACHE_FILE, CachedFrameVectors, cache_key, opened_cache


class Counting:
    """Stands for the models: a vector made from the frame's text (and the code file's size,
    for frames given one in ``files``), and the frames it was asked for."""

    def __init__(self, files: dict[str, Path] | None = None) -> None:
        self.asked: list[str] = []
        self.files = files or {}

    def frame_vectors(self, frames: Sequence[str]) -> list[dict[str, float]]:
        return [v for v, _ in self.frame_vectors_and_files(frames)]

    def frame_vectors_and_files(
        self, frames: Sequence[str]
    ) -> list[tuple[dict[str, float], str | None]]:
        self.asked += frames
        out = []
        for f in frames:
            file = self.files.get(f)
            n = len(f) + (file.stat().st_size if file is not None and file.exists() else 0)
            out.append(({"cpu": 1 / (1 + n), "disk": n / (1 + n)}, file and str(file)))
        return out


FRAMES = ["a.B.c(B.java:1)", "x (y.py:3)", "a.B.c(B.java:1)", "q.R.s(R.scala:9)"]


def _vectors(
    cache_dir: Path, key: str, frames: Sequence[str], files: dict[str, Path] | None = None
) -> tuple[list, Counting, int]:
    models = Counting(files)
    built = []

    def make() -> Counting:
        built.append(models)
        return models

    with opened_cache(cache_dir) as store:
        out = CachedFrameVectors(store, key, make).frame_vectors(frames)
    return out, models, len(built)


def test_a_second_read_takes_every_vector_from_the_cache(tmp_path: Path) -> None:
    first, models, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 1 and models.asked == list(dict.fromkeys(FRAMES))  # each frame once
    again, _, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 0  # no models loaded at all
    assert again == first == Counting().frame_vectors(FRAMES)  # floats round-trip exactly
    more, models, built = _vectors(tmp_path, "k", [*FRAMES, "new.F.g(F.java:2)"])
    assert built == 1 and models.asked == ["new.F.g(F.java:2)"]
    assert more[:4] == first
    other, models, _ = _vectors(tmp_path, "another key", FRAMES[:1])
    assert models.asked == FRAMES[:1]


def test_the_key_follows_the_models_and_the_source_roots(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "config.json").write_text("{}")
    root = tmp_path / "site-packages"
    root.mkdir()
    roots = [SourceRoot("site-packages", root)]
    key = cache_key(models, roots)
    assert cache_key(models, roots) == key
    (models / "code_model.safetensors").write_bytes(b"weights")
    changed = cache_key(models, roots)
    assert changed != key
    (root / "newpkg").mkdir()  # a package installed: the root's listing changes
    os.utime(root, ns=(1, 1))  # whatever the file system's timestamp resolution
    assert cache_key(models, roots) != changed
    assert cache_key(models, [*roots, SourceRoot("jdk", tmp_path / "src.zip")]) != changed


def test_a_damaged_cache_file_is_made_anew(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"not a database" * 100)
    out, models, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 1 and out == Counting().frame_vectors(FRAMES)
    _, _, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 0


def test_an_unwritable_cache_directory_is_passed_over(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    out, _, built = _vectors(blocked / "cache", "k", FRAMES)
    assert built == 1 and len(out) == len(FRAMES)


def test_the_file_keeps_the_most_recent_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_cache, "MAX_ROWS", 3)
    _vectors(tmp_path, "k", ["f1", "f2"])
    _vectors(tmp_path, "k", ["f3", "f4"])
    _, models, _ = _vectors(tmp_path, "k", ["f1", "f2", "f3", "f4"])
    assert models.asked == ["f1"]  # the first computed went first


def test_a_vector_whose_code_file_changed_is_computed_again(tmp_path: Path) -> None:
    """A user's script edited between two recordings: its frames read the same, their code
    does not, so their vectors are computed again; the other frames still come from the
    cache. A file that did not exist when the vector was stored counts as changed too."""
    script, later = tmp_path / "job.py", tmp_path / "later.py"
    script.write_text("def f():\n    return 1\n")
    files = {"f (/job.py)": script, "g (/later.py)": later}
    frames = ["f (/job.py)", "g (/later.py)", "h.I.j(I.java:3)"]
    first, _, _ = _vectors(tmp_path, "k", frames, files)
    _, models, built = _vectors(tmp_path, "k", frames, files)
    assert built == 0
    script.write_text("def f():\n    return sum(range(10**6))\n")
    later.write_text("def g(): pass\n")
    again, models, _ = _vectors(tmp_path, "k", frames, files)
    assert models.asked == ["f (/job.py)", "g (/later.py)"]
    assert again[0] != first[0] and again[2] == first[2]


def test_a_cache_file_of_another_version_is_made_anew(tmp_path: Path) -> None:
    _vectors(tmp_path, "k", FRAMES)
    import sqlite3

    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("PRAGMA user_version = 99")
    _, models, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 1
    _, models, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 0
