"""The whole diagnose flow as one library call: load → attribute samples → infer → diagnose.

The CLI's `diagnose` command is this function plus rendering; a notebook calls it the
same way. Each step only runs when its input exists (samples only in a bundle, code
vectors only when samples and a trained model exist), and what was skipped is said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile, attribute_samples
from perfmodel.dag.spark import LoadedProfile, build_profile
from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import load_samples
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED
from perfmodel.report.diagnosis import Diagnosis, diagnose

TOP_FUNCTIONS = 5
MEASURED_TO_RESOURCE = {"cpu": "cpu", "network": "network", "disk": "disk"}
"""Measured components that name a resource (gc, scheduling, unattributed do not)."""
DISAGREE_SHARE = 0.5
"""A measured resource share this large that the code vector gives under half of it is
reported as a disagreement."""

_PYTHON_IPC = ("org.apache.spark.api.python.", "org.apache.spark.sql.execution.python.")
_IO_WAIT_LEAVES = (
    "sun.nio.ch.",
    "java.net.",
    "java.io.FileInputStream.",
    "java.io.DataInputStream.",
    "jdk.internal.misc.Unsafe.park",
)


def diagnose_path(
    path: str | Path,
    attempt: str | None = None,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    models_dir: Path | None = None,
) -> Diagnosis:
    """Diagnose an event log or a profile bundle (with a bundle: code-inferred vectors too).

    ``models_dir`` holds the trained resource models (default: the shipped ones).
    """
    loaded = build_profile(path, attempt, max_decompressed_bytes=max_decompressed_bytes)
    samples = samples_of(loaded)
    vectors: dict[StageKey, ResourceVector] = {}
    failure: str | None = None
    if samples is not None:
        vectors, failure = _try_code_vectors(samples, models_dir)
    result = diagnose(loaded, vectors or None, has_samples=samples is not None)
    if failure:
        result.warnings.append(failure)
    if samples is not None:
        add_sample_views(result, samples)
        add_code_vectors(result, vectors)
    return result


def waits_on_python_worker(frames: Sequence[str]) -> bool:
    """A JVM stack blocked on PySpark's pipe to its Python worker, root first.

    That time is the Python side's, whose own samples say what it did; counting the
    JVM's side as network or disk I/O would call every PySpark stage I/O-bound.
    """
    if not frames or not frames[-1].startswith(_IO_WAIT_LEAVES):
        return False
    return any(f.startswith(_PYTHON_IPC) for f in frames)


def code_vectors(
    samples: SampleProfile, models_dir: Path | None = None
) -> dict[StageKey, ResourceVector]:
    """Code-inferred resource vector per stage attempt, from its sampled stacks.

    Idle and wait samples say nothing about a resource, and JVM threads blocked on the
    Python worker are the Python side's time (see `waits_on_python_worker`).
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


def _try_code_vectors(
    samples: SampleProfile, models_dir: Path | None = None
) -> tuple[dict[StageKey, ResourceVector], str | None]:
    """`code_vectors`, or none and the reason when the models cannot be used."""
    try:
        return code_vectors(samples, models_dir), None
    except PerfmodelError as exc:
        return {}, f"no code-inferred resource vectors: {exc}"


def bundle_code_vectors(
    loaded: LoadedProfile, wanted: bool = True
) -> tuple[dict[StageKey, ResourceVector], str | None]:
    """Code-inferred resource vectors per stage from a bundle's samples, and a note saying so.

    A bare event log has no samples: its unattributed time is split by bytes (docs/predict.md),
    which needs no note. A bundle whose models or samples give nothing says why.
    """
    if loaded.bundle is None:
        return {}, None
    if not wanted:
        return {}, "code-inferred resource vectors not used (--no-code-vectors)"
    samples = samples_of(loaded)
    if samples is None or not sum(samples.attribution.values()):
        return {}, "the bundle has no stack samples (recorded without JFR and py-spy)"
    vectors, failure = _try_code_vectors(samples)
    if failure:
        return {}, failure
    if not vectors:
        return {}, "the bundle's stack samples gave no code-inferred resource vector"
    return vectors, (
        f"unattributed task time split by code-inferred resource vectors for {len(vectors)} "
        "stage(s) (--no-code-vectors splits it by bytes moved)"
    )


def add_code_vectors(result: Diagnosis, vectors: Mapping[StageKey, ResourceVector]) -> None:
    """Each stage's code-inferred vector beside its measured split, and where they disagree."""
    disagreements: list[str] = []
    for stage in result.stages:
        vector = vectors.get((stage.stage_id, stage.attempt))
        if vector is None:
            continue
        stage.code_vector = dict(sorted(vector.shares.items(), key=lambda kv: -kv[1]))
        stage.code_bottleneck = vector.dominant
        for component, resource in MEASURED_TO_RESOURCE.items():
            measured = stage.shares.get(component, 0.0)
            inferred = vector.get(resource)
            if measured >= DISAGREE_SHARE and inferred < measured / 2:
                text = (
                    f"Stage {stage.stage_id}: Spark's metrics put {measured:.0%} of its time on "
                    f"{resource}, the code it ran looks {inferred:.0%} {resource}-bound "
                    f"(mostly {vector.dominant}); the sampled code may miss work the metrics "
                    "see, or the metric includes waiting"
                )
                stage.disagreements.append(text)
                disagreements.append(text)
    if vectors:
        result.extra["code_vectors"] = {
            "stages": len(vectors),
            "disagreements": disagreements,
        }


def samples_of(loaded: LoadedProfile) -> SampleProfile | None:
    """Stack samples attributed to the profile's tasks and stages (None for a bare log)."""
    if loaded.bundle is None:
        return None
    return attribute_samples(loaded.profile, load_samples(loaded.bundle))


def add_sample_views(result: Diagnosis, samples: SampleProfile) -> None:
    """Top functions per stage, and how samples were attributed, into the diagnosis."""
    total = sum(samples.attribution.values())
    section: dict[str, Any] = {
        "samples": total,
        "attribution": dict(samples.attribution),
        "outside_tasks_ms": samples.outside.weight_ms,
        "warnings": list(samples.warnings),
    }
    result.extra["samples"] = section
    result.warnings.extend(samples.warnings)
    for stage in result.stages:
        profile = samples.stages.get((stage.stage_id, stage.attempt))
        if profile is None or profile.samples == 0:
            continue
        weight = profile.weight_ms or 1.0
        stage.top_functions = [
            {
                "function": f.name,
                "self_ms": round(f.self_ms, 3),
                "total_ms": round(f.total_ms, 3),
                "self_share": f.self_ms / weight,
                "samples": f.self_samples,
            }
            for f in profile.top(TOP_FUNCTIONS, by="self")
        ]
        stage.sampled_ms = profile.weight_ms
