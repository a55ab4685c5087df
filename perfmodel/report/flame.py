"""Flame-graph exports: collapsed stacks and the speedscope renderer.

Users already have tools for looking at stacks (Brendan Gregg's flamegraph.pl, speedscope,
IDEs that read collapsed stacks); exporting to their formats beats drawing our own. Both
formats take root-first stacks with sample counts, which is how the samples table and
:class:`perfmodel.dag.samples.CallProfile` hold them. Collapsed stacks are the text
renderer's form of stack profiles; speedscope's JSON is this module's renderer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from perfmodel._version import __version__
from perfmodel.report.base import Renderer, Stacks


def merged(profiles: Mapping[str, Stacks]) -> dict[tuple[str, ...], int]:
    """The stacks of every profile in one: counts of the same stack add up."""
    out: dict[tuple[str, ...], int] = {}
    for stacks in profiles.values():
        for frames, count in stacks.items():
            out[frames] = out.get(frames, 0) + count
    return out


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


class SpeedscopeRenderer(Renderer):
    """speedscope's file format (https://www.speedscope.app): one "sampled" profile per
    process kind, frames shared between them."""

    format = "speedscope"

    def stacks(self, profiles: Mapping[str, Stacks], out: TextIO, *, name: str) -> None:
        out.write(json.dumps(speedscope(profiles, name), allow_nan=False))
