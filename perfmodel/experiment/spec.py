"""Experiment specs: which workload to run, under which configurations, how many times.

A spec is a TOML file (docs/experiments.md). It is validated completely before anything
runs, because a typo found after twenty minutes of measurements wastes them; every error
names the file, the key and what is accepted.

The workload is an unmodified PySpark script: configurations are applied from outside
(``spark-submit --master ... --driver-memory ... --conf ...``), never by editing it.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.units import UnitError, parse_size

_MASTER = re.compile(r"^local\[(\d+|\*)(?:,\s*\d+)?\]$|^local$|^cluster$")
CLUSTER = "cluster"
"""The master of runs on the shaped standalone cluster the runner builds (docs/cluster.md)."""
_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
GRID_AXES = (
    "master",
    "workers",
    "rate_mbit",
    "driver_memory",
    "executor_memory",
    "shuffle_partitions",
)
"""In this order the grid's product keeps runs on the same cluster shape together."""
TOP_KEYS = {
    "name",
    "workload",
    "description",
    "script",
    "args",
    "command",
    "warmups",
    "repetitions",
    "timeout_s",
    "data_dir",
    "params",
    "prepare",
    "grid",
    "configs",
    "record",
    "keep_output",
}


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


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """How each run is recorded (passed to `perfmodel.profile.record.RecordOptions`)."""

    jfr: bool = True
    pyspy: bool = True
    interval_ms: int = 20
    jvm_sampler: str = "jfr"


JVM_SAMPLERS = ("jfr", "plugin")


@dataclass(slots=True)
class ExperimentSpec:
    """A validated spec; paths are absolute, parameters not yet substituted."""

    name: str
    workload: str
    path: Path
    text: str
    configs: list[RunConfig]
    script: Path | None = None
    args: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    """A plain command instead of a script (any program; configs are not applied to it)."""
    prepare: list[str] = field(default_factory=list)
    warmups: int = 0
    repetitions: int = 1
    timeout_s: float = 600.0
    data_dir: Path = Path("build/experiments/data")
    params: dict[str, str] = field(default_factory=dict)
    record: RecordSettings = field(default_factory=RecordSettings)
    keep_output: bool = False
    description: str = ""

    def with_overrides(
        self,
        params: Mapping[str, str] | None = None,
        repetitions: int | None = None,
        warmups: int | None = None,
        only: list[str] | None = None,
    ) -> ExperimentSpec:
        """A copy with command-line overrides applied (unknown names are errors)."""
        new_params = dict(self.params)
        for key, value in (params or {}).items():
            if key not in new_params:
                known = ", ".join(sorted(new_params)) or "none"
                raise SpecError(f"{self.path}: no parameter {key!r} to override (known: {known})")
            new_params[key] = value
        configs = self.configs
        if only:
            names = {c.name for c in configs}
            missing = [n for n in only if n not in names]
            if missing:
                raise SpecError(
                    f"{self.path}: no config named {', '.join(missing)} "
                    f"(configs: {', '.join(c.name for c in configs)})"
                )
            configs = [c for c in configs if c.name in only]
        return ExperimentSpec(
            name=self.name,
            workload=self.workload,
            path=self.path,
            text=self.text,
            configs=configs,
            script=self.script,
            args=list(self.args),
            command=list(self.command),
            prepare=list(self.prepare),
            warmups=self.warmups if warmups is None else _count(warmups, "warmups", self.path),
            repetitions=(
                self.repetitions
                if repetitions is None
                else max(1, _count(repetitions, "repetitions", self.path))
            ),
            timeout_s=self.timeout_s,
            data_dir=self.data_dir,
            params=new_params,
            record=self.record,
            keep_output=self.keep_output,
            description=self.description,
        )


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a spec file."""
    p = Path(path)
    if not p.is_file():
        raise SpecError(f"{p}: no such spec file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{p}: not a TOML spec (not UTF-8 text)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{p}: not valid TOML: {exc}") from None
    return parse_spec(data, p.resolve(), text)


def parse_spec(data: Mapping[str, Any], path: Path, text: str = "") -> ExperimentSpec:
    """Validate a spec's parsed TOML; ``path`` anchors relative paths (its directory)."""
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise SpecError(
            f"{path}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(TOP_KEYS))})"
        )
    base = path.parent
    name = _str(data, "name", path, required=True)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise SpecError(f"{path}: name {name!r} may only hold letters, digits, '.', '_', '-'")
    script = _str(data, "script", path)
    command = _str_list(data, "command", path)
    if bool(script) == bool(command):
        raise SpecError(
            f"{path}: give exactly one of `script` (a PySpark script run by spark-submit with "
            "each config) or `command` (a plain command line)"
        )
    if command and ("grid" in data or "configs" in data):
        raise SpecError(f"{path}: `command` runs as is, so it takes no `grid` or `configs`")
    script_path = (base / script).resolve() if script else None
    if script_path is not None and not script_path.is_file():
        raise SpecError(f"{path}: script {script!r} not found (looked at {script_path})")
    params_raw = data.get("params", {})
    if not isinstance(params_raw, dict):
        raise SpecError(f"{path}: `params` must be a table of name = value")
    params = {}
    for key, value in params_raw.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise SpecError(f"{path}: params.{key} must be a string or a number")
        params[str(key)] = str(value)
    args = _str_list(data, "args", path)
    prepare = _str_list(data, "prepare", path)
    for where, words in (("args", args), ("command", command), ("prepare", prepare)):
        for word in words:
            for ref in _PARAM.findall(word):
                if ref not in params and ref not in BUILTIN_PARAMS:
                    raise SpecError(
                        f"{path}: {where} uses {{{ref}}}, which is neither a builtin "
                        f"({', '.join(BUILTIN_PARAMS)}) nor in [params]"
                    )
    configs = [] if command else _configs(data, path)
    if command:
        configs = [RunConfig(name="as-is", master="n/a")]
    if len(configs) > MAX_CONFIGS:
        raise SpecError(
            f"{path}: {len(configs):,} configs; a spec may have at most {MAX_CONFIGS:,}"
        )
    names = [c.name for c in configs]
    counted = Counter(names)
    dupes = sorted(n for n, k in counted.items() if k > 1)
    if dupes:
        raise SpecError(f"{path}: config names must be unique; repeated: {', '.join(dupes)}")
    record_raw = data.get("record", {})
    record_keys = {"jfr", "pyspy", "interval_ms", "jvm_sampler"}
    if not isinstance(record_raw, dict) or set(record_raw) - record_keys:
        raise SpecError(
            f"{path}: [record] takes jfr = bool, pyspy = bool, interval_ms = int, "
            f"jvm_sampler = {' or '.join(repr(s) for s in JVM_SAMPLERS)}"
        )
    sampler = record_raw.get("jvm_sampler", "jfr")
    if sampler not in JVM_SAMPLERS:
        raise SpecError(
            f"{path}: record.jvm_sampler must be {' or '.join(repr(s) for s in JVM_SAMPLERS)}, "
            f"not {sampler!r}"
        )
    rec = RecordSettings(
        jfr=_bool(record_raw, "jfr", path, True),
        pyspy=_bool(record_raw, "pyspy", path, True),
        interval_ms=_count(record_raw.get("interval_ms", 20), "record.interval_ms", path) or 20,
        jvm_sampler=sampler,
    )
    timeout = data.get("timeout_s", 600)
    if (
        not isinstance(timeout, int | float)
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise SpecError(
            f"{path}: timeout_s must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_S:,.0f} (a week)"
        )
    repetitions = _count(data.get("repetitions", 1), "repetitions", path)
    if repetitions < 1:
        raise SpecError(f"{path}: repetitions must be at least 1")
    return ExperimentSpec(
        name=name,
        workload=_str(data, "workload", path) or name,
        path=path,
        text=text,
        configs=configs,
        script=script_path,
        args=args,
        command=command,
        prepare=prepare,
        warmups=_count(data.get("warmups", 0), "warmups", path),
        repetitions=repetitions,
        timeout_s=float(timeout),
        data_dir=(base / _str(data, "data_dir", path, default="data")).resolve(),
        params=params,
        record=rec,
        keep_output=_bool(data, "keep_output", path, False),
        description=_str(data, "description", path),
    )


BUILTIN_PARAMS = ("python", "data", "out", "spec_dir")
"""Placeholders every spec may use: the venv's python, the data dir, the run's scratch
output dir, and the spec file's directory."""


def substitute(words: list[str], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` placeholders (validated at load time) by their values."""
    return [_PARAM.sub(lambda m: values[m.group(1)], w) for w in words]


def _configs(data: Mapping[str, Any], path: Path) -> list[RunConfig]:
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


def _str(
    data: Mapping[str, Any], key: str, path: Path, *, required: bool = False, default: str = ""
) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise SpecError(f"{path}: missing required key `{key}`")
        return default
    if not isinstance(value, str) or (required and not value):
        raise SpecError(f"{path}: `{key}` must be a non-empty string")
    return value


def _str_list(data: Mapping[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SpecError(f"{path}: `{key}` must be a list of strings")
    return [str(v) for v in value]


def _bool(data: Mapping[str, Any], key: str, path: Path, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{path}: `{key}` must be true or false")
    return value


COUNT_LIMITS: dict[str, int] = {
    "repetitions": 1_000,
    "warmups": 100,
    "record.interval_ms": 60_000,
}
"""Most of each count a spec may ask for: a run of a workload takes seconds to hours, so a
thousand repetitions is already weeks; beyond that the number is a typing mistake."""
MAX_TIMEOUT_S = 7 * 24 * 3600.0
MAX_CONFIGS = 10_000


def _count(value: object, key: str, path: Path) -> int:
    high = COUNT_LIMITS.get(key, 1_000_000)
    try:
        return msgspec.convert(value, Annotated[int, msgspec.Meta(ge=0, le=high)], strict=True)
    except msgspec.ValidationError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise SpecError(
            f"{path}: `{key}` must be a whole number from 0 to {high:,}, got {shown}"
        ) from None
