"""Manifests: the shipped ones load; malformed ones are rejected naming file and entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.embed.corpus import Labeler, ManifestError, load_manifests
from perfmodel.embed.corpus.patterns import Pattern, PatternError, normalize_name

REPO = Path(__file__).parents[2]
LABELS = """
[labels.cpu]
description = "c"
[labels.disk]
description = "d"
"""


def test_shipped_manifests_load() -> None:
    labels, manifests = load_manifests([REPO / "corpora" / "manifests"])
    assert {"cpu", "disk", "network"} <= set(labels.labels)
    assert {m.language for m in manifests} >= {"java", "python"}
    assert all(r.reason for m in manifests for r in m.rules)
    jdk = next(m for m in manifests if m.name == "jdk")
    lab = Labeler(jdk, labels)
    assert lab.decide("java.io.FileInputStream.readBytes").label == "disk"
    assert lab.decide("sun.nio.ch.NioSocketImpl.read").label == "network"
    assert lab.decide("java.util.zip.Inflater.inflate").label == "cpu"
    assert lab.decide("java.net.URI.parse").label is None  # excluded: string parsing
    assert lab.decide("java.io.FileInputStream.toString").excluded_by == "exclude:**.toString"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("java..io", "empty segment"),
        ("java.io.", "empty segment"),
        ("java.**.**.x", "repeats '**'"),
        ("java.io**", "whole segment"),
        ("java.i o", "whitespace"),
        ("**", "match everything"),
        ("java.[io", "unbalanced"),
        ("java.io%x", "invalid segment"),
    ],
)
def test_bad_patterns(text: str, fragment: str) -> None:
    with pytest.raises(PatternError, match=fragment.replace("*", r"\*").replace("(", r"\(")):
        Pattern.parse(text)


def test_pattern_semantics() -> None:
    p = Pattern.parse("java.util.HashMap.**")
    assert p.matches(normalize_name("java.util.HashMap$TreeNode.putTreeVal"))
    assert not p.matches(normalize_name("java.util.HashMapX.get"))
    assert Pattern.parse("**.toString").matches("a.b.C.toString")
    assert Pattern.parse("sun.nio.ch.*Socket*.**").matches("sun.nio.ch.NioSocketImpl.read")
    assert not Pattern.parse("sun.nio.ch.*Socket*.**").matches("sun.nio.ch.FileChannelImpl.read")
    assert Pattern.parse("os.**").matches("os.walk")
    assert Pattern.parse("a.**.z").matches("a.z") and Pattern.parse("a.**.z").matches("a.b.c.z")
    assert Pattern.parse("java.util.*").may_match_under(("java", "util", "HashMap"))
    assert not Pattern.parse("java.util.*").may_match_under(("java", "io", "File"))


def _write(tmp: Path, body: str, labels: str = LABELS) -> Path:
    (tmp / "labels.toml").write_text(labels)
    (tmp / "m.toml").write_text(body)
    return tmp


GOOD_SOURCE = '[source]\nlanguage = "java"\nroots = ["jdk"]\n'


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            GOOD_SOURCE + '[[rule]]\npattern = "java..io"\nlabel = "cpu"\nreason = "r"\n',
            "m.toml: rule #1 (java..io): pattern 'java..io' has an empty segment",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "java.io.**"\nlabel = "gpu"\nreason = "r"\n',
            "m.toml: rule #1 (java.io.**): unknown label 'gpu'",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "java.io.**"\nlabel = "cpu"\n',
            "m.toml: rule #1 (java.io.**): missing key(s) ['reason']",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "java.io.**"\nlabel = "cpu"\nreason = ""\n',
            "'reason' must be a non-empty",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "a.**"\nlabel = "cpu"\nreason = "r"\nwhy = 1\n',
            "m.toml: rule #1 (a.**): unknown key(s) ['why']",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "a.**"\nlabel = "cpu"\nreason = "r"\n'
            '[[rule]]\npattern = "a.**"\nlabel = "disk"\nreason = "r"\n',
            "rule #2 (a.**): duplicate of rule #1",
        ),
        (
            GOOD_SOURCE + '[[rule]]\npattern = "a.**"\nlabel = "cpu"\nreason = "r"\n'
            '[[exclude]]\npattern = "a..b"\nreason = "r"\n',
            "m.toml: exclude #1 (a..b)",
        ),
        (
            '[source]\nlanguage = "cobol"\nroots = ["x"]\n[[rule]]\npattern = "a"\nlabel = "cpu"\n'
            'reason = "r"\n',
            "language must be one of",
        ),
        ("[source\n", "m.toml: not valid TOML"),
        (GOOD_SOURCE, "missing key(s) ['rule']"),
    ],
)
def test_malformed_manifests_are_rejected(tmp_path: Path, body: str, fragment: str) -> None:
    _write(tmp_path, body)
    with pytest.raises(ManifestError) as err:
        load_manifests([tmp_path])
    assert fragment in str(err.value)


def test_label_set_is_data(tmp_path: Path) -> None:
    labels = LABELS + '[labels.memory]\ndescription = "allocation and GC"\n'
    _write(
        tmp_path,
        GOOD_SOURCE + '[[rule]]\npattern = "a.**"\nlabel = "memory"\nreason = "r"\n',
        labels,
    )
    labels_set, manifests = load_manifests([tmp_path])
    assert "memory" in labels_set.labels
    assert Labeler(manifests[0], labels_set).decide("a.B.c").label == "memory"


def test_conflicting_equally_specific_rules_exclude(tmp_path: Path) -> None:
    _write(
        tmp_path,
        GOOD_SOURCE + '[[rule]]\npattern = "a.*.c"\nlabel = "cpu"\nreason = "r"\n'
        '[[rule]]\npattern = "a.b.*"\nlabel = "disk"\nreason = "r"\n'
        '[[rule]]\npattern = "a.x.y"\nlabel = "disk"\nreason = "r"\n'
        '[[rule]]\npattern = "a.**"\nlabel = "cpu"\nreason = "r"\n',
    )
    labels, manifests = load_manifests([tmp_path])
    lab = Labeler(manifests[0], labels)
    assert lab.decide("a.b.c").excluded_by == "conflict"  # mixed: left out, not guessed
    assert lab.decide("a.b.d").label == "disk"
    assert lab.decide("a.x.c").label == "cpu"
    assert lab.decide("a.x$y").label == "disk"  # the literal rule is the most specific
    assert lab.decide("a.q.r.s").label == "cpu"
    assert lab.decide("b.c").excluded_by == "unmatched"


def test_missing_labels_file(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(GOOD_SOURCE)
    with pytest.raises(ManifestError, match="labels.toml"):
        load_manifests([tmp_path / "m.toml"])
