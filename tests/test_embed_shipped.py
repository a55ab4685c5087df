"""The shipped model loads safely and classifies well-known frames sensibly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfmodel.embed.classifier import default_models_dir, load_classifier
from perfmodel.embed.source.roots import SourceRoot, find_jdk_src_zip
from perfmodel.embed.weights import CONFIG_FILE

SHIPPED = default_models_dir()
KNOWN = {
    "java.net.SocketInputStream.read": "network",
    "java.util.zip.Inflater.inflate": "cpu",
    "java.io.FileInputStream.readBytes": "disk",
}

pytestmark = pytest.mark.skipif(
    not (SHIPPED / CONFIG_FILE).is_file(), reason="no shipped model in models/resource"
)


def _roots() -> list[SourceRoot]:
    jdk = find_jdk_src_zip()
    return [SourceRoot("jdk", jdk)] if jdk is not None else []


def test_shipped_files_are_safe_formats() -> None:
    names = {p.name for p in SHIPPED.iterdir()}
    assert all(n.endswith((".safetensors", ".json")) for n in names), names
    assert sum(p.stat().st_size for p in SHIPPED.iterdir()) < 50 * 2**20
    config = json.loads((SHIPPED / CONFIG_FILE).read_text())
    assert config["classes"] == sorted(config["classes"])
    assert config["metrics"]["test"]["average (code + doc)"]["macro_f1"] > 0.5


@pytest.mark.parametrize("frame", sorted(KNOWN))
def test_known_frames_with_source(frame: str) -> None:
    clf = load_classifier(roots=_roots())
    (res,) = clf.classify_frames([frame])
    assert res.label == KNOWN[frame], res.vector
    assert res.source_found == bool(_roots())


@pytest.mark.parametrize("frame", sorted(KNOWN))
def test_known_frames_by_name_only(frame: str) -> None:
    clf = load_classifier(roots=[])
    (res,) = clf.classify_frames([frame])
    assert not res.source_found
    assert res.label == KNOWN[frame], res.vector


def test_jfr_style_frames_and_python_frames() -> None:
    clf = load_classifier(roots=[])
    res = clf.classify_frames(
        [
            "java.net.SocketInputStream.read([BIII)I line: 68",
            "recv_into (socket.py:705)",
            "sha256 (hashlib.py:120)",
        ]
    )
    assert [r.label for r in res] == ["network", "network", "cpu"], [r.vector for r in res]


def test_model_card_matches_shipped_metrics() -> None:
    card = Path(SHIPPED.parent / "README.md").read_text()
    config = json.loads((SHIPPED / CONFIG_FILE).read_text())
    f1 = config["metrics"]["test"]["average (code + doc)"]["macro_f1"]
    assert f"{f1:.3f}" in card
    assert "perfmodel train" in card
