"""An aggregation's fallback to sorting, as a stage's CPU cost per byte spilled.

`perfmodel.dag.fallback_samples` reads, from a bundle's stack samples, the share of a
stage's on-CPU samples spent in a hash aggregation's fallback to sorting after it ran out
of memory. Here that share becomes CPU per byte the stage spilled, so the replay's memory
law (`rescale.spill_cpu_rate`) takes it away with the spill, and adds it where a what-if
makes a stage spill more.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfmodel.dag.model import StageKey
from perfmodel.simulate import laws
from perfmodel.simulate.stage_work import CPU, StageWork


def measure(works: list[StageWork], shares: Mapping[StageKey, float]) -> list[str]:
    """Set `StageWork.fallback_ns_per_byte` of spilling stages whose samples caught an
    aggregation's fallback to sorting; a note says where."""
    measured: list[tuple[float, float]] = []
    for work in works:
        share = shares.get(work.key, 0.0)
        spilled = float(work.memory_spill.sum())
        if share <= 0 or spilled <= 0:
            continue
        cpu_ms = float(work.components[CPU].sum())
        work.fallback_ns_per_byte = share * cpu_ms * 1e6 / spilled
        measured.append((share, work.fallback_ns_per_byte))
    if not measured:
        return []
    shares_pc = ", ".join(f"{s:.0%}" for s, _ in measured)
    return [
        f"an aggregation ran out of memory and fell back to sorting in {len(measured)} "
        f"spilling stage(s): {shares_pc} of their CPU samples, "
        f"{max(r for _, r in measured) + laws.SPILL_CPU_NS_PER_BYTE:.1f} ns per byte spilled "
        f"at most (against {laws.SPILL_CPU_NS_PER_BYTE} assumed for a sorter's spill); a "
        "what-if with enough memory takes that CPU away"
    ]
