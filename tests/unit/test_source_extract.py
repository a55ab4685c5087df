"""Extraction on small source files written for the tests (tests/data/corpus/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.embed.source import Extractor, ast_leaves, function_ast
from perfmodel.embed.source.doc import clean_docstring, clean_javadoc, clean_scaladoc

DATA = Path(__file__).parents[1] / "data" / "corpus"


def _parse(rel: str, language: str, module: str = ""):
    return Extractor().parse((DATA / rel).read_bytes(), language, module)


def _by_name(parsed):
    return {(f.qualified_name, f.params): f for f in parsed.functions}


def test_java_names_follow_jvm_binary_names() -> None:
    parsed = _parse("java/com/example/io/BlockReader.java", "java")
    names = [f.qualified_name for f in parsed.functions]
    assert names == [
        "com.example.io.BlockReader.<init>",
        "com.example.io.BlockReader.readBlock",
        "com.example.io.BlockReader.readBlock",
        "com.example.io.BlockReader.getBlocks",
        "com.example.io.BlockReader$Sink.accept",
        "com.example.io.BlockReader$Sink.drain",
        "com.example.io.BlockReader.closer",
        "com.example.io.BlockReader$1.run",
        "com.example.io.BlockReader.close",
    ]
    assert {f.package for f in parsed.functions} == {"com.example.io"}


def test_java_docs_bodies_signatures_and_trivia() -> None:
    fns = _by_name(_parse("java/com/example/io/BlockReader.java", "java"))
    read = fns[("com.example.io.BlockReader.readBlock", ("byte[]",))]
    assert read.signature == "public int readBlock(byte[] buf) throws IOException"
    assert read.body.startswith("{") and "in.read(buf, 0, buf.length)" in read.body
    assert read.doc.startswith("Reads the next block into buf. Blocks until")
    assert "returns the number of bytes read" in read.doc
    assert "@since" not in read.doc and "<p>" not in read.doc and "{@" not in read.doc
    assert (read.line_start, read.line_end) == (31, 37)
    assert read.trivial is None
    other = fns[("com.example.io.BlockReader.readBlock", ("byte[]", "int", "int"))]
    assert other.doc == ""
    assert fns[("com.example.io.BlockReader.getBlocks", ())].trivial == "getter"
    assert fns[("com.example.io.BlockReader$Sink.accept", ("byte[]",))].trivial == "no-body"
    assert fns[("com.example.io.BlockReader.close", ())].trivial == "no-body"  # native


def test_java_ast_has_identifier_leaves_and_no_comments() -> None:
    parsed = _parse("java/com/example/io/BlockReader.java", "java")
    fn = parsed.functions[1]
    ast, n = function_ast(parsed, fn)
    assert ast[0] == "method_declaration"
    leaves = ast_leaves(ast)
    assert ("identifier", "readBlock") in leaves
    assert ("identifier", "in") in leaves and ("identifier", "read") in leaves
    assert n > len(leaves)
    assert "Reads the next block" not in str(ast)


def test_scala_objects_classes_docs() -> None:
    fns = {
        f.qualified_name: f
        for f in _parse("scala/com/example/net/Fetcher.scala", "scala").functions
    }
    assert set(fns) == {
        "com.example.net.Fetcher.fetch",
        "com.example.net.Fetcher.host_",
        "com.example.net.Fetcher.close",
        "com.example.net.Fetcher$.connect",
    }
    fetch = fns["com.example.net.Fetcher.fetch"]
    assert fetch.signature == "def fetch(n: Int): Array[Byte]"
    assert (
        fetch.doc
        == "Reads exactly n bytes from the socket. n how many bytes returns the bytes read"
    )
    assert "socket.getInputStream.read" in fetch.body
    assert fetch.package == "com.example.net"
    assert fns["com.example.net.Fetcher.close"].trivial == "no-body"
    assert fns["com.example.net.Fetcher.host_"].trivial == "getter"
    assert fns["com.example.net.Fetcher$.connect"].doc == "Opens a fetcher to host."


def test_python_qualnames_docstrings_and_trivia() -> None:
    parsed = _parse("python/examplepkg/netio.py", "python", "examplepkg.netio")
    fns = {f.qualified_name: f for f in parsed.functions}
    assert list(fns) == [
        "examplepkg.netio.recv_exactly",
        "examplepkg.netio.Connection.__init__",
        "examplepkg.netio.Connection.peer",
        "examplepkg.netio.Connection.send_frame",
        "examplepkg.netio.Connection.send_frame.<locals>._unused",
        "examplepkg.netio.Connection.close",
    ]
    recv = fns["examplepkg.netio.recv_exactly"]
    assert recv.signature == "def recv_exactly(sock: socket.socket, n: int) -> bytes"
    assert recv.doc == (
        "Receive exactly n bytes from socket.socket sock. sock a connected socket "
        "n number of bytes returns the received bytes"
    )
    assert '"""' not in recv.body and "sock.recv(n)" in recv.body
    assert recv.package == "examplepkg"
    assert recv.class_name is None
    assert fns["examplepkg.netio.Connection.send_frame"].class_name == "examplepkg.netio.Connection"
    assert fns["examplepkg.netio.Connection.peer"].trivial == "getter"
    assert fns["examplepkg.netio.Connection.__init__"].trivial == "setter"
    assert fns["examplepkg.netio.Connection.close"].trivial == "throw-only"
    ast, _ = function_ast(parsed, recv)
    assert "Receive exactly" not in str(ast)  # the docstring belongs to the doc model


@pytest.mark.parametrize(
    ("raw", "clean", "expected"),
    [
        (
            "/** Uses {@link Foo#bar the bar} and {@code x < y}.\n * @since 9 */",
            clean_javadoc,
            "Uses the bar and x < y.",
        ),
        (
            "/** See [[org.Foo Foo]] and `x`.\n  * {{{ code }}}\n  * @group io */",
            clean_scaladoc,
            "See Foo and x.",
        ),
        (
            "Use :func:`os.read` on ``fd``.\n\n.. versionadded:: 3.2\n",
            clean_docstring,
            "Use os.read on fd.",
        ),
    ],
)
def test_doc_cleaning(raw: str, clean, expected: str) -> None:
    assert clean(raw) == expected
