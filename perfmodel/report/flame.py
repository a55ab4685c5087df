"""Flame-graph exports: collapsed stacks and speedscope JSON.

Users already have tools for looking at stacks (Brendan Gregg's flamegraph.pl, speedscope,
IDEs that read collapsed stacks); exporting to their formats beats drawing our own. Both
formats take root-first stacks with sample counts, which is how the samples table and
:class:`perfmodel.dag.samples.CallProfile` hold them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfmodel._version import __version__
from perfmodel.atomic import write_atomically

Stacks = Mapping[tuple[str, ...], int]


def collapsed(stacks: Stacks) -> str:
    """``root;child;leaf count`` lines, heaviest first (flamegraph.pl, speedscope, inferno)."""
    lines = []
    for frames, count in sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0])):
        if count <= 0 or not frames:
            continue
        # ';' separates frames and the last space separates the count: keep both unambiguous.
        names = (f.replace(";", ":").replace("\n", " ") for f in frames)
        lines.append(f"{';'.join(names)} {count}")
    return "\n".join(lines) + ("\n" if lines else "")


def speedscope(profiles: Mapping[str, Stacks], name: str) -> dict[str, Any]:
    """A speedscope document with one "sampled" profile per entry of ``profiles``."""
    frame_index: dict[str, int] = {}
    frames: list[dict[str, str]] = []
    out_profiles = []
    for profile_name, stacks in profiles.items():
        samples: list[list[int]] = []
        weights: list[int] = []
        for stack, count in sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0])):
            if count <= 0 or not stack:
                continue
            ids = []
            for frame in stack:
                idx = frame_index.get(frame)
                if idx is None:
                    idx = frame_index[frame] = len(frames)
                    frames.append({"name": frame})
                ids.append(idx)
            samples.append(ids)
            weights.append(int(count))
        out_profiles.append(
            {
                "type": "sampled",
                "name": profile_name,
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        )
    return {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": frames},
        "profiles": out_profiles,
        "name": name,
        "activeProfileIndex": 0,
        "exporter": f"perfmodel {__version__}",
    }


def write_flame(profiles: Mapping[str, Stacks], out_dir: Path, stem: str) -> tuple[Path, Path]:
    """Write ``<stem>.collapsed`` (all profiles merged) and ``<stem>.speedscope.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    merged: dict[tuple[str, ...], int] = {}
    for stacks in profiles.values():
        for frames, count in stacks.items():
            merged[frames] = merged.get(frames, 0) + count
    folded = out_dir / f"{stem}.collapsed"
    scope = out_dir / f"{stem}.speedscope.json"
    # Each file appears whole or not at all (a temporary name, then a rename).
    write_atomically(folded, collapsed(merged))
    write_atomically(scope, json.dumps(speedscope(profiles, stem), allow_nan=False))
    return folded, scope
