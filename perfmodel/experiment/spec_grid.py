"""A spec's run configurations: `RunConfig` and the expansion of ``[grid]`` and ``[[configs]]``.

Split from `perfmodel.experiment.spec` so that module reads as the spec's top-level keys
while this one holds what a single configuration may be and how a grid becomes a list of
them. `SpecError` lives here, the lower of the two modules, and is re-exported by `spec`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.units import UnitError, parse_size

_MASTER = re.compile(r"^local\[(\d+|\*)(?:,\s*\d+)?\]$|^local$|^cluster$")
CLUSTER = "cluster"
"""The master of runs on the shaped standalone cluster the runner builds (docs/cluster.md)."""
GRID_AXES = (
    "master",
    "workers",
    "rate_mbit",
    "driver_memory",
    "executor_memory",
    "shuffle_partitions",
)
"""In this order the grid's product keeps runs on the same cluster shape together."""
MAX_CONFIGS = 10_000
"""Most configurations one spec may make (a larger grid is a typing mistake)."""


class SpecError(PerfmodelError):
    """A spec that cannot be used; the message names the file, the key and the fix."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One point of the grid: the resources and settings a run gets from outside the script."""

    name: str
    master: str = "local[1]"
    driver_memory: str | None = None
    executor_memory: str | None = None
    shuffle_partitions: int | None = None
    conf: tuple[tuple[str, str], ...] = ()
    workers: int | None = None
    """Worker hosts of a ``cluster`` run (one core each)."""
    rate_mbit: float | None = None
    """Each worker's link of a ``cluster`` run, Mbit/s (None: not limited)."""

    @property
    def cores(self) -> int | None:
        """Task slots: of a ``local[N]`` master, or the workers' (one core each) of a cluster;
        None for ``local[*]``."""
        if self.master == CLUSTER:
            return self.workers
        m = re.match(r"^local\[(\d+)", self.master)
        if m:
            return int(m.group(1))
        return 1 if self.master == "local" else None

    @property
    def memory_bytes(self) -> int | None:
        """Heap that runs the tasks: the driver's in local mode, else the executors'."""
        text = self.driver_memory if self.master.startswith("local") else self.executor_memory
        return parse_size(text) if text else None

    def submit_options(self) -> list[str]:
        """The ``spark-submit`` options that apply this configuration."""
        # A cluster run's master URL comes from the cluster's configuration (its conf dir).
        opts = [] if self.master == CLUSTER else ["--master", self.master]
        if self.driver_memory:
            opts += ["--driver-memory", self.driver_memory]
        if self.executor_memory:
            opts += ["--executor-memory", self.executor_memory]
        if self.shuffle_partitions is not None:
            opts += ["--conf", f"spark.sql.shuffle.partitions={self.shuffle_partitions}"]
        for key, value in self.conf:
            opts += ["--conf", f"{key}={value}"]
        return opts

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "master": self.master,
            "driver_memory": self.driver_memory,
            "executor_memory": self.executor_memory,
            "shuffle_partitions": self.shuffle_partitions,
            "conf": dict(self.conf),
        } | (
            {"workers": self.workers, "rate_mbit": self.rate_mbit} if self.master == CLUSTER else {}
        )

    def resource_key(self) -> tuple[Any, ...]:
        """Everything but cores and memory: two configs are a predictable pair only if equal."""
        return (self.shuffle_partitions, self.conf, self.master.startswith("local"))


def expand_configs(data: Mapping[str, Any], path: Path) -> list[RunConfig]:
    """The configs of a spec's ``[grid]`` (its product) then its ``[[configs]]`` entries."""
    out: list[RunConfig] = []
    grid = data.get("grid")
    if grid is not None:
        if not isinstance(grid, dict):
            raise SpecError(f"{path}: [grid] must be a table of axis = [values]")
        unknown = sorted(set(grid) - {*GRID_AXES, "conf"})
        if unknown:
            raise SpecError(
                f"{path}: unknown grid axis {', '.join(unknown)} "
                f"(axes: {', '.join(GRID_AXES)}, plus a `conf` table applied to every point)"
            )
        axes: dict[str, list[Any]] = {}
        for axis in GRID_AXES:
            if axis in grid:
                values = grid[axis]
                if not isinstance(values, list) or not values:
                    raise SpecError(f"{path}: grid.{axis} must be a non-empty list")
                axes[axis] = values
        conf = _conf(grid.get("conf", {}), path, "grid.conf")
        names = list(axes)
        size = math.prod(len(axes[n]) for n in names)
        if size > MAX_CONFIGS:
            raise SpecError(
                f"{path}: [grid] makes {size:,} configs; a spec may have at most {MAX_CONFIGS:,}"
            )
        for combo in itertools.product(*(axes[n] for n in names)):
            settings = dict(zip(names, combo, strict=True))
            out.append(_config(settings, conf, path, "grid"))
    for i, entry in enumerate(data.get("configs", []) or []):
        if not isinstance(entry, dict):
            raise SpecError(f"{path}: configs[{i}] must be a table")
        unknown = sorted(set(entry) - {*GRID_AXES, "conf", "name"})
        if unknown:
            raise SpecError(f"{path}: configs[{i}]: unknown key(s) {', '.join(unknown)}")
        conf = _conf(entry.get("conf", {}), path, f"configs[{i}].conf")
        settings = {k: v for k, v in entry.items() if k in GRID_AXES}
        out.append(_config(settings, conf, path, f"configs[{i}]", entry.get("name")))
    if not out:
        raise SpecError(f"{path}: no configurations: add a [grid] or [[configs]] entries")
    return out


def _config(
    settings: Mapping[str, Any],
    conf: tuple[tuple[str, str], ...],
    path: Path,
    where: str,
    name: object = None,
) -> RunConfig:
    master = settings.get("master", "local[1]")
    if not isinstance(master, str) or not _MASTER.match(master.replace(" ", "")):
        raise SpecError(
            f"{path}: {where}: master {master!r} is not supported: local[N] or local[*], or "
            "cluster (the shaped standalone cluster the runner builds, docs/cluster.md)"
        )
    workers, rate = _cluster_shape(settings, master, path, where)
    mem: dict[str, str | None] = {}
    for key in ("driver_memory", "executor_memory"):
        value = settings.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise SpecError(f"{path}: {where}: {key} must be a string such as '512m'")
            try:
                size = parse_size(value)
            except UnitError as exc:
                raise SpecError(f"{path}: {where}: {key}: {exc}") from None
            if key == "driver_memory" and size < 450 * (1 << 20):
                raise SpecError(
                    f"{path}: {where}: driver_memory {value} is below the 450m Spark needs "
                    "(it reserves 300 MiB and refuses heaps under 1.5 times that)"
                )
        mem[key] = value
    partitions = settings.get("shuffle_partitions")
    if partitions is not None and (
        not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1
    ):
        raise SpecError(f"{path}: {where}: shuffle_partitions must be a positive integer")
    if name is None:
        parts = [master.replace(" ", "")]
        if mem["driver_memory"]:
            parts.append(f"driver={mem['driver_memory']}")
        if mem["executor_memory"]:
            parts.append(f"executor={mem['executor_memory']}")
        if partitions is not None:
            parts.append(f"partitions={partitions}")
        if master == CLUSTER:
            parts.insert(1, f"workers={workers}")
            parts.insert(2, f"rate={rate:g}mbit" if rate is not None else "rate=unlimited")
        name = " ".join(parts)
    if not isinstance(name, str) or not name:
        raise SpecError(f"{path}: {where}: name must be a non-empty string")
    return RunConfig(
        name=name,
        master=master.replace(" ", ""),
        driver_memory=mem["driver_memory"],
        executor_memory=mem["executor_memory"],
        shuffle_partitions=partitions,
        conf=conf,
        workers=workers,
        rate_mbit=rate,
    )


def _cluster_shape(
    settings: Mapping[str, Any], master: str, path: Path, where: str
) -> tuple[int | None, float | None]:
    """(workers, rate) of a cluster config; both only make sense with ``master = "cluster"``."""
    workers, rate = settings.get("workers"), settings.get("rate_mbit")
    if master != CLUSTER:
        if workers is not None or rate is not None:
            raise SpecError(f'{path}: {where}: workers and rate_mbit need master = "cluster"')
        return None, None
    workers = 2 if workers is None else workers
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= 9:
        raise SpecError(f"{path}: {where}: workers must be an integer from 1 to 9")
    if rate is not None and (
        not isinstance(rate, int | float) or isinstance(rate, bool) or rate <= 0
    ):
        raise SpecError(f"{path}: {where}: rate_mbit must be a positive number (Mbit/s)")
    return workers, None if rate is None else float(rate)


def _conf(raw: object, path: Path, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        raise SpecError(f'{path}: {where} must be a table of "spark.key" = value')
    out = []
    for key, value in raw.items():
        if not str(key).startswith("spark."):
            raise SpecError(f"{path}: {where}: {key!r} is not a Spark setting (spark.*)")
        if isinstance(value, bool):
            value = str(value).lower()
        out.append((str(key), str(value)))
    return tuple(sorted(out))
