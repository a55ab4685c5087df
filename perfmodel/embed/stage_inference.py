"""Code-inferred resource vector per stage, from the stack samples attributed to it.

This is where the code models meet the profile: each stage's sampled stacks go through
the classifier and the aggregation policy (`perfmodel.embed.aggregate`), giving the share
of its time each resource is taken to have. The facade (`perfmodel.analysis`) asks for it
once per bundle and hands the vectors to the replay and to the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile

_PYTHON_IPC = ("org.apache.spark.api.python.", "org.apache.spark.sql.execution.python.")
_IO_WAIT_LEAVES = (
    "sun.nio.ch.",
    "java.net.",
    "java.io.FileInputStream.",
    "java.io.DataInputStream.",
    "jdk.internal.misc.Unsafe.park",
)


def waits_on_python_worker(frames: Sequence[str]) -> bool:
    """A JVM stack blocked on PySpark's pipe to its Python worker, root first.

    That time is the Python side's, whose own samples say what it did; counting the
    JVM's side as network or disk I/O would call every PySpark stage I/O-bound.
    """
    if not frames or not frames[-1].startswith(_IO_WAIT_LEAVES):
        return False
    return any(f.startswith(_PYTHON_IPC) for f in frames)


def infer_stage_vectors(
    samples: SampleProfile, models_dir: Path | None = None
) -> dict[StageKey, ResourceVector]:
    """Code-inferred resource vector per stage attempt, from its sampled stacks.

    Idle and wait samples say nothing about a resource, and JVM threads blocked on the
    Python worker are the Python side's time (see `waits_on_python_worker`). Raises a
    `PerfmodelError` when the trained models cannot be loaded.
    """
    per_stage: dict[StageKey, list[tuple[Sequence[str], float]]] = {}
    for key, profile in samples.stages.items():
        stacks = [
            (stack, float(n))
            for stack, n in profile.stacks.items()
            if n > 0 and not waits_on_python_worker(stack)
        ]
        if stacks:
            per_stage[key] = stacks
    if not per_stage:
        return {}
    # Imported here: the models pull in torch and flair, which a bare event log never needs.
    import torch

    from perfmodel.embed.aggregate import stage_vectors
    from perfmodel.embed.classifier import load_classifier

    # One thread: the models' small recurrent steps get slower, not faster, with a second
    # thread on a busy 2-core machine (measured in benchmarks/classify_speed.py).
    torch.set_num_threads(1)
    classifier = load_classifier(models_dir)
    try:
        vectors = stage_vectors(classifier, per_stage)
    finally:
        classifier.close()
    return {k: v for k, v in vectors.items() if v.shares}
