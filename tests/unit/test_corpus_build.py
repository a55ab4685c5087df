"""The corpus builder end to end on the small test roots, and the split rules."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from perfmodel.embed.corpus import SCHEMA_VERSION, BuildConfig, read_corpus
from perfmodel.embed.corpus.builder import build_corpus
from perfmodel.embed.corpus.dedup import body_key, dedup
from perfmodel.embed.corpus.split import SplitDefinition, assign, load_split
from perfmodel.embed.source import find_jdk_src_zip

DATA = Path(__file__).parents[1] / "data" / "corpus"
ROOTS = {
    "test-java": [DATA / "java"],
    "test-scala": [DATA / "scala"],
    "test-python": [DATA / "python"],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("corpus")
    config = BuildConfig(
        manifests=[DATA / "manifests"],
        out=tmp / "out",
        split_file=tmp / "split.json",
        roots=ROOTS,
        jobs=1,
    )
    progress: list[tuple[int, int]] = []
    result = build_corpus(config, progress=lambda d, t: progress.append((d, t)))
    return result, config, progress


def test_records_labels_and_fields(built) -> None:
    result, config, progress = built
    records = read_corpus(config.out)
    by_name = {r.qualified_name: r for r in records}
    assert by_name["com.example.io.BlockReader.readBlock"].label == "disk"
    assert by_name["com.example.net.Fetcher.fetch"].label == "network"
    assert by_name["com.example.net.Fetcher$.connect"].language == "scala"
    assert by_name["examplecodec.hashing.fnv1a"].label == "cpu"
    assert by_name["examplefs.files.copy_file"].label == "disk"
    recv = by_name["examplepkg.netio.recv_exactly"]
    assert recv.label == "network" and recv.package == "examplepkg"
    assert recv.doc.startswith("Receive exactly")
    assert recv.path == "examplepkg/netio.py" and recv.root == "test-python"
    assert recv.line_start == 6 and recv.rule == "examplepkg.netio.**"
    assert recv.manifest == "test-python.toml"
    assert recv.name_tokens == ["examplepkg", "netio", "recv", "exactly"]
    tree = recv.ast_tree()
    assert tree[0] == "function_definition" and isinstance(tree[1], list)
    # trivial, excluded and duplicate functions are left out
    assert "com.example.io.BlockReader.getBlocks" not in by_name
    assert "com.example.io.BlockReader.closer" not in by_name  # manifest exclusion
    assert "examplepkg.netio.Connection.close" not in by_name
    assert ("com.example.codec.Checksum.update" in by_name) != (
        "com.example.codec.Checksum.updateAgain" in by_name
    )
    assert result.stats["skipped"]["duplicate"] == 1
    assert result.stats["skipped"]["excluded"] == 1
    assert progress[-1][0] == progress[-1][1] > 0
    assert {r.language for r in records} == {"java", "scala", "python"}


def test_split_is_by_package_and_every_class_has_both_sides(built) -> None:
    result, config, _ = built
    records = read_corpus(config.out)
    sides: dict[str, set[str]] = {}
    for r in records:
        sides.setdefault(r.package, set()).add(r.split)
    assert all(len(s) == 1 for s in sides.values())  # never split inside a package
    for label in {r.label for r in records}:
        assert {r.split for r in records if r.label == label} == {"train", "test"}
    stored = load_split(config.split_file)
    assert set(stored.packages) == set(sides)


def test_rebuild_keeps_stored_split(built, tmp_path: Path) -> None:
    _, config, _ = built
    stored = json.loads(config.split_file.read_text())
    again = BuildConfig(
        manifests=[DATA / "manifests"],
        out=tmp_path / "out",
        split_file=config.split_file,
        roots=ROOTS,
        jobs=2,
    )
    result = build_corpus(again)
    assert result.new_packages == []
    assert json.loads(config.split_file.read_text()) == stored
    info = json.loads((tmp_path / "out" / "build.json").read_text())
    assert info["schema_version"] == SCHEMA_VERSION
    assert set(info["labels"]) == {"cpu", "disk", "network"}


def test_assign_respects_fraction_and_fixed_packages() -> None:
    counts = {f"p{i}": Counter({"cpu|python": 10}) for i in range(20)}
    counts |= {f"q{i}": Counter({"disk|java": 5}) for i in range(4)}
    split = SplitDefinition(packages={"p0": "test"}, test_fraction=0.2)
    new = assign(split, counts)
    assert "p0" not in new and split.packages["p0"] == "test"
    test_cpu = sum(10 for p, s in split.packages.items() if p.startswith("p") and s == "test")
    assert 30 <= test_cpu <= 60
    assert {split.packages[f"q{i}"] for i in range(4)} == {"train", "test"}


def test_assign_rejects_single_package_class() -> None:
    with pytest.raises(ValueError, match="one package only"):
        assign(
            SplitDefinition(),
            {"a": Counter({"cpu": 3}), "b": Counter({"disk": 2}), "c": Counter({"disk": 2})},
        )


def test_dedup_drops_copies_and_conflicts() -> None:
    body = "{ int s = 0; for (int i = 0; i < n; i++) { s += a[i] * b[i]; } return s + offset; }"
    keys = [
        body_key("int dot()", body, "dot"),
        body_key("int dot2()", body.replace(" ", "\n"), "x"),
        body_key("int y()", "{ return q(); }", "y"),
        body_key("int z()", "{ return q(); }", "z"),
    ]
    out = dedup(keys, ["cpu", "cpu", "cpu", "disk"], [("a", ""), ("b", ""), ("c", ""), ("d", "")])
    assert out.kept == [0, 2, 3] and out.duplicates == 1 and out.conflicting == 0
    out = dedup(keys[:2], ["cpu", "disk"], [("a", ""), ("b", "")])
    assert out.kept == [] and out.conflicting == 2


def test_real_jdk_narrow_manifest(tmp_path: Path) -> None:
    """Builds from the real JDK src.zip with a narrow manifest (skips without the JDK source)."""
    if find_jdk_src_zip() is None:
        pytest.skip("no JDK src.zip on this machine: apt-get install openjdk-17-source")
    mdir = tmp_path / "m"
    mdir.mkdir()
    (mdir / "labels.toml").write_text((DATA / "manifests" / "labels.toml").read_text())
    (mdir / "jdk.toml").write_text(
        '[source]\nlanguage = "java"\nroots = ["jdk"]\n'
        '[[rule]]\npattern = "java.util.zip.CRC32*.**"\nlabel = "cpu"\nreason = "checksums"\n'
        '[[rule]]\npattern = "java.util.Base64.**"\nlabel = "cpu"\nreason = "checksums"\n'
        '[[rule]]\npattern = "java.io.RandomAccessFile.**"\nlabel = "disk"\nreason = "files"\n'
        '[[rule]]\npattern = "java.nio.file.Files.**"\nlabel = "disk"\nreason = "files"\n'
        '[[rule]]\npattern = "sun.nio.ch.Net.**"\nlabel = "network"\nreason = "sockets"\n'
        '[[rule]]\npattern = "java.net.ServerSocket.**"\nlabel = "network"\nreason = "sockets"\n'
    )
    result = build_corpus(
        BuildConfig(
            manifests=[mdir], out=tmp_path / "out", split_file=tmp_path / "split.json", jobs=1
        )
    )
    names = {r.qualified_name: r for r in result.records}
    assert names["java.io.RandomAccessFile.readFully"].label == "disk"
    assert names["java.net.ServerSocket.accept"].doc.startswith("Listens for a connection")
    assert result.stats["files_parsed"] <= 8
