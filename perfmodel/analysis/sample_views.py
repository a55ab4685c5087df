"""Diagnosis sections that come from a bundle's stack samples.

The facade (`perfmodel.analysis`) attributes samples and infers code vectors once; these
functions lay what it found into a `Diagnosis`: the top functions per stage, how samples
were attributed, and each stage's code-inferred vector beside its measured split.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perfmodel.analysis.diagnosis import Diagnosis
from perfmodel.dag.model import StageKey
from perfmodel.dag.resources import ResourceVector
from perfmodel.dag.samples import SampleProfile

TOP_FUNCTIONS = 5
MEASURED_TO_RESOURCE = {"cpu": "cpu", "network": "network", "disk": "disk"}
"""Measured components that name a resource (gc, scheduling, unattributed do not)."""
DISAGREE_SHARE = 0.5
"""A measured resource share this large that the code vector gives under half of it is
reported as a disagreement."""


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
