"""The locator on small roots written for the tests, and on real JFR frames."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from perfmodel.embed.source import SourceLocator, SourceRoot, find_jdk_src_zip

DATA = Path(__file__).parents[1] / "data" / "corpus"


@pytest.fixture(scope="module")
def small() -> SourceLocator:
    roots = [
        SourceRoot("java", DATA / "java"),
        SourceRoot("scala", DATA / "scala"),
        SourceRoot("python", DATA / "python"),
    ]
    with SourceLocator(roots) as loc:
        yield loc


def test_java_overload_chosen_by_line(small: SourceLocator) -> None:
    loc = small.locate("com.example.io.BlockReader.readBlock(byte[], int, int) line: 42")
    assert loc.source_found and loc.language == "java"
    assert loc.signature == "public int readBlock(byte[] buf, int off, int len) throws IOException"
    assert (loc.line_start, loc.line_end) == (39, 47)
    assert loc.path is not None and loc.path.endswith("com/example/io/BlockReader.java")
    assert loc.ast is not None and loc.ast[0] == "method_declaration"


def test_java_overload_chosen_by_parameter_types(small: SourceLocator) -> None:
    loc = small.locate("com/example/io/BlockReader.readBlock([B)I")
    assert loc.source_found
    assert loc.line_start == 31
    assert loc.doc is not None and loc.doc.startswith("Reads the next block")


def test_java_anonymous_and_nested_classes(small: SourceLocator) -> None:
    anon = small.locate("com.example.io.BlockReader$1.run() line: 70")
    assert anon.source_found and anon.source_name == "com.example.io.BlockReader$1.run"
    nested = small.locate("at com.example.io.BlockReader$Sink.drain(BlockReader.java:59)")
    assert nested.source_found and nested.line_start == 57


def test_scala_object_and_closure(small: SourceLocator) -> None:
    obj = small.locate("com.example.net.Fetcher$.connect(String, int) line: 43")
    assert obj.source_found and obj.language == "scala"
    assert obj.doc == "Opens a fetcher to host."
    closure = small.locate(
        "com.example.net.Fetcher.$anonfun$fetch$1(Fetcher, byte[], int) line: 27"
    )
    assert closure.source_found
    assert closure.qualified_name == "com.example.net.Fetcher.$anonfun$fetch$1"
    assert closure.source_name == "com.example.net.Fetcher.fetch"
    assert closure.synthetic == "anonfun"


def test_python_pyspy_frames(small: SourceLocator) -> None:
    loc = small.locate("recv_exactly (examplepkg/netio.py:17)")
    assert loc.source_found and loc.language == "python"
    assert loc.qualified_name == "examplepkg.netio.recv_exactly"
    assert loc.doc is not None and loc.doc.startswith("Receive exactly n bytes")
    inner = small.locate("_unused (netio.py:42)")
    assert inner.source_name == "examplepkg.netio.Connection.send_frame.<locals>._unused"
    absolute = small.locate(f"send_frame ({DATA / 'python/examplepkg/netio.py'}:39)")
    assert absolute.source_found
    assert absolute.qualified_name == "examplepkg.netio.Connection.send_frame"


def test_missing_source_gives_name_tokens(small: SourceLocator) -> None:
    loc = small.locate("org.apache.spark.rdd.RDD.$anonfun$mapPartitions$2(Function1) line: 855")
    assert not loc.source_found
    assert loc.language == "scala"
    assert loc.name_tokens == ("org", "apache", "spark", "rdd", "rdd", "map", "partitions")
    assert loc.code is None and loc.note
    lam = small.locate("com.example.io.BlockReader$$Lambda$12/0x0000000800c3b840.run")
    assert not lam.source_found and "lambda" in lam.note
    assert small.locate("wrong line (netio.py:1)").source_found is False


def test_sources_jar_root(tmp_path: Path) -> None:
    jar = tmp_path / "fetcher-1.0-sources.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(DATA / "scala/com/example/net/Fetcher.scala", "com/example/net/Fetcher.scala")
    with SourceLocator([SourceRoot("jar", jar)]) as loc:
        found = loc.locate("com.example.net.Fetcher.fetch(int)")
    assert found.source_found
    assert found.path == f"{jar}!com/example/net/Fetcher.scala"


def _real_frames() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in (DATA / "jfr_frames.txt").read_text().splitlines():
        if line.startswith("# ["):
            current = line[3 : line.index("]")]
        elif line and not line.startswith("#"):
            sections.setdefault(current, []).append(line)
    return sections


def test_real_jfr_frames_against_the_jdk_src_zip() -> None:
    """Frames from a real JFR recording of a PySpark job (see the header of the file)."""
    src_zip = find_jdk_src_zip()
    if src_zip is None:
        pytest.skip(
            "no JDK src.zip on this machine: apt-get install openjdk-17-source "
            "(or set JAVA_HOME to a JDK with lib/src.zip)"
        )
    frames = _real_frames()
    assert len(frames["jdk"]) >= 40 and len(frames["spark"]) >= 30
    with SourceLocator([SourceRoot("jdk", src_zip)]) as loc:
        for frame in frames["jdk"]:
            found = loc.locate(frame)
            assert found.source_found, (frame, found.note)
            assert found.code and found.ast is not None
            assert found.source_name is not None
            assert found.source_name.rsplit(".", 1)[-1] in frame
        for frame in frames["spark"] + frames["other"]:
            found = loc.locate(frame)
            assert not found.source_found, frame
            assert found.name_tokens, frame
        read = loc.locate("java.io.FileInputStream.readBytes(byte[], int, int)")
        assert read.path is not None and read.path.endswith("java/io/FileInputStream.java")
        assert "native" in (read.signature or "")
        assert read.doc
        sock = loc.locate("sun.nio.ch.NioSocketImpl.read(byte[], int, int) line: 355")
        assert sock.line_start is not None and sock.line_start <= 355 <= (sock.line_end or 0)


def test_real_pyspy_frames_against_the_stdlib() -> None:
    """Frames from a real py-spy recording (see the header of the file)."""
    from perfmodel.embed.source.roots import python_stdlib_dir

    frames = [
        line
        for line in (DATA / "pyspy_frames.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(frames) >= 10
    with SourceLocator([SourceRoot("python-stdlib", python_stdlib_dir())]) as loc:
        for frame in frames:
            found = loc.locate(frame)
            assert found.source_found, (frame, found.note)
            assert found.language == "python" and found.ast is not None
        sock = loc.locate("SocketIO.readinto (socket.py:706)")
        assert sock.qualified_name == "socket.SocketIO.readinto"
        assert sock.name_tokens == ("socket", "socket", "io", "readinto")
        codec = loc.locate("BufferedIncrementalDecoder.decode (<frozen codecs>:322)")
        assert codec.qualified_name == "codecs.BufferedIncrementalDecoder.decode"


def test_in_directory_lists_a_package_s_own_files_of_one_language(tmp_path: Path) -> None:
    """Looked up by directory (a frame's package, once per frame): the files directly in it,
    of the language asked for, the first root's copy where two roots hold one."""
    from perfmodel.embed.source.index import SourceIndex

    first, second = tmp_path / "a", tmp_path / "b"
    for root, names in (
        (first, ["org/x/A.scala", "org/x/B.java", "org/x/y/C.scala", "org/D.scala"]),
        (second, ["org/x/A.scala", "org/x/E.scala"]),
    ):
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("object Z\n")
    index = SourceIndex([SourceRoot("a", first), SourceRoot("b", second)])
    scala = index.in_directory("org/x", "scala")
    assert sorted(sf.logical for sf in scala) == ["org/x/A.scala", "org/x/E.scala"]
    assert next(sf for sf in scala if sf.logical == "org/x/A.scala").root.name == "a"
    assert [sf.logical for sf in index.in_directory("org/x/", "java")] == ["org/x/B.java"]
    assert index.in_directory("org/none", "scala") == [] and index.in_directory("", "scala") == []
    index.close()
