"""Code-inferred resource vector per stage, from the stack samples attributed to it.

This is where the code models meet the profile: each stage's sampled stacks go through
the classifier and the aggregation policy (`perfmodel.embed.aggregate`), giving the share
of its time each resource is taken to have. The facade (`perfmodel.analysis`) asks for it
once per bundle and hands the vectors to the replay and to the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile
from perfmodel.embed import CONFIG_FILE, SHIPPED_MODELS
from perfmodel.embed.aggregate import stage_vectors
from perfmodel.embed.sample_evidence import (
    stack_time_weights,
    waits_on_python_worker,
    without_network,
)
from perfmodel.embed.source.roots import default_roots
from perfmodel.embed.vector_cache import CachedFrameVectors, cache_key, opened_cache
from perfmodel.extras import require_extra

if TYPE_CHECKING:
    from perfmodel.embed.classifier import ResourceClassifier

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
    require_extra("models", "inferring resource vectors from code")
    models = models_dir or SHIPPED_MODELS
    roots = default_roots()
    built: list[ResourceClassifier] = []

    def classifier() -> ResourceClassifier:
        """The models, loaded only when some frame's vector is not in the cache, and once."""
        if built:
            return built[0]
        # Imported here: the models pull in torch, which a bare event log never
        # needs, the light install does not have, and a bundle whose vectors are all in the
        # cache does not load.
        import torch

        from perfmodel.embed.classifier import load_classifier

        # One thread: the models' small recurrent steps get slower, not faster, with a second
        # thread on a busy 2-core machine (measured in benchmarks/classify_speed.py).
        torch.set_num_threads(1)
        built.append(load_classifier(models, roots=roots))
        return built[0]

    if not (models / CONFIG_FILE).is_file():
        classifier()  # no model there: its error, before any cache is looked at
    try:
        with opened_cache(Path(platformdirs.user_cache_dir("perfmodel"))) as store:
            source = CachedFrameVectors(store, cache_key(models, roots), classifier)
            vectors = stage_vectors(source, per_stage)
    finally:
        for c in built:
            c.close()
    if local_mode:
        vectors = {k: without_network(v) for k, v in vectors.items()}
    return {k: v for k, v in vectors.items() if v.shares}
