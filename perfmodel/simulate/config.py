"""The resources a replay runs on: the baseline read from the profile, and a what-if change.

A prediction is only as good as its baseline: the replay rescales measured task times by
the *ratio* of new to old resources, so the old ones must be known. What the log does not
say is taken from a stated default, and every field records where its value came from
(``sources``), so the output can tell the user what was assumed and which option fixes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.allocation_settings import (
    AllocationError,
    AllocationSettings,
    change_settings,
    read_settings,
)
from perfmodel.simulate.units import UnitError

if TYPE_CHECKING:
    from perfmodel.dag.model import ApplicationProfile

DEFAULT_MEMORY_BYTES = 1 << 30
"""Spark's default ``spark.executor.memory`` / ``spark.driver.memory`` (1g)."""
DEFAULT_DISK_BW = 250e6
"""Assumed per-host disk bandwidth when none is given (bytes/s): a middle value between a
cloud block volume (~125 MB/s) and a local SSD (~500 MB/s). Only ratios matter for measured
disk time; the absolute value matters where I/O time is estimated from bytes (spill, input)."""
DEFAULT_NET_BW = 10e9 / 8
"""Assumed per-host network bandwidth when none is given: 10 Gbit/s, a common cloud NIC."""


class ConfigError(PerfmodelError, ValueError):
    """A what-if configuration that cannot be resolved; the message says what to pass."""


# ---------------------------------------------------------------------------------------------
# Physical ranges of every number a what-if takes. Values outside them are typing mistakes
# (``--cores 1e11``) or attacks on memory (the replay keeps state per slot), never clusters.

MAX_CORES = 1_000_000
MAX_EXECUTORS = 100_000
MAX_CORES_PER_EXECUTOR = 10_000
MAX_HOST_CORES = 100_000
MIN_MEMORY_BYTES = 1 << 20
MAX_MEMORY_BYTES = 1 << 50
MIN_CPU_SPEED, MAX_CPU_SPEED = 1e-3, 1e3
MIN_BANDWIDTH, MAX_BANDWIDTH = 1e3, 1e13
"""Bytes per second: from 1 kB/s to 10 TB/s per host."""
MIN_FACTOR, MAX_FACTOR = 1e-3, 1e3
MIN_MEMORY_FRACTION, MAX_MEMORY_FRACTION = 1e-3, 0.999
DEFAULT_MEMORY_FRACTION = 0.6
"""Spark's default ``spark.memory.fraction``: the share of (heap − 300 MiB) its unified
memory manager gives to execution and storage."""


@dataclass(frozen=True, slots=True)
class FieldRange:
    """The allowed values of one numeric setting, and how to name it to the user."""

    option: str
    kind: type
    low: float
    high: float
    shown: str = ""
    """The range as users write it, where that differs from plain numbers."""

    def describe(self) -> str:
        if self.shown:
            return self.shown
        if self.kind is int:
            return f"a whole number from {int(self.low):,} to {int(self.high):,}"
        return f"a finite number from {self.low:g} to {self.high:g}"


_BW_RANGE = "a bandwidth from 1kB/s to 10TB/s"
_FACTOR_RANGE = "a factor from 0.001x to 1000x"

RANGES: dict[str, FieldRange] = {
    "cores": FieldRange("--cores", int, 1, MAX_CORES),
    "executors": FieldRange("--executors", int, 1, MAX_EXECUTORS),
    "executor_cores": FieldRange("--executor-cores", int, 1, MAX_CORES_PER_EXECUTOR),
    "host_cores": FieldRange("--host-cores", int, 1, MAX_HOST_CORES),
    "memory_bytes": FieldRange(
        "--mem", int, MIN_MEMORY_BYTES, MAX_MEMORY_BYTES, "a size from 1m to 1p (1 MiB to 1 PiB)"
    ),
    "cpu_speed": FieldRange("--cpu-speed", float, MIN_CPU_SPEED, MAX_CPU_SPEED),
    "disk_bw": FieldRange("--disk-bw", float, MIN_BANDWIDTH, MAX_BANDWIDTH, _BW_RANGE),
    "net_bw": FieldRange("--net-bw", float, MIN_BANDWIDTH, MAX_BANDWIDTH, _BW_RANGE),
    "disk_factor": FieldRange("--disk-bw", float, MIN_FACTOR, MAX_FACTOR, _FACTOR_RANGE),
    "net_factor": FieldRange("--net-bw", float, MIN_FACTOR, MAX_FACTOR, _FACTOR_RANGE),
    "memory_fraction": FieldRange(
        "spark.memory.fraction", float, MIN_MEMORY_FRACTION, MAX_MEMORY_FRACTION
    ),
    "min_executors": FieldRange("--min-executors", int, 0, MAX_EXECUTORS),
    "max_executors": FieldRange("--max-executors", int, 1, MAX_EXECUTORS),
    "initial_executors": FieldRange("--initial-executors", int, 0, MAX_EXECUTORS),
}
"""Every numeric what-if setting; the schemas below are built from this one table."""


def _schema(name: str, fields: tuple[str, ...]) -> type[msgspec.Struct]:
    return msgspec.defstruct(
        name,
        [
            (
                f,
                Annotated[RANGES[f].kind, msgspec.Meta(ge=RANGES[f].low, le=RANGES[f].high)] | None,
                None,
            )
            for f in fields
        ],
        forbid_unknown_fields=True,
    )


_WHAT_IF_FIELDS = tuple(RANGES)
_BASELINE_FIELDS = ("host_cores", "disk_bw", "net_bw")
_WhatIfSchema = _schema("WhatIfSchema", _WHAT_IF_FIELDS)
_BaselineSchema = _schema("BaselineSchema", _BASELINE_FIELDS)


_BASELINE_OPTIONS = {"disk_bw": "--baseline-disk-bw", "net_bw": "--baseline-net-bw"}
"""Options of the profiled run's settings where they differ from the what-if's
(``--host-cores`` says the profiled host's cores)."""


def validate_fields(obj: Any, schema: type[msgspec.Struct], baseline: bool = False) -> None:
    """Check ``obj``'s fields against ``schema``'s types and ranges (msgspec does the work:
    NaN and infinities fail the bounds); a violation becomes a `ConfigError` naming the
    field, its option and the allowed range."""
    values = {f: getattr(obj, f) for f in schema.__struct_fields__}
    try:
        msgspec.convert(values, schema, strict=True)
    except msgspec.ValidationError as e:
        name = str(e).rpartition("$.")[2].strip("`")
        allowed = RANGES.get(name)
        if allowed is None:
            raise ConfigError(f"invalid what-if setting: {e}") from None
        option = allowed.option
        if baseline:
            option = _BASELINE_OPTIONS.get(name, option)
        got = values.get(name)
        # As the user wrote it: a factor with its x, a number as a number.
        shown = f"{got:g}x" if name.endswith("_factor") and isinstance(got, float) else repr(got)
        raise ConfigError(f"{option} must be {allowed.describe()}; got {shown}") from None


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """A resolved resource configuration: everything the runtime laws need, all known.

    Hosts are assumed alike (executors spread evenly), which is how clusters are sized.
    ``cpu_speed`` is relative: the baseline is 1.0 and 1.5 means 1.5× faster cores.
    """

    executors: int
    executor_cores: int
    memory_bytes: int
    """Heap of one executor (in local mode, of the driver, which runs the tasks)."""
    hosts: int
    host_cores: int
    """Physical cores of one host, shared by task slots, Python workers and JVM threads."""
    host_cores_assumed: bool
    """True when no one said how many cores a host has and it was taken to equal its slots."""
    cpu_speed: float = 1.0
    disk_bw: float = DEFAULT_DISK_BW
    net_bw: float = DEFAULT_NET_BW
    task_cpus: int = 1
    local_mode: bool = False
    hosts_fixed: bool = False
    """The executors share hosts a what-if keeps (`ResourceConfig.hosts_fixed`)."""
    executors_exchange_data: bool = False
    """Executors fetch each other's data over sockets even on one host
    (`ResourceConfig.executors_exchange_data`)."""
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    memory_fraction: float = DEFAULT_MEMORY_FRACTION
    """``spark.memory.fraction``: the share of (heap − 300 MiB) for execution and storage."""
    allocation: AllocationSettings = field(default_factory=AllocationSettings)
    """Dynamic allocation's settings (`perfmodel.simulate.allocation_settings`); disabled:
    a static set of executors. Read from the log even when disabled, so enabling it in a
    what-if keeps the application's other allocation settings."""

    @property
    def slots(self) -> int:
        """Task slots of the whole application: executors × cores ÷ cores per task."""
        return max(1, self.executors * self.executor_cores // max(self.task_cpus, 1))

    @property
    def peers(self) -> int:
        """How many places the application's data is spread over, each fetching the others'
        share remotely (`laws.remote_share_factor`): its executors where they exchange data
        over sockets even on one host, else its hosts."""
        return self.executors if self.executors_exchange_data else self.hosts

    @property
    def executors_per_host(self) -> int:
        return max(1, math.ceil(self.executors / max(self.hosts, 1)))

    @property
    def slots_per_host(self) -> int:
        return max(1, self.executors_per_host * self.executor_cores // max(self.task_cpus, 1))

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (the ``config``/``baseline_config`` objects of ``--json``)."""
        return {
            "executors": self.executors,
            "executor_cores": self.executor_cores,
            "slots": self.slots,
            "memory_bytes": self.memory_bytes,
            "hosts": self.hosts,
            "host_cores": self.host_cores,
            "cpu_speed": self.cpu_speed,
            "disk_bw_bytes_per_s": self.disk_bw,
            "net_bw_bytes_per_s": self.net_bw,
            "task_cpus": self.task_cpus,
            "local_mode": self.local_mode,
            "memory_fraction": self.memory_fraction,
            "sources": dict(self.sources),
            "dynamic_allocation": self.allocation.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A requested change; ``None`` keeps the baseline value.

    ``cores`` is the total number of task cores (``local[N]``'s N in local mode);
    bandwidths may be absolute (bytes/s) or relative (``disk_factor``/``net_factor``).
    """

    cores: int | None = None
    executors: int | None = None
    executor_cores: int | None = None
    memory_bytes: int | None = None
    cpu_speed: float | None = None
    disk_bw: float | None = None
    net_bw: float | None = None
    disk_factor: float | None = None
    net_factor: float | None = None
    host_cores: int | None = None
    memory_fraction: float | None = None
    """``spark.memory.fraction`` (reached through Spark settings: ``--conf``)."""
    dynamic_allocation: bool | None = None
    """Turn Spark's dynamic allocation on or off (``--dynamic-allocation on|off``)."""
    min_executors: int | None = None
    max_executors: int | None = None
    initial_executors: int | None = None

    def __post_init__(self) -> None:
        validate_fields(self, _WhatIfSchema)

    @property
    def is_empty(self) -> bool:
        return all(getattr(self, name) is None for name in self.__slots__)


@dataclass(frozen=True, slots=True)
class BaselineOverrides:
    """What the user knows about the baseline that the log does not say."""

    host_cores: int | None = None
    disk_bw: float | None = None
    net_bw: float | None = None

    def __post_init__(self) -> None:
        validate_fields(self, _BaselineSchema, baseline=True)


def baseline_config(
    profile: ApplicationProfile, overrides: BaselineOverrides | None = None
) -> ClusterConfig:
    """The configuration the profiled run had, with the source of every value."""
    o = overrides or BaselineOverrides()
    r = profile.resources
    src: dict[str, str] = {}
    local = r.local_mode
    cores = r.executor_cores
    if cores:
        src["executor_cores"] = r.sources.get("executor_cores", "log")
    else:
        cores = max(1, r.total_slots or 1)
        src["executor_cores"] = (
            r.sources.get("total_slots", "default: 1") if r.total_slots else "default: 1"
        )
    executors = r.executor_instances or 0
    if executors:
        src["executors"] = r.sources.get("executor_instances", "log")
    else:
        executors = max(1, math.ceil((r.total_slots or cores) / cores))
        src["executors"] = "observed: most tasks running at once ÷ executor cores"
    hosts = r.hosts or (1 if local else executors)
    src["hosts"] = (
        r.sources.get("hosts", "log")
        if r.hosts
        else ("local mode" if local else "default: one executor per host")
    )
    memory = r.driver_memory_bytes if local else r.executor_memory_bytes
    if memory:
        key = "driver_memory_bytes" if local else "executor_memory_bytes"
        src["memory_bytes"] = r.sources.get(key, "log")
    else:
        memory = DEFAULT_MEMORY_BYTES
        src["memory_bytes"] = "default: 1g (Spark's default heap)"
    task_cpus = max(1, r.task_cpus)
    executors_per_host = max(1, math.ceil(executors / max(hosts, 1)))
    host_cores, assumed = _host_cores(profile, o, executors_per_host * cores, src)
    if o.disk_bw:
        src["disk_bw"] = "given"
    else:
        src["disk_bw"] = "default: 250MB/s per host (pass --baseline-disk-bw)"
    if o.net_bw:
        src["net_bw"] = "given"
    else:
        src["net_bw"] = "default: 10Gbit/s per host (pass --baseline-net-bw)"
    src["cpu_speed"] = "baseline = 1.0"
    fraction = r.memory_fraction
    src["memory_fraction"] = (
        "log: spark.memory.fraction" if fraction is not None else "Spark's default (0.6)"
    )
    return ClusterConfig(
        executors=executors,
        executor_cores=cores,
        memory_bytes=memory,
        hosts=max(1, hosts),
        host_cores=host_cores,
        host_cores_assumed=assumed,
        cpu_speed=1.0,
        disk_bw=o.disk_bw or DEFAULT_DISK_BW,
        net_bw=o.net_bw or DEFAULT_NET_BW,
        task_cpus=task_cpus,
        local_mode=local,
        hosts_fixed=r.hosts_fixed,
        executors_exchange_data=r.executors_exchange_data,
        sources=src,
        memory_fraction=fraction if fraction is not None else DEFAULT_MEMORY_FRACTION,
        allocation=read_settings(profile.properties, profile.framework_version, r.master),
    )


def _host_cores(
    profile: ApplicationProfile, o: BaselineOverrides, allotted: int, src: dict[str, str]
) -> tuple[int, bool]:
    """Physical cores per host: given, recorded, read from ``local[*]``, or assumed = slots."""
    if o.host_cores:
        src["host_cores"] = "given"
        return o.host_cores, False
    recorded = profile.extra.get("host_cores")
    if isinstance(recorded, int) and recorded > 0:
        src["host_cores"] = "recorded with the profile"
        return recorded, False
    master = profile.resources.master.replace(" ", "")
    if profile.resources.local_mode and master.startswith("local[*"):
        src["host_cores"] = "log: local[*] uses every core of the host"
        return max(1, allotted), False
    if not profile.resources.local_mode:
        src["host_cores"] = "assumed: the cores the cluster manager gave the executors"
        return max(1, allotted), True
    src["host_cores"] = "assumed equal to the task slots (pass --host-cores)"
    return max(1, allotted), True


def apply_what_if(base: ClusterConfig, change: WhatIf) -> ClusterConfig:
    """The baseline with the requested change; the sources say what was changed."""
    src = dict(base.sources)
    executors, cores, hosts = base.executors, base.executor_cores, base.hosts
    allocation = _allocation(base, change, src)
    if allocation.enabled and allocation != base.allocation:
        # The laws see the most executors the policy may run (hosts scale with them).
        if allocation.bounded:
            executors = allocation.max_executors
            src["executors"] = "what-if: dynamic allocation's maxExecutors"
        elif not base.allocation.enabled:
            src["executors"] = "what-if: dynamic allocation (no maxExecutors: the baseline's)"
    if change.executor_cores is not None:
        _positive("--executor-cores", change.executor_cores)
        cores = change.executor_cores
        src["executor_cores"] = "what-if"
    if change.executors is not None:
        _positive("--executors", change.executors)
        if base.local_mode and change.executors != 1:
            raise ConfigError(
                "--executors (--workers) does not apply in local mode (one JVM runs every task); "
                "use --cores to change local[N]"
            )
        executors = change.executors
        src["executors"] = "what-if"
    if change.cores is not None:
        _positive("--cores", change.cores)
        if base.local_mode:
            cores = change.cores
        elif change.executors is not None and change.executor_cores is not None:
            if change.executors * change.executor_cores != change.cores:
                raise ConfigError(
                    f"--cores {change.cores} disagrees with --executors {change.executors} × "
                    f"--executor-cores {change.executor_cores}; give two of the three"
                )
        elif change.executors is not None:
            cores = max(1, change.cores // executors)
        else:
            cores = min(cores, change.cores)
            executors = max(1, math.ceil(change.cores / cores))
        src["executor_cores"] = src["executors"] = "what-if (from --cores)"
    if not base.local_mode and not base.hosts_fixed and executors != base.executors:
        # Executors stay as densely packed as before: more executors need more hosts.
        hosts = max(1, math.ceil(executors / base.executors_per_host))
        src["hosts"] = "what-if: executors per host kept"
    memory = base.memory_bytes
    if change.memory_bytes is not None:
        memory = change.memory_bytes
        src["memory_bytes"] = "what-if"
    fraction = base.memory_fraction
    if change.memory_fraction is not None:
        fraction = change.memory_fraction
        src["memory_fraction"] = "what-if"
    speed = base.cpu_speed
    if change.cpu_speed is not None:
        if change.cpu_speed <= 0:
            raise ConfigError("--cpu-speed must be positive (1.0 = the profiled machine)")
        speed = change.cpu_speed
        src["cpu_speed"] = "what-if"
    disk = _bandwidth(base.disk_bw, change.disk_bw, change.disk_factor, "disk_bw", src)
    net = _bandwidth(base.net_bw, change.net_bw, change.net_factor, "net_bw", src)
    executors_per_host = max(1, math.ceil(executors / hosts))
    allotted = executors_per_host * cores
    host_cores, assumed = base.host_cores, base.host_cores_assumed
    if change.host_cores is not None:
        _positive("--host-cores", change.host_cores)
        host_cores, assumed = change.host_cores, False
        src["host_cores"] = "what-if"
    elif not base.local_mode and not base.hosts_fixed:
        # Cluster hosts get the cores the cluster manager allots; a host whose cores were
        # given or recorded is that machine still, unless the executors outgrow it.
        host_cores = allotted if assumed else max(allotted, base.host_cores)
    elif assumed:
        # An unknown local host is assumed big enough for its slots; fewer slots run on
        # the same machine (local[1] does not shrink the host local[2] ran on). A known
        # local host stays the same machine.
        host_cores = max(allotted, base.host_cores)
    return ClusterConfig(
        executors=executors,
        executor_cores=cores,
        memory_bytes=memory,
        hosts=hosts,
        host_cores=host_cores,
        host_cores_assumed=assumed,
        cpu_speed=speed,
        disk_bw=disk,
        net_bw=net,
        task_cpus=base.task_cpus,
        local_mode=base.local_mode,
        hosts_fixed=base.hosts_fixed,
        executors_exchange_data=base.executors_exchange_data,
        sources=src,
        memory_fraction=fraction,
        allocation=allocation,
    )


def _allocation(base: ClusterConfig, change: WhatIf, src: dict[str, str]) -> AllocationSettings:
    """The target's allocation settings (`allocation_settings.change_settings`).

    A fixed executor count (``--executors``, ``--cores``) is a static configuration: given
    alone on a dynamic baseline it turns dynamic allocation off, as a user sizing the
    executors means; with ``--dynamic-allocation on`` or the policy's limits it is a
    contradiction."""
    limits = (change.min_executors, change.max_executors, change.initial_executors)
    fixed = change.executors is not None or change.cores is not None
    given = any(v is not None for v in limits)
    if fixed and (change.dynamic_allocation or given):
        raise ConfigError(
            "--executors and --cores fix the executor count, which dynamic allocation "
            "decides: give --min-executors, --max-executors or --initial-executors (and "
            "--executor-cores for the executor size) instead"
        )
    if change.dynamic_allocation is None and not given:
        if fixed and base.allocation.enabled:
            src["dynamic_allocation"] = "what-if: a fixed executor count (dynamic allocation off)"
            return change_settings(base.allocation, enabled=False)
        return base.allocation
    if base.local_mode and change.dynamic_allocation:
        raise ConfigError(
            "--dynamic-allocation on needs a cluster manager: in local mode one JVM runs "
            "every task (Spark ignores dynamic allocation there)"
        )
    enabled = (
        base.allocation.enabled
        if change.dynamic_allocation is None
        else bool(change.dynamic_allocation)
    )
    if not enabled and given:
        raise ConfigError(
            "--min-executors, --max-executors and --initial-executors apply to dynamic "
            "allocation, which this configuration does not use: add --dynamic-allocation on"
        )
    try:
        return change_settings(
            base.allocation,
            enabled=change.dynamic_allocation,
            min_executors=change.min_executors,
            max_executors=change.max_executors,
            initial_executors=change.initial_executors,
        )
    except AllocationError as exc:
        raise ConfigError(str(exc)) from None


def _bandwidth(
    base: float, absolute: float | None, factor: float | None, name: str, src: dict[str, str]
) -> float:
    if absolute is not None and factor is not None:
        raise ConfigError(f"give {name} either as a bandwidth or as a factor, not both")
    if absolute is not None:
        src[name] = "what-if"
        return absolute
    if factor is not None:
        src[name] = f"what-if: {factor:g}× the baseline"
        return base * factor
    return base


def _positive(option: str, value: int) -> None:
    if value < 1:
        raise ConfigError(f"{option} must be at least 1, got {value}")


__all__ = [
    "DEFAULT_DISK_BW",
    "DEFAULT_MEMORY_BYTES",
    "DEFAULT_NET_BW",
    "BaselineOverrides",
    "ClusterConfig",
    "ConfigError",
    "UnitError",
    "WhatIf",
    "apply_what_if",
    "baseline_config",
]
