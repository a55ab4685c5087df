"""The whole diagnose flow as one library call: load → attribute samples → infer → diagnose.

The CLI's `diagnose` command is this function plus rendering; a notebook calls it the
same way. Each step only runs when its input exists (samples only in a bundle, code
vectors only when samples and a trained model exist), and what was skipped is said.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfmodel.dag.samples import SampleProfile, attribute_samples
from perfmodel.dag.spark import LoadedProfile, build_profile
from perfmodel.profile.bundle import load_samples
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED
from perfmodel.report.diagnosis import Diagnosis, diagnose

TOP_FUNCTIONS = 5


def diagnose_path(
    path: str | Path,
    attempt: str | None = None,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> Diagnosis:
    """Diagnose an event log or a profile bundle."""
    loaded = build_profile(path, attempt, max_decompressed_bytes=max_decompressed_bytes)
    samples = samples_of(loaded)
    result = diagnose(loaded)
    if samples is not None:
        add_sample_views(result, samples)
    return result


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
