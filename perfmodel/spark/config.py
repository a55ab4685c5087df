"""Which resources a Spark application ran with, from its configuration and its events.

The what-if replay changes these numbers, so each one records where it came from
(``ResourceConfig.sources``): a user must be able to see what was read from the log,
what was observed, and what was assumed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from perfmodel.dag.model import ApplicationProfile, ResourceConfig
from perfmodel.dag.tasks import TaskRun, TaskTable
from perfmodel.profile.quality import DataQuality

MAX_EXECUTORS = 100_000
"""Most executors a log's configuration is believed to ask for (the what-if range's bound)."""
MAX_EXECUTOR_CORES = 10_000
"""Most cores (or task CPUs) of one executor a log is believed to claim (the what-if range's
bound); a larger claim (``local[2000000000]``) is damage, clamped here and counted, so no
slot count read from a log sizes anything."""

_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:\s*,\s*\d+)?\])?$")
_LOCAL_CLUSTER = re.compile(r"^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\]$")
_JVM_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)b?\s*$", re.IGNORECASE)
_UNIT = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_jvm_memory(text: str | None) -> int | None:
    """Bytes of a Spark memory setting (``4g``, ``512m``; a bare number means MiB, as in Spark)."""
    if not text:
        return None
    m = _JVM_SIZE.match(text)
    if m is None:
        return None
    return int(float(m.group(1)) * _UNIT[m.group(2).lower()])


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip()) if text not in (None, "") else None
    except ValueError:
        return None


SUSTAINED_SHARE = 0.02
"""A concurrency level counts as a slot count only if tasks ran at it this share of the time."""


def _fraction(text: str | None) -> float | None:
    """``spark.memory.fraction`` as the log set it, if Spark would accept it (0 < f < 1):
    a value it refuses never ran, so another layer set the one the run had."""
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and 0.0 < value < 1.0 else None


def sustained_concurrency(
    tasks: Sequence[TaskRun] | TaskTable, min_share: float = SUSTAINED_SHARE
) -> int:
    """The most tasks that ran at once for a meaningful share of the busy time.

    The plain maximum over-counts: the driver timestamps a task's end when it hears of
    it, after the slot already started the next task, so a 12-slot run shows moments with
    16 tasks "running". Levels held for less than ``min_share`` of the busy time are such
    artefacts, not slots.
    """
    if not isinstance(tasks, TaskTable):
        tasks = TaskTable.from_runs(tasks)
    ended = tasks.ended
    if not ended.any():
        return 0
    starts = tasks.launch_ms[ended]
    ends = tasks.finish_ms[ended]
    times = np.concatenate([ends, starts])
    deltas = np.concatenate([-np.ones(len(ends)), np.ones(len(ends))])
    order = np.lexsort((deltas, times))  # at equal times a slot is freed before it is reused
    times, deltas = times[order], deltas[order]
    running = np.cumsum(deltas)[:-1].astype(np.int64)
    spans = np.diff(times)
    keep = running > 0
    levels = np.bincount(running[keep], weights=spans[keep])
    time_at = {int(level): float(t) for level, t in enumerate(levels) if t > 0}
    busy = sum(time_at.values())
    if busy <= 0:
        return int(running.max()) if running.size else 1
    held = [level for level, spent in time_at.items() if spent >= min_share * busy]
    return max(held) if held else max(time_at)


def resolve_resources(
    profile: ApplicationProfile, quality: DataQuality | None = None
) -> ResourceConfig:
    """The application's resources; numbers past any real cluster's are clamped into the
    what-if ranges (`MAX_EXECUTORS`, `MAX_EXECUTOR_CORES`) and counted in ``quality``."""
    cfg = _resources(profile)
    for name, limit in (
        ("executor_instances", MAX_EXECUTORS),
        ("executor_cores", MAX_EXECUTOR_CORES),
        ("task_cpus", MAX_EXECUTOR_CORES),
    ):
        value = getattr(cfg, name)
        if value is not None and value > limit:
            setattr(cfg, name, limit)
            cfg.sources[name] += f" (clamped from {value:,}: beyond any real cluster)"
            if quality is not None:
                quality.add("out_of_range_value", f"{name} {value:,} in the configuration")
    if cfg.executor_instances and cfg.executor_cores:
        cfg.total_slots = cfg.executor_instances * cfg.executor_cores // max(cfg.task_cpus, 1)
    return cfg


def _resources(profile: ApplicationProfile) -> ResourceConfig:
    props = profile.properties
    cfg = ResourceConfig()
    src = cfg.sources
    cfg.master = props.get("spark.master", "")
    if cfg.master:
        src["master"] = "log: spark.master"
    cfg.task_cpus = _int(props.get("spark.task.cpus")) or 1
    cfg.dynamic_allocation = props.get("spark.dynamicAllocation.enabled", "").lower() == "true"
    cfg.executor_memory_bytes = parse_jvm_memory(props.get("spark.executor.memory"))
    if cfg.executor_memory_bytes:
        src["executor_memory_bytes"] = "log: spark.executor.memory"
    cfg.driver_memory_bytes = parse_jvm_memory(props.get("spark.driver.memory"))
    if cfg.driver_memory_bytes:
        src["driver_memory_bytes"] = "log: spark.driver.memory"
    cfg.executor_cores = _int(props.get("spark.executor.cores"))
    if cfg.executor_cores:
        src["executor_cores"] = "log: spark.executor.cores"
    cfg.executor_instances = _int(props.get("spark.executor.instances"))
    if cfg.executor_instances:
        src["executor_instances"] = "log: spark.executor.instances"
    cfg.memory_fraction = _fraction(props.get("spark.memory.fraction"))

    observed = sustained_concurrency(profile.task_table())
    local = _LOCAL.match(cfg.master)
    cluster = _LOCAL_CLUSTER.match(cfg.master)
    if local:
        cfg.local_mode = True
        cfg.executor_instances = 1
        cfg.hosts = 1
        src["executor_instances"] = src["hosts"] = "local mode: the driver runs the tasks"
        n = local.group(1)
        if n is None:
            cfg.executor_cores = 1
            src["executor_cores"] = "log: spark.master=local"
        elif n != "*":
            cfg.executor_cores = int(n)
            src["executor_cores"] = f"log: spark.master={cfg.master}"
        else:
            # local[*] runs one task per core of the driver, whose executor event says how
            # many (observed concurrency can exceed it by a task finishing late); a log
            # without that event leaves the most tasks seen running at once.
            driver = profile.executors.get("driver")
            if driver is not None and driver.cores:
                cfg.executor_cores = driver.cores
                src["executor_cores"] = "log: local[*] driver executor cores"
            else:
                cfg.executor_cores = max(observed, 1)
                src["executor_cores"] = (
                    "observed: most tasks running at once for ≥2% of the busy time "
                    "(local[*] does not log the core count)"
                )
        mem = cfg.driver_memory_bytes
        cfg.executor_memory_bytes = mem
        if mem:
            src["executor_memory_bytes"] = "log: spark.driver.memory (local mode)"
    elif cluster:
        cfg.executor_instances = int(cluster.group(1))
        cfg.executor_cores = int(cluster.group(2))
        cfg.executor_memory_bytes = int(cluster.group(3)) << 20
        cfg.hosts = 1
        for name in ("executor_instances", "executor_cores", "executor_memory_bytes"):
            src[name] = f"log: spark.master={cfg.master}"
        src["hosts"] = "local-cluster runs on one host"
    else:
        executors = [e for e in profile.executors.values() if e.executor_id != "driver"]
        cores = [e.cores for e in executors if e.cores]
        if cfg.executor_cores is None and cores:
            cfg.executor_cores = max(set(cores), key=cores.count)
            src["executor_cores"] = "log: executor added events (most common core count)"
        if executors:
            alive = _max_alive(profile)
            if cfg.executor_instances is None or cfg.dynamic_allocation:
                cfg.executor_instances = alive
                src["executor_instances"] = "observed: most executors alive at once"
            hosts = {e.host for e in executors if e.host}
            cfg.hosts = len(hosts) or None
            if cfg.hosts:
                src["hosts"] = "log: distinct executor hosts"
    if cfg.executor_instances and cfg.executor_cores:
        cfg.total_slots = cfg.executor_instances * cfg.executor_cores // max(cfg.task_cpus, 1)
        src["total_slots"] = "executors × cores ÷ spark.task.cpus"
    elif observed:
        cfg.total_slots = observed
        src["total_slots"] = "observed: most tasks running at once (sustained)"
    return cfg


def _max_alive(profile: ApplicationProfile) -> int:
    points: list[tuple[float, int]] = []
    for e in profile.executors.values():
        if e.executor_id == "driver":
            continue
        points.append((e.added_ms or 0.0, 1))
        if e.removed_ms is not None:
            points.append((e.removed_ms, -1))
    points.sort()
    running = best = 0
    for _, delta in points:
        running += delta
        best = max(best, running)
    return best
