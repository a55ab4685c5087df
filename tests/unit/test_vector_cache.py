"""The frame-vector cache: a bundle read again takes its vectors from the cache and builds no
models; anything its vectors depend on changes the key; a cache that cannot be used is passed
over."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from perfmodel.embed import vector_cache
from perfmodel.embed.source.roots import SourceRoot
from perfmodel.embed.vector_cache import CACHE_FILE, CachedFrameVectors, cache_key, opened_cache


class Counting:
    """Stands for the models: a vector made from the frame's text, and how many it made."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def frame_vectors(self, frames: Sequence[str]) -> list[dict[str, float]]:
        self.asked += frames
        return [{"cpu": 1 / (1 + len(f)), "disk": len(f) / (1 + len(f))} for f in frames]


FRAMES = ["a.B.c(B.java:1)", "x (y.py:3)", "a.B.c(B.java:1)", "q.R.s(R.scala:9)"]


def _vectors(cache_dir: Path, key: str, frames: Sequence[str]) -> tuple[list, Counting, int]:
    models = Counting()
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
    assert cache_key(models, roots) != changed
    assert cache_key(models, [*roots, SourceRoot("jdk", tmp_path / "src.zip")]) != changed


def test_a_damaged_cache_file_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"not a database" * 100)
    out, models, built = _vectors(tmp_path, "k", FRAMES)
    assert built == 1 and out == Counting().frame_vectors(FRAMES)


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
    assert models.asked == ["f1"]  # the oldest went first
