"""Executor layouts that fit a VM type, by Spark's memory rules, and the settings for one.

Rules (docs/recommend.md, "Layouts"):

* per node, the OS and the cluster daemons (NodeManager or kubelet, shuffle service) keep
  ``max(1 GiB, 10 %)`` of the memory and, on nodes of 4 or more vCPUs, one vCPU; a 2-vCPU
  node gives both to executors (keeping one would idle half the node);
* an executor container holds its heap plus ``spark.executor.memoryOverhead`` =
  ``max(384 MiB, 10 % of the heap)`` (Spark's default), so the heap is the largest whole
  MiB with heap + overhead ≤ the node's usable memory ÷ executors per node; a heap under
  Spark's minimum (450 MiB) does not fit;
* cores per executor ∈ {all usable cores (one fat executor), 4, 2}, those that fit;
  executors per node = usable cores ÷ cores per executor (rounded down);
* local mode (``--local``: each "machine" is one host running ``local[N]``): one layout,
  N = vCPUs, driver heap = memory − the OS share above (no container overhead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.recommend.catalog import MachineType

MIB = 1 << 20
GIB = 1 << 30
MIN_HEAP_BYTES = 450 * MIB
"""Spark refuses a heap under 1.5 × its 300 MiB reserve."""
OVERHEAD_MIN_BYTES = 384 * MIB
OVERHEAD_FRACTION = 0.10
EXECUTOR_CORE_CHOICES: tuple[int, ...] = (4, 2)
"""Besides one executor with every usable core: the widely used 4-ish and a thin 2."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How one node of a type is split into executors."""

    executors_per_node: int
    executor_cores: int
    heap_bytes: int
    overhead_bytes: int
    local: bool = False

    @property
    def cores_per_node(self) -> int:
        return self.executors_per_node * self.executor_cores

    @property
    def label(self) -> str:
        if self.local:
            return f"local[{self.executor_cores}] {spark_memory(self.heap_bytes)}"
        return f"{self.executors_per_node}x{self.executor_cores}c {spark_memory(self.heap_bytes)}"


def reserved_memory(machine: MachineType) -> int:
    """Bytes the OS and daemons keep on a node: max(1 GiB, 10 %)."""
    return max(GIB, int(0.10 * machine.memory_bytes))


def usable_cores(machine: MachineType) -> int:
    """vCPUs executors may use: one is kept for the OS and daemons on nodes of ≥ 4."""
    return machine.vcpu - 1 if machine.vcpu >= 4 else machine.vcpu


def overhead_for(heap_bytes: int) -> int:
    """Spark's default ``spark.executor.memoryOverhead``: max(384 MiB, 10 % of the heap)."""
    return max(OVERHEAD_MIN_BYTES, _ceil_mib(OVERHEAD_FRACTION * heap_bytes))


def heap_for_container(container_bytes: int) -> int:
    """The largest whole-MiB heap whose heap + default overhead fits in the container."""
    mib = container_bytes // MIB
    heap = min(mib - OVERHEAD_MIN_BYTES // MIB, int(mib / (1 + OVERHEAD_FRACTION)))
    while heap > 0 and (heap * MIB + overhead_for(heap * MIB)) > container_bytes:
        heap -= 1
    return max(0, heap) * MIB


def layouts_for(machine: MachineType, *, local: bool = False) -> list[Layout]:
    """The executor layouts a node of this type can hold (may be empty: too small)."""
    usable_mem = machine.memory_bytes - reserved_memory(machine)
    if local:
        heap = (usable_mem // MIB) * MIB
        if heap < MIN_HEAP_BYTES:
            return []
        return [Layout(1, machine.vcpu, heap, 0, local=True)]
    cores = usable_cores(machine)
    out: list[Layout] = []
    seen: set[tuple[int, int]] = set()
    for per_executor in (cores, *EXECUTOR_CORE_CHOICES):
        if per_executor > cores or per_executor < 1:
            continue
        per_node = cores // per_executor
        if (per_node, per_executor) in seen:
            continue
        seen.add((per_node, per_executor))
        heap = heap_for_container(usable_mem // per_node)
        if heap < MIN_HEAP_BYTES:
            continue
        out.append(Layout(per_node, per_executor, heap, overhead_for(heap)))
    return out


def spark_conf(
    layout: Layout, nodes: int, settings: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The Spark settings of a point: its executors (or local mode's driver heap) and the
    settings it was predicted with (``settings``: those the settings search chose; the
    profiled run's others are kept, as the prediction kept them)."""
    extra = dict(settings or {})
    if layout.local:
        return {
            "spark.master": f"local[{layout.executor_cores}]",
            "spark.driver.memory": spark_memory(layout.heap_bytes),
            **extra,
        }
    return {
        "spark.executor.instances": str(layout.executors_per_node * nodes),
        "spark.executor.cores": str(layout.executor_cores),
        "spark.executor.memory": spark_memory(layout.heap_bytes),
        "spark.executor.memoryOverhead": spark_memory(layout.overhead_bytes),
        **extra,
    }


def _ceil_mib(n_bytes: float) -> int:
    return -(-int(n_bytes) // MIB) * MIB


def spark_memory(n_bytes: int) -> str:
    """Spark's memory notation: whole GiB as ``Ng``, else whole MiB as ``Nm``."""
    if n_bytes % GIB == 0:
        return f"{n_bytes // GIB}g"
    return f"{n_bytes // MIB}m"
