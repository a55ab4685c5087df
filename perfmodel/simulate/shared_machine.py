"""Executors that share one machine: how crowded it was, and how crowded another executor
count would make it.

Why: Spark's log gives each executor its own host and cores. The namespace cluster's
"hosts" are network namespaces on one machine, each worker under a CPU quota (a cgroup: so
are YARN containers and Kubernetes pods that share a node). Eight workers at a quarter of a
core each ask the 2-core study machine for all of it, before its driver, its daemons and
anything else running there. Measured (docs/cluster.md, 2026-11-28: a 200 MB sort on 8
such workers, the machine also busy with other work), 8 one-core executors took 250–254 s
where 2 took 181–189 s; replayed from the 2-executor run's log, which gives each executor a
host of its own, 8 were predicted to take 138 s.

What a bundle measures, where `perfmodel cluster record` followed the executors on the
recording machine (`BundleManifest.executor_hosts`: the machine's cores ``M`` and each
executor's CPU limit ``q``, its cgroup quota; per-thread CPU and run-queue delay of every
executor thread and the driver, `perfmodel.profile.thread_cpu`), over a window (a stage's
tasks, the start-up before the first task):

* what the executors got: ``r``, their CPU over the window;
* what they wanted: per executor ``w = min(q, (cpu + wait) / T)``: a thread that is
  runnable wants a core, up to the executor's quota;
* the pressure ``P = Σw / Σr ≥ 1``: each runnable thread got ``1/P`` of what it wanted.

The law: the machine's ``M`` cores go to everything that wants them in proportion to what it
wants (``P = max(1, (E·w + O)/M)``), ``O`` being what the rest of the machine's load (the
driver, the daemons, the recorders, other processes) wanted: where the machine was crowded
(``P > 1``), ``O = P·M − Σw``; where it was not, what the rest used (the host's CPU less the
executors'), as far as that is measured. A target of ``E'`` executors, each wanting the same
``w``, meets ``P' = max(1, (E'·w + O)/M)``: the executors' CPU work takes ``P'/P`` as long,
and so does the driver's (its waits between stages, the start-up). Proportional sharing is
what CFS does for equal weights; it is a first-order law, fitted to nothing. The rest of the
machine's load is kept as it was (a rate), as the local-mode laws keep other processes.

Bare logs, and bundles recorded where the executors did not run (a real cluster's driver
node), have none of this: their executors' hosts are their own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from perfmodel.profile.thread_cpu import HOST, HOST_KINDS, CpuSeries, ThreadCpu
from perfmodel.simulate import laws

CROWDED = 1.05
"""A window whose executors got less than this share of what they wanted (1/P) was crowded;
below it, the rest of the machine's load is what it used."""
DRIVER = "driver"


@dataclass(frozen=True, slots=True)
class Window:
    """The machine over one window: the executors that ran in it and what the rest wanted."""

    executors: int
    """Executors on the machine that used CPU in the window (the baseline's ``E``)."""
    wanted: float
    """Cores one executor wanted, on average (``w``)."""
    other: float
    """Cores the rest of the machine's load wanted (``O``)."""
    pressure: float
    """``P`` as measured (≥ 1)."""

    def pressure_at(self, executors: float, cores: float) -> float:
        """``P`` with ``executors`` executors each wanting ``wanted`` (≥ 1)."""
        return float(laws.machine_pressure(executors, self.wanted, self.other, cores))


NO_WINDOW = Window(0, 0.0, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class SharedMachine:
    """Executors that ran on one machine: its cores, and the windows measured on it."""

    cores: float
    """``M``: the machine's usable cores."""
    executors: int
    """Executors of the application that ran on it."""
    startup: Window
    """From the application's start to its first task: executors starting, the driver
    planning."""
    tasks: Window
    """From the first task to the last: what the driver's waits between stages met."""
    stages: list[Window] = field(default_factory=list)
    """Per replayed stage (workload order), over its tasks' run; `NO_WINDOW` where none ran."""
    first_task_ms: float = 0.0
    """When the first task started, ms after the application's start: what came before it
    was start-up."""

    def note(self) -> str:
        busy = [w for w in self.stages if w.executors]
        worst = max((w.pressure for w in busy), default=1.0)
        return (
            f"the {self.executors} executors ran on one {self.cores:g}-core machine (the "
            "recording's; their CPU limits from their cgroups): while tasks ran they got "
            f"{1 / self.tasks.pressure:.0%} of the CPU they wanted ({1 / worst:.0%} in the "
            f"most crowded stage), the rest of the machine's load wanting {self.tasks.other:.2f} "
            "cores; another executor count is replayed on the same machine, its CPU shared in "
            "proportion to what each wants (docs/cluster.md)"
        )


@dataclass(frozen=True, slots=True)
class DriverStart:
    """The driver's start-up on the machine the executors shared: from the application's
    start to its first job, the driver's own work (starting its JVM and Python, planning
    the first query) and the executors that started beside it.

    Why: a driver that starts while the executors start shares the machine with them, and
    executors capped at a quota each take all of it while they start (a starting JVM wants
    more than a quarter of a core). Measured on the namespace cluster (connected
    components, 8 workers at a quarter of a core on 2 cores, 2026-11-29): with 8 static
    executors starting at once, the driver got 9.8 core-s of CPU in its first 45 s, its
    threads waiting 119 s for a core, and submitted its first job at 55.7 s; with dynamic
    allocation, whose executors are asked for only once that job waits, it used 16 core-s
    in its first 10 s and submitted the job at 10.8 s. Before their first job both drivers
    used 18-19 core-s: the same work, at the rate the machine left it."""

    lag_ms: float
    """From the application's start to its first job's submission."""
    cpu_ms: float
    """The driver's CPU over that time (all its threads: JVM, Python)."""
    want: float
    """Cores the driver wanted over it, ``(cpu + run-queue delay) / lag``, at most the
    machine's."""
    starting: int
    """Executors that started beside it (registered before the first job)."""
    startup_ms: float
    """When they had registered (the median, ms since the start); 0 with none."""
    quota: float
    """Cores each executor may use (its CPU limit)."""

    def lag_for(self, starting: int, startup_ms: float, cores: float) -> float:
        """The start-up's length with ``starting`` executors registering by ``startup_ms``:
        while they start, each takes its quota and the driver gets what is left (at most
        what it wants); afterwards, what it wants."""
        want = max(self.want, 1e-9)
        left = min(want, max(0.0, cores - starting * self.quota)) if starting else want
        span = max(0.0, startup_ms) if starting else 0.0
        if left * span >= self.cpu_ms:
            return self.cpu_ms / left
        return span + (self.cpu_ms - left * span) / want


def driver_start(
    measured: ThreadCpu,
    cores: float,
    quota: float,
    start_ms: float,
    first_job_ms: float,
    registered_ms: Sequence[float],
) -> DriverStart | None:
    """The driver's start-up from per-thread CPU (`DriverStart`); None where the driver's
    threads were not measured over it. ``registered_ms``: when each executor registered."""
    parts = [s for (e, _kind), s in measured.series.items() if e == DRIVER and s.t_ms.size]
    lag = first_job_ms - start_ms
    if not parts or not lag > 0:
        return None
    cpu = sum(_between(s, start_ms, first_job_ms) for s in parts)
    if cpu <= 0:
        return None
    wait = sum(_between(s, start_ms, first_job_ms, waits=True) for s in parts)
    early = sorted(t - start_ms for t in registered_ms if start_ms <= t <= first_job_ms)
    return DriverStart(
        lag_ms=lag,
        cpu_ms=cpu,
        want=min(cores, (cpu + wait) / lag),
        starting=len(early),
        startup_ms=float(np.median(early)) if early else 0.0,
        quota=quota,
    )


def machine_of(extra: Mapping[str, object]) -> tuple[float, dict[str, float | None]] | None:
    """(machine cores, executor id → CPU limit in cores or None) from a profile's
    ``executor_hosts`` (what `perfmodel cluster record` wrote); None without it."""
    hosts = extra.get("executor_hosts")
    if not isinstance(hosts, Mapping):
        return None
    cores = hosts.get("machine_cores")
    executors = hosts.get("executors")
    if not isinstance(cores, int | float) or cores <= 0 or not isinstance(executors, Mapping):
        return None
    limits: dict[str, float | None] = {}
    for executor, entry in executors.items():
        limit = entry.get("cpu_limit_cores") if isinstance(entry, Mapping) else None
        if isinstance(limit, int | float) and math.isfinite(limit) and limit > 0:
            limits[str(executor)] = float(limit)
        else:
            limits[str(executor)] = None
    return (float(cores), limits) if limits else None


def estimate(
    measured: ThreadCpu,
    cores: float,
    limits: Mapping[str, float | None],
    executor_cores: Mapping[str, int],
    start_ms: float,
    first_task_ms: float,
    last_task_ms: float,
    stage_windows: Sequence[tuple[float, float] | None],
) -> SharedMachine | None:
    """The machine's windows from per-thread CPU; None where no executor on the machine was
    measured. ``limits``: each executor's CPU limit (None: its allotted cores,
    ``executor_cores``); ``stage_windows``: per stage, (first launch, last end) or None."""
    series = _per_executor(measured, set(limits))
    if not series:
        return None
    quota = {e: (limits.get(e) or float(executor_cores.get(e, 1) or 1)) for e in series}
    host = [measured.series[(HOST, k)] for k in HOST_KINDS if (HOST, k) in measured.series]

    def window(a: float, b: float) -> Window:
        return _window(series, quota, host, cores, a, b)

    return SharedMachine(
        cores=cores,
        executors=len(series),
        startup=window(start_ms, first_task_ms),
        tasks=window(first_task_ms, last_task_ms),
        stages=[window(*w) if w is not None else NO_WINDOW for w in stage_windows],
        first_task_ms=first_task_ms - start_ms,
    )


def _per_executor(measured: ThreadCpu, on_machine: set[str]) -> dict[str, list[CpuSeries]]:
    """Every series of each executor on the machine (all its threads' kinds, the Python
    workers serving it included)."""
    out: dict[str, list[CpuSeries]] = {}
    for (executor, _kind), s in measured.series.items():
        if executor in on_machine and executor not in (HOST, DRIVER) and s.t_ms.size:
            out.setdefault(executor, []).append(s)
    return out


def _between(s: CpuSeries, a: float, b: float, waits: bool = False) -> float:
    """Milliseconds the series used (or waited) in [a, b]."""
    values = s.wait_ms if waits else s.cpu_ms
    t = np.concatenate([[s.t_ms[0] - 1.0], s.t_ms])
    c = np.concatenate([[0.0], values])
    lo, hi = np.interp([a, b], t, c)
    return float(max(0.0, hi - lo))


def _window(
    series: Mapping[str, list[CpuSeries]],
    quota: Mapping[str, float],
    host: Sequence[CpuSeries],
    cores: float,
    a: float,
    b: float,
) -> Window:
    """Each executor over the part of [a, b] it was alive in (an executor that started late
    did not want CPU before it existed): what it got and wanted, as rates; what the rest of
    the machine wanted, from the pressure where crowded, else from the host's CPU."""
    if not b > a:
        return NO_WINDOW
    got = wanted = 0.0
    n = 0
    for executor, parts in series.items():
        lo = max(a, min(float(s.t_ms[0]) for s in parts))
        hi = min(b, max(float(s.t_ms[-1]) for s in parts))
        span = hi - lo
        if not span > 0:
            continue
        cpu = sum(_between(s, lo, hi) for s in parts)
        if cpu <= 0:
            continue
        wait = sum(_between(s, lo, hi, waits=True) for s in parts)
        n += 1
        got += cpu / span
        wanted += min(quota[executor], (cpu + wait) / span)
    if n == 0 or got <= 0:
        return NO_WINDOW
    pressure = max(1.0, wanted / got)
    if pressure > CROWDED:
        other = max(0.0, pressure * cores - wanted)
    else:
        used = sum(_between(s, a, b) for s in host) / (b - a)
        other = max(0.0, used - got)
    return Window(n, wanted / n, other, pressure)


def machine_factor(
    window: Window, cores: float, base_executors: float, new_executors: float
) -> float:
    """t'/t of CPU work (the executors', or the driver's) in ``window`` when ``base_executors``
    executors on the machine become ``new_executors``: ``P'/P`` (`laws.shared_machine_factor`)."""
    if window.executors == 0 or base_executors == new_executors:
        return 1.0
    return float(
        laws.shared_machine_factor(
            base_executors, new_executors, window.wanted, window.other, cores
        )
    )
