"""Frame-name parsing: JFR, Java stack traces, descriptors, Scala mangling, py-spy."""

from __future__ import annotations

import pytest

from perfmodel.embed.source import parse_frame, split_identifier


@pytest.mark.parametrize(
    ("frame", "cls", "method", "synthetic", "line"),
    [
        (
            "java.io.FileInputStream.readBytes(byte[], int, int)",
            "java.io.FileInputStream",
            "readBytes",
            None,
            None,
        ),
        (
            "java.io.FileInputStream.read(byte[], int, int) line: 276",
            "java.io.FileInputStream",
            "read",
            None,
            276,
        ),
        (
            "java/io/FileInputStream.readBytes([BII)I",
            "java.io.FileInputStream",
            "readBytes",
            None,
            None,
        ),
        (
            "at java.base/java.io.FileInputStream.readBytes(Native Method)",
            "java.io.FileInputStream",
            "readBytes",
            None,
            None,
        ),
        (
            "at org.apache.spark.rdd.RDD.iterator(RDD.scala:329)",
            "org.apache.spark.rdd.RDD",
            "iterator",
            None,
            329,
        ),
        (
            "org.apache.spark.rdd.RDD.$anonfun$mapPartitionsInternal$2$adapted(Function1, "
            "TaskContext, Object, Iterator) line: 960",
            "org.apache.spark.rdd.RDD",
            "mapPartitionsInternal",
            "anonfun",
            960,
        ),
        (
            "scala.collection.Iterator$$anon$9.next() line: 594",
            "scala.collection.Iterator$$anon$9",
            "next",
            "anon-class",
            594,
        ),
        ("Foo.lambda$main$0()", "Foo", "main", "lambda", None),
        (
            "org.apache.spark.sql.SparkPlan$$Lambda$1234/0x0000000800c3b840.apply",
            "org.apache.spark.sql.SparkPlan$$Lambda$1234",
            "apply",
            "lambda-class",
            None,
        ),
        (
            "org.apache.spark.util.SparkErrorUtils.tryWithSafeFinally$(SparkErrorUtils, Function0, "
            "Function0) line: 64",
            "org.apache.spark.util.SparkErrorUtils",
            "tryWithSafeFinally",
            None,
            64,
        ),
        (
            "org.apache.spark.deploy.SparkSubmit.org$apache$spark$deploy$SparkSubmit$$runMain"
            "(SparkSubmitArguments, boolean) line: 1027",
            "org.apache.spark.deploy.SparkSubmit",
            "runMain",
            None,
            1027,
        ),
        (
            "scala.collection.immutable.List.$plus$plus(IterableOnce)",
            "scala.collection.immutable.List",
            "++",
            None,
            None,
        ),
        (
            "io.netty.channel.epoll.Native.epollWait0(int, long, int, int, int, int, long)",
            "io.netty.channel.epoll.Native",
            "epollWait0",
            None,
            None,
        ),
    ],
)
def test_jvm_frames(
    frame: str, cls: str, method: str, synthetic: str | None, line: int | None
) -> None:
    pf = parse_frame(frame)
    assert pf.kind == "jvm"
    assert pf.class_name == cls
    assert pf.method == method
    assert pf.synthetic == synthetic
    assert pf.line == line


def test_nested_class_maps_to_top_level_file_and_descriptor_params() -> None:
    pf = parse_frame(
        "java/util/HashMap$TreeNode.putTreeVal(Ljava/util/HashMap;[Ljava/lang/Object;I)V"
    )
    assert pf.top_class == "java.util.HashMap"
    assert pf.params == ("java.util.HashMap", "java.lang.Object[]", "int")


def test_language_guess() -> None:
    assert parse_frame("org.apache.spark.rdd.RDD.iterator").language_guess == "scala"
    assert parse_frame("org.apache.spark.unsafe.Platform.getInt").language_guess == "java"
    assert parse_frame("java.util.HashMap.get").language_guess == "java"


@pytest.mark.parametrize(
    ("frame", "method", "file", "line", "qualified"),
    [
        ("recv_into (socket.py:706)", "recv_into", "socket.py", 706, "socket.recv_into"),
        ("main (/tmp/job.py:12)", "main", "/tmp/job.py", 12, "job.main"),
        ("SocketIO.readinto (socket.py:706)", "readinto", "socket.py", 706, "SocketIO.readinto"),
        (
            '  File "/usr/lib/python3.11/json/__init__.py", line 231, in dumps',
            "dumps",
            "/usr/lib/python3.11/json/__init__.py",
            231,
            "__init__.dumps",
        ),
    ],
)
def test_python_frames(frame: str, method: str, file: str, line: int, qualified: str) -> None:
    pf = parse_frame(frame)
    assert (pf.kind, pf.method, pf.file, pf.line) == ("python", method, file, line)
    assert pf.qualified_name == qualified


def test_unknown_frame_is_not_an_error() -> None:
    pf = parse_frame("[unknown]")
    assert pf.kind == "unknown"


def test_name_tokens_drop_mangling() -> None:
    pf = parse_frame("org.apache.spark.rdd.RDD.$anonfun$mapPartitions$2")
    assert pf.name_tokens == ("org", "apache", "spark", "rdd", "rdd", "map", "partitions")
    assert split_identifier("HTTPServerReadBytes_now2") == [
        "http",
        "server",
        "read",
        "bytes",
        "now",
    ]
    assert split_identifier("sha256", keep_digits=True) == ["sha", "256"]
