"""From per-frame resource vectors to one vector per operation or stage.

A stack sample says which function was running (the leaf) and why (its callers). The
resource being used is decided mostly at the leaf — a thread inside
``SocketInputStream.read`` waits on the network whatever called it — but leaves are
often generic (``System.arraycopy``, ``Unsafe.park``) or have no source, so callers
carry information too. The policy therefore:

1. drops *plumbing* frames — thread entry points, executors, reflection, Spark's task
   and iterator wiring, Scala/Python runtime trampolines — which appear in every stack
   of every stage and would pull all vectors towards the same average;
2. weights the remaining frames geometrically from the leaf upwards (``decay ** k``
   for the k-th kept frame above the leaf, up to ``max_frames``). On synthetic stacks
   (``aggregate_eval``) leaf-heavier policies score better, as they must when truth is the
   leaf's class; a small caller weight (0.25) is kept because real leaves are often
   generic (``System.arraycopy``, ``Unsafe.park``) and then the callers decide;
3. averages the per-sample vectors weighted by sample weight (sample count or time).

``evaluate_policies`` measures the policy against alternatives on synthetic stacks built
from held-out functions (see its docstring); ``train`` reports the figures in the card.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from perfmodel.dag.resources import ResourceVector
from perfmodel.embed.source.frames import parse_frame

K = TypeVar("K", bound=Hashable)

# Qualified-name prefixes of frames that only route control flow. Matched against the
# demangled name (``parse_frame(...).qualified_name``).
PLUMBING_PREFIXES: tuple[str, ...] = (
    "java.lang.Thread.run",
    "java.lang.Thread.runWith",
    "java.lang.VirtualThread.",
    "java.util.concurrent.ThreadPoolExecutor",
    "java.util.concurrent.FutureTask",
    "java.util.concurrent.ForkJoin",
    "java.util.concurrent.CompletableFuture$",
    "java.lang.reflect.",
    "jdk.internal.reflect.",
    "sun.reflect.",
    "java.lang.invoke.",
    "java.security.AccessController.",
    "javax.security.auth.Subject.do",
    "org.apache.spark.executor.Executor$TaskRunner",
    "org.apache.spark.scheduler.Task.run",
    "org.apache.spark.scheduler.ResultTask.runTask",
    "org.apache.spark.scheduler.ShuffleMapTask.runTask",
    "org.apache.spark.util.Utils$.tryWithSafeFinally",
    "org.apache.spark.util.Utils$.logUncaughtExceptions",
    "org.apache.spark.TaskContextImpl.runTaskWithListeners",
    "org.apache.spark.rdd.RDD.iterator",
    "org.apache.spark.rdd.RDD.computeOrReadCheckpoint",
    "org.apache.spark.rdd.MapPartitionsRDD.compute",
    "org.apache.spark.InterruptibleIterator.",
    "org.apache.spark.util.CompletionIterator.",
    "org.apache.spark.sql.execution.WholeStageCodegenEvaluatorFactory",
    "org.apache.spark.sql.execution.BufferedRowIterator.",
    "scala.collection.Iterator$$anon$",
    "scala.collection.AbstractIterator.",
    "scala.runtime.",
    "scala.Function",
    "scala.util.Try$.",
    "scala.util.control.",
    "threading.",
    "runpy.",
    "concurrent.futures.thread.",
    "<string>",
)
_PLUMBING_PY_FUNCS = frozenset(
    {"<module>", "_bootstrap", "_bootstrap_inner", "run", "main", "_run_module_as_main"}
)


class FrameVectorSource(Protocol):
    """Anything that maps frames to class distributions (the classifier, or a table)."""

    def frame_vectors(self, frames: Sequence[str]) -> Sequence[Mapping[str, float]]: ...


@dataclass(frozen=True)
class AggregationPolicy:
    """How frames combine; the defaults are the policy evaluated in the model card."""

    decay: float = 0.25
    max_frames: int = 6
    skip_plumbing: bool = True


LEAF_ONLY = AggregationPolicy(decay=0.0, max_frames=1, skip_plumbing=True)
UNIFORM = AggregationPolicy(decay=1.0, max_frames=10_000, skip_plumbing=False)


def is_plumbing(frame: str) -> bool:
    """True for frames that only route control (see ``PLUMBING_PREFIXES``)."""
    pf = parse_frame(frame)
    if pf.kind == "python":
        return pf.qualified_name.startswith(PLUMBING_PREFIXES) or (
            pf.method in _PLUMBING_PY_FUNCS
            and (pf.file or "").endswith(("threading.py", "runpy.py"))
        )
    return pf.qualified_name.startswith(PLUMBING_PREFIXES) or frame.startswith(PLUMBING_PREFIXES)


def frame_weights(
    frames_root_first: Sequence[str],
    policy: AggregationPolicy,
    plumbing: Mapping[str, bool] | None = None,
) -> list[tuple[str, float]]:
    """(frame, weight) of the frames that count for one stack, leaf first.

    When every frame is plumbing, the leaf counts alone: some vector beats none.
    """
    leaf_first = list(reversed(frames_root_first))
    if policy.skip_plumbing:
        check = plumbing.__getitem__ if plumbing is not None else is_plumbing
        kept = [f for f in leaf_first if not check(f)] or leaf_first[:1]
    else:
        kept = leaf_first
    kept = kept[: policy.max_frames]
    return [(f, policy.decay**k if k else 1.0) for k, f in enumerate(kept)]


def stage_vectors(
    source: FrameVectorSource,
    stages: Mapping[K, Iterable[tuple[Sequence[str], float]]],
    policy: AggregationPolicy | None = None,
) -> dict[K, ResourceVector]:
    """Resource vector of each stage (or operation) from its stack samples.

    ``stages`` maps a key (stage id, operation id) to ``(frames, weight)`` pairs: frames
    of one sampled stack **root first** (as in ``samples.parquet``), weight = number of
    samples or time it stands for. All distinct frames of all stages are classified in
    one batch. A stage without usable samples gets an empty vector.
    """
    policy = policy or AggregationPolicy()
    grouped: dict[K, dict[tuple[str, ...], float]] = {}
    for key, samples in stages.items():
        acc: dict[tuple[str, ...], float] = defaultdict(float)
        for frames, weight in samples:
            if frames and weight > 0:
                acc[tuple(frames)] += float(weight)
        grouped[key] = acc
    distinct = list(dict.fromkeys(f for acc in grouped.values() for stack in acc for f in stack))
    plumbing = {f: is_plumbing(f) for f in distinct}
    per_stack = {
        stack: frame_weights(stack, policy, plumbing) for acc in grouped.values() for stack in acc
    }
    needed = list(dict.fromkeys(f for fw in per_stack.values() for f, _ in fw))
    vectors = dict(zip(needed, source.frame_vectors(needed), strict=True))
    out: dict[K, ResourceVector] = {}
    for key, acc in grouped.items():
        totals: dict[str, float] = defaultdict(float)
        for stack, weight in acc.items():
            fw = per_stack[stack]
            norm = sum(w for _, w in fw)
            for frame, w in fw:
                for cls, p in vectors[frame].items():
                    totals[cls] += weight * w / norm * p
        out[key] = ResourceVector.from_weights(totals)
    return out


def stage_vector(
    source: FrameVectorSource,
    samples: Iterable[tuple[Sequence[str], float]],
    policy: AggregationPolicy | None = None,
) -> ResourceVector:
    """Resource vector of one stage/operation; see :func:`stage_vectors`."""
    return stage_vectors(source, {0: samples}, policy)[0]
