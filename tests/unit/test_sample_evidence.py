"""Which samples count as evidence of a stage's resource use, and their weights."""

from __future__ import annotations

import pytest

from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import CallProfile
from perfmodel.embed.classifier import model_name_tokens
from perfmodel.embed.sample_evidence import (
    is_interpreter_startup,
    says_what_the_stage_did,
    stack_time_weights,
    waits_on_jvm,
    waits_on_python_worker,
    without_network,
)
from perfmodel.embed.source.names import name_tokens

SITE = "/venv/lib/python3.11/site-packages"
PYSPARK = f"{SITE}/pyspark/python/lib/pyspark.zip/pyspark"


def test_python_worker_waiting_on_the_jvm_is_not_evidence() -> None:
    header = (
        f"main ({PYSPARK}/worker.py)",
        f"ArrowStreamSerializer.load_stream ({PYSPARK}/sql/pandas/serializers.py)",
        f"open_stream ({SITE}/pyarrow/ipc.py)",
        f"RecordBatchStreamReader.__init__ ({SITE}/pyarrow/ipc.py)",
    )
    framing = (f"main ({PYSPARK}/worker.py)", f"read_int ({PYSPARK}/serializers.py)")
    socket_read = (
        f"main ({PYSPARK}/worker.py)",
        "SocketIO.readinto (/usr/lib/python3.11/socket.py)",
    )
    daemon = (f"<module> ({PYSPARK}/daemon.py)", f"manager ({PYSPARK}/daemon.py)")
    for stack in (header, framing, socket_read, daemon):
        assert waits_on_jvm(stack), stack
        assert not says_what_the_stage_did(stack)


def test_python_and_jvm_work_is_evidence() -> None:
    pandas = (
        f"main ({PYSPARK}/worker.py)",
        f"BaseWindow._apply ({SITE}/pandas/core/window/rolling.py)",
    )
    # A function of another file that happens to be called read_int is not the pipe.
    own_read_int = ("main (/app/job.py)", "read_int (/app/parsers.py)")
    lz4 = (
        "org.apache.spark.executor.Executor$TaskRunner.run",
        "net.jpountz.lz4.LZ4JNI.LZ4_compress_limitedOutput",
    )
    for stack in (pandas, own_read_int, lz4):
        assert says_what_the_stage_did(stack), stack
    assert not waits_on_jvm(())
    assert not is_interpreter_startup(())


def test_imports_are_interpreter_startup() -> None:
    zipimport = (
        f"main ({PYSPARK}/worker.py)",
        "_read_directory (<frozen zipimport>)",
    )
    compile_ = ("_compile_bytecode (<frozen importlib._bootstrap_external>)",)
    assert is_interpreter_startup(zipimport)
    assert is_interpreter_startup(compile_)
    assert not says_what_the_stage_did(zipimport)


def test_jvm_waiting_on_the_python_worker_still_excluded() -> None:
    stack = (
        "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
        "java.io.DataInputStream.readInt",
    )
    assert waits_on_python_worker(stack)
    assert not says_what_the_stage_did(stack)


def test_stacks_weighted_by_the_time_their_samples_stand_for() -> None:
    profile = CallProfile()
    java = ("Thread.run", "com.example.Hash.update")
    native = ("Thread.run", "java.io.FileInputStream.readBytes")
    wait = (f"main ({PYSPARK}/worker.py)", f"read_int ({PYSPARK}/serializers.py)")
    profile.add(java, "java", 10, 10 * 20.0)  # execution samples: 20 ms each
    profile.add(native, "native", 4, 4 * 100.0)  # native samples: 100 ms each
    profile.add(wait, "python", 50, 50 * 10.0)
    weights = dict(stack_time_weights(profile))
    assert weights == {java: pytest.approx(200.0), native: pytest.approx(400.0)}


def test_counts_are_kept_where_no_time_is_known() -> None:
    profile = CallProfile()
    stack = ("Thread.run", "com.example.Hash.update")
    profile.add(stack, "java", 3, 0.0)
    assert stack_time_weights(profile) == [(stack, 3.0)]


def test_local_mode_has_no_network() -> None:
    v = without_network(ResourceVector({"cpu": 0.5, "disk": 0.2, "network": 0.3}))
    assert v.shares == pytest.approx({"cpu": 0.8, "disk": 0.2})
    same = ResourceVector({"cpu": 0.7, "disk": 0.3})
    assert without_network(same) is same


def test_domain_word_of_a_jvm_package_is_dropped() -> None:
    lz4 = "net.jpountz.lz4.LZ4JNI.LZ4_compress_limitedOutput"
    assert model_name_tokens(lz4, name_tokens(lz4), "java")[0] == "jpountz"
    netty = "io.netty.channel.nio.NioEventLoop.run"
    assert model_name_tokens(netty, name_tokens(netty), "java")[0] == "netty"
    # java.net, java.io and Python's io module keep their resource words.
    for name, lang in (
        ("java.net.SocketInputStream.read", "java"),
        ("java.io.FileInputStream.readBytes", "java"),
        ("io.BufferedReader.read", "python"),
    ):
        assert model_name_tokens(name, name_tokens(name), lang) == name_tokens(name)
