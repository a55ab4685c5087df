"""Measure the CPU a task spends per byte it spills, from fit runs that differ only in memory.

Why: Spark reports what a task spilled (``memoryBytesSpilled``, ``diskBytesSpilled``) but
not the time it took. The I/O part is estimated from the bytes (`StageWork`'s ``spill``
component); the larger part on a host with a page cache is CPU inside the task thread:
serialising and compressing the spilled records, and merging the spill files back. It hides
in the task's CPU time, so without this a what-if that gives a spilling job more memory
keeps all of that CPU. `laws.SPILL_CPU_NS_PER_BYTE` holds the constant; this module
measures it, from a store's runs of the split's *fit* workloads only.

Per pair of runs of one workload that differ in memory and nothing else, per stage whose
spill differs by at least `MIN_SPILL_DIFFERENCE` between them: the difference in the
stage's task CPU over the difference in its bytes spilled. A stage rather than the whole
application, because the other stages' run-to-run CPU noise (±10% of a run) is as large as
the effect. The median over those is the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfmodel.experiment.co_running import RunCpu, medians

MIN_SPILL_DIFFERENCE = 50e6
"""Bytes: stages whose spills differ by less say more about noise than about spilling."""


@dataclass(slots=True)
class SpillCpu:
    ns_per_byte: float
    stages: int
    """(Pair of runs, stage) values the median was taken over."""
    by_workload: dict[str, float] = field(default_factory=dict)


def pair_ns_per_byte(a: RunCpu, b: RunCpu) -> list[float]:
    """CPU per spilled byte from two runs that differ in memory, one value per stage whose
    spills differ enough (stages matched by id: one workload's runs plan the same stages)."""
    values = []
    for stage_id, (cpu_a, spilled_a) in a.stages.items():
        cpu_b, spilled_b = b.stages.get(stage_id, (0.0, 0.0))
        spilled = spilled_a - spilled_b
        if stage_id in b.stages and abs(spilled) >= MIN_SPILL_DIFFERENCE:
            values.append((cpu_a - cpu_b) * 1e9 / spilled)
    return values


def measure_spill_cpu(measured: list[RunCpu]) -> SpillCpu:
    """The constant from runs' `RunCpu` (`co_running.fit_runs`: the fit workloads' only)."""
    per_workload: dict[str, list[float]] = {}
    for i, a in enumerate(measured):
        for b in measured[i + 1 :]:
            if (a.workload, a.cores, a.same_but_memory) != (b.workload, b.cores, b.same_but_memory):
                continue
            if a.memory_bytes == b.memory_bytes:
                continue
            values = pair_ns_per_byte(a, b)
            if values:
                per_workload.setdefault(a.workload, []).extend(values)
    return SpillCpu(*medians(per_workload))
