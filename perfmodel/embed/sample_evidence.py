"""Which stack samples say something about a stage's resource use, and how much time each is.

A stage's samples mix the work it did with time spent waiting on its other half: PySpark's
JVM task thread blocked on its Python worker, and the worker blocked on the JVM (py-spy
records with ``--idle``, so a worker waiting for its next batch is sampled too). Counted as
code, those waits look like socket reads, and the classifier rightly calls socket reads
network I/O. The replay then moves the stage's unattributed time, which on a PySpark stage
is mostly the worker's CPU, from CPU to network and disk, where it no longer follows the
CPU laws: measured on the held-out study of issue 21, this is what made code vectors
predict worse than none.

Evidence kept out here (each with the frames that show it):

* JVM threads waiting on the Python worker (`waits_on_python_worker`);
* the Python worker waiting on the JVM (`waits_on_jvm`): a leaf that reads PySpark's
  framing ints or an Arrow stream header from the pipe, a socket or selector call, and the
  PySpark daemon's fork loop (the daemon is not a task's worker at all);
* interpreter start-up (`is_interpreter_startup`): a worker importing modules (``<frozen
  importlib...>``, ``<frozen zipimport>``): the frames read and decompress files that sit
  in the page cache, which the classifier calls disk; it is a fixed cost of starting a
  worker, not what the stage does per byte.

Stacks are weighted by the thread time they stand for (`stack_time_weights`), not by sample
count: a JFR native sample, a JFR execution sample and a py-spy sample stand for different
times (docs/bundle.md), so counts of different kinds do not add up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import CallProfile

_PYTHON_IPC = ("org.apache.spark.api.python.", "org.apache.spark.sql.execution.python.")
_IO_WAIT_LEAVES = (
    "sun.nio.ch.",
    "java.net.",
    "java.io.FileInputStream.",
    "java.io.DataInputStream.",
    "jdk.internal.misc.Unsafe.park",
)
# Python leaves (py-spy's "function (file)") that block on the JVM's end of the pipe: the
# framing reads of pyspark.serializers, an Arrow IPC stream's header read, the socket and
# selector layer, and the daemon's accept/fork loop.
_PY_WAIT_FUNCS: dict[str, frozenset[str]] = {
    "pyspark/serializers.py": frozenset(
        {"read_int", "read_long", "read_bool", "_read_with_length"}
    ),
    "pyarrow/ipc.py": frozenset({"RecordBatchStreamReader.__init__", "open_stream"}),
    "pyspark/daemon.py": frozenset({"manager"}),
}
_PY_WAIT_FILES = ("/socket.py", "/selectors.py")
_STARTUP_FILES = ("<frozen importlib", "<frozen zipimport>")


def _python_frame(frame: str) -> tuple[str, str] | None:
    """(function, file) of a py-spy frame ``function (file)``; None for JVM frames."""
    if not frame.endswith(")") or " (" not in frame:
        return None
    func, _, rest = frame.rpartition(" (")
    return func, rest[:-1]


def waits_on_python_worker(frames: Sequence[str]) -> bool:
    """A JVM stack blocked on PySpark's pipe to its Python worker, root first.

    That time is the Python side's, whose own samples say what it did; counting the
    JVM's side as network or disk I/O would call every PySpark stage I/O-bound.
    """
    if not frames or not frames[-1].startswith(_IO_WAIT_LEAVES):
        return False
    return any(f.startswith(_PYTHON_IPC) for f in frames)


def waits_on_jvm(frames: Sequence[str]) -> bool:
    """A Python worker (or the PySpark daemon) blocked on the JVM's end of the pipe.

    The mirror of `waits_on_python_worker`: the JVM's own samples say what it did
    meanwhile. In local mode these reads are a pipe between two processes of one host,
    not network I/O.
    """
    leaf = _python_frame(frames[-1]) if frames else None
    if leaf is None:
        return False
    func, path = leaf
    path = path.replace("\\", "/")
    if path.endswith(_PY_WAIT_FILES):
        return True
    return any(path.endswith(suffix) and func in funcs for suffix, funcs in _PY_WAIT_FUNCS.items())


def is_interpreter_startup(frames: Sequence[str]) -> bool:
    """A Python stack inside the import machinery (a worker loading modules)."""
    leaf = _python_frame(frames[-1]) if frames else None
    return leaf is not None and leaf[1].startswith(_STARTUP_FILES)


def says_what_the_stage_did(frames: Sequence[str]) -> bool:
    """False for the waits and start-up stacks this module keeps out of the vectors."""
    return not (
        waits_on_python_worker(frames) or waits_on_jvm(frames) or is_interpreter_startup(frames)
    )


def stack_time_weights(profile: CallProfile) -> list[tuple[Sequence[str], float]]:
    """(stack, thread ms it stands for) of the stacks that say what the stage did.

    A profile keeps counts per stack and time per leaf; a stack's time is its count times
    its leaf's mean time per sample (exact where a leaf is sampled by one kind only, which
    is the rule: JFR's Java and native samples have different leaves).
    """
    out: list[tuple[Sequence[str], float]] = []
    for stack, n in profile.stacks.items():
        if n <= 0 or not stack or not says_what_the_stage_did(stack):
            continue
        leaf = stack[-1]
        count = profile.self_samples.get(leaf, 0)
        per_sample = profile.self_ms.get(leaf, 0.0) / count if count else 0.0
        out.append((stack, float(n) * per_sample if per_sample > 0 else float(n)))
    return out


def without_network(vector: ResourceVector) -> ResourceVector:
    """The vector on one host with no network between its tasks (Spark's local mode).

    There every socket is a loopback pipe between processes of the host (Python workers,
    py4j): its cost is CPU on one side and waiting on the other, never a link's bandwidth,
    so the network share is CPU.
    """
    shares: Mapping[str, float] = vector.shares
    if "network" not in shares:
        return vector
    merged = {k: v for k, v in shares.items() if k != "network"}
    merged["cpu"] = merged.get("cpu", 0.0) + shares["network"]
    return ResourceVector.from_weights(merged)
