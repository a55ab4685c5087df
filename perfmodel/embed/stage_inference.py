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
from perfmodel.embed.sample_evidence import (
    stack_time_weights,
    waits_on_python_worker,
    without_network,
)
from perfmodel.extras import require_extra

__all__ = ["infer_stage_vectors", "waits_on_python_worker"]


def infer_stage_vectors(
    samples: SampleProfile, models_dir: Path | None = None, *, local_mode: bool = False
) -> dict[StageKey, ResourceVector]:
    """Code-inferred resource vector per stage attempt, from its sampled stacks.

    Only stacks that say what the stage did count, each by the thread time it stands for:
    waits between the JVM and its Python worker and interpreter start-up are left out (see
    `perfmodel.embed.sample_evidence`). ``local_mode``: all tasks share one host with no
    network between them, so a network share is loopback IPC, i.e. CPU. Raises a
    `PerfmodelError` when the trained models cannot be loaded or the [models] extra that runs
    them is not installed.
    """
    per_stage: dict[StageKey, list[tuple[Sequence[str], float]]] = {}
    for key, profile in samples.stages.items():
        stacks = stack_time_weights(profile)
        if stacks:
            per_stage[key] = stacks
    if not per_stage:
        return {}
    # Imported here: the models pull in torch and flair, which a bare event log never needs
    # and the light install does not have.
    require_extra("models", "inferring resource vectors from code")
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
    if local_mode:
        vectors = {k: without_network(v) for k, v in vectors.items()}
    return {k: v for k, v in vectors.items() if v.shares}
