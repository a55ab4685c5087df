"""The one what-if grammar: ``name=value`` settings, parsed once, for every caller.

``predict``'s options (``--cores 8 --net-bw 2x``), its ``--sweep`` axes (``cores=1,2,4``),
``fleet --what-if`` scenarios (``cores=2x,mem=0.5x``), the facade (`Change`) and
``recommend``'s baseline options all read settings through this module, so a setting means
the same and fails with the same message wherever it is written.

A value is absolute (``cores=16``, ``mem=4g``, ``net-bw=10Gbit/s``) or a factor of the
profiled run's own value (``cores=2x``, ``mem=0.5x``): across a fleet, "twice the cores"
means something different for every application, so a factor is resolved against each
baseline (`Change.resolve`), never when it is read. A switch (``dynamic-allocation``) is
``on`` or ``off`` and has no factor. Every value is checked when it is read, before any
replay runs.

A front end's own settings are values of the same grammar: ``predict --conf
spark.sql.shuffle.partitions=64``, ``--sweep spark.sql.shuffle.partitions=16,64,200``,
``fleet --what-if spark.sql.adaptive.enabled=false``. The grammar knows only how they are
written (a dotted key the front end owns, ``KEY=VALUE``); which keys exist, how each value
is written and what range it takes is the front end's table (`ConfTable`), handed in by the
caller: the grammar sits in `perfmodel.simulate`, which imports no front end, and the facade
exports Spark's table (``perfmodel.analysis.CONF``). A `Change` carries such values parsed
(`Change.conf`); what they do is the facade's to work out (a settings what-if re-partitions
stages, `perfmodel.analysis.settings_whatif`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from perfmodel.simulate.config import (
    RANGES,
    BaselineOverrides,
    ClusterConfig,
    ConfigError,
    WhatIf,
)
from perfmodel.simulate.units import UnitError, parse_bandwidth, parse_factor, parse_size

INT, SIZE, FLOAT, BANDWIDTH, SWITCH = "int", "size", "float", "bandwidth", "switch"


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting a what-if can change: its name, option, kind of value and help line."""

    name: str
    kind: str
    help: str
    aliases: tuple[str, ...] = ()
    """Other names for it, as another framework says it (Dask's ``workers``, ``threads``)."""

    @property
    def option(self) -> str:
        return "--" + self.name

    @property
    def options(self) -> tuple[str, ...]:
        """Its option and those of its aliases (``--executors``, ``--workers``)."""
        return (self.option, *("--" + a for a in self.aliases))


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("cores", INT, "Total task cores (N of local[N] in local mode), or a factor: 2x."),
        Setting(
            "executors",
            INT,
            "Number of executors (Dask: workers), or a factor of the profiled run's: 2x.",
            aliases=("workers",),
        ),
        Setting(
            "executor-cores",
            INT,
            "Cores per executor (Dask: threads per worker), or a factor: 2x.",
            aliases=("threads",),
        ),
        Setting(
            "mem",
            SIZE,
            "Heap per executor (driver in local mode; Dask: worker memory limit): 7g, 512m, "
            "or 0.5x.",
        ),
        Setting("cpu-speed", FLOAT, "Core speed relative to the profiled machine: 1.5."),
        Setting("disk-bw", BANDWIDTH, "Disk bandwidth per host: 500MB/s, or 2x the baseline."),
        Setting("net-bw", BANDWIDTH, "Network bandwidth per host: 10Gbit/s, or 2x."),
        Setting("host-cores", INT, "Physical cores per host, or a factor: 2x."),
        Setting(
            "dynamic-allocation",
            SWITCH,
            "Spark's dynamic allocation, on or off: executors come and go with the backlog.",
        ),
        Setting(
            "min-executors", INT, "Dynamic allocation's minExecutors, or a factor of the run's: 2x."
        ),
        Setting(
            "max-executors",
            INT,
            "Dynamic allocation's maxExecutors, or a factor of the run's (of its executors "
            "where it set none): 2x.",
        ),
        Setting(
            "initial-executors",
            INT,
            "Dynamic allocation's initialExecutors, or a factor of the run's: 2x.",
        ),
    )
}
"""Every setting, named as `perfmodel predict`'s options are (and the sweep axes)."""

_ALIASES = {alias: s.name for s in SETTINGS.values() for alias in s.aliases}

BASELINE_SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("host-cores", INT, "Physical cores of the profiled host (default: from the log)."),
        Setting(
            "baseline-disk-bw", BANDWIDTH, "Disk bandwidth the profiled run had (default 250MB/s)."
        ),
        Setting("baseline-net-bw", BANDWIDTH, "Network bandwidth the profiled run had (10Gbit/s)."),
    )
}
"""What a user may tell about the profiled run that its log does not say (absolute only)."""

MAX_SWEEP_POINTS = 10_000
"""Most grid points one sweep may have: each is a full replay, and the product of a few
long axes grows fast enough to run for hours or exhaust memory."""

_MAX_SPEC_CHARS = 1_000_000
_SHOWN = 40

ConfValue = bool | int | float
"""A front-end setting's value as its table parses it."""


class ConfTable(Protocol):
    """A front end's own settings (Spark's ``spark.*`` keys), as the grammar reads them."""

    @property
    def hint(self) -> str:
        """How its settings are written, for messages (``a Spark setting
        (spark.KEY=VALUE)``)."""
        ...

    def owns(self, name: str) -> bool:
        """Whether ``name`` is in the table's namespace (``spark.…``), known or not: such a
        name is read as the table's setting, and an unknown one refused by the table."""
        ...

    def parse(self, key: str, text: str) -> ConfValue:
        """``key``'s value written as ``text``. Raises a `PerfmodelError` naming the key for
        an unknown key, a value out of range, or a key whose effect the model cannot
        predict."""
        ...


@dataclass(frozen=True, slots=True)
class Value:
    """One setting's value as written (``text``): absolute, or a factor of the baseline's;
    or, for a front end's own setting (``spark.sql.shuffle.partitions``), as its table
    parsed it (``conf``)."""

    setting: str
    text: str
    absolute: float | None = None
    factor: float | None = None
    conf: ConfValue | None = None

    @property
    def is_conf(self) -> bool:
        """Whether this is a front end's setting (`ConfTable`), not a resource."""
        return self.conf is not None


def setting_key(name: str) -> str:
    """``Executor_Cores`` → ``executor-cores``: names are written as options are, and an
    alias (``workers``) is its setting (``executors``)."""
    key = name.strip().lower().replace("_", "-")
    return _ALIASES.get(key, key)


def parse_value(name: str, text: str, where: str = "", conf: ConfTable | None = None) -> Value:
    """Read ``text`` as a value of setting ``name``; ``where`` says in messages where it was
    written (``--sweep``, ``what-if 'cores=2x'``), else the option is named. ``conf``: the
    front end's table, which reads its own keys (``spark.…``)."""
    if conf is not None and conf.owns(name.strip()):
        key = name.strip()
        return Value(key, text.strip(), conf=conf.parse(key, text))
    key = setting_key(name)
    setting = SETTINGS.get(key)
    if setting is None:
        raise ConfigError(f"unknown setting {name[:_SHOWN]!r}: {_known(SETTINGS, conf)}")
    text = text.strip()
    # Named as the user wrote it: ``--threads 0`` is refused as --threads, not as the Spark
    # name it is an alias of.
    written = name.strip().lower().replace("_", "-")
    written = written if written in setting.aliases else key
    label = f"{where} {written}" if where else f"--{written}"
    if setting.kind == SWITCH:
        return Value(key, text, absolute=float(_switch(label, text)))
    try:
        factor = parse_factor(text)
        if factor is not None:
            return Value(key, text, factor=factor)
        if setting.kind == SIZE:
            absolute: float = parse_size(text)
        elif setting.kind == BANDWIDTH:
            absolute = parse_bandwidth(text)
        elif setting.kind == INT:
            absolute = _int(label, text)
        else:
            absolute = _float(label, text)
    except UnitError as exc:  # the units' own words, under the name the user wrote
        raise ConfigError(f"{label}: {exc}") from None
    _in_range(key, label, text, absolute)
    return Value(key, text, absolute=absolute)


_RANGE_FIELDS = {"mem": "memory_bytes", "disk-bw": "disk_bw", "net-bw": "net_bw"}
"""Settings whose `RANGES` field is not their name with dashes as underscores."""


def _in_range(key: str, label: str, text: str, value: float) -> None:
    """An absolute value outside its setting's range is refused as it is read, under the
    name it was written with (`WhatIf` checks the resolved values again)."""
    allowed = RANGES.get(_RANGE_FIELDS.get(key, key.replace("-", "_")))
    if allowed is not None and not allowed.low <= value <= allowed.high:
        raise ConfigError(f"{label} must be {allowed.describe()}; got {text[:_SHOWN]!r}")


@dataclass(frozen=True, slots=True)
class Change:
    """A what-if as settings (in the order given, each once), resolved per baseline."""

    values: tuple[Value, ...] = ()

    @property
    def label(self) -> str:
        """``cores=2x,mem=4g``: how the change is written (fleet tables key on it)."""
        return ",".join(f"{v.setting}={v.text}" for v in self.values)

    @property
    def settings(self) -> dict[str, str]:
        return {v.setting: v.text for v in self.values}

    @property
    def is_empty(self) -> bool:
        return not self.values

    @property
    def conf(self) -> dict[str, ConfValue]:
        """The front end's settings it sets (key → parsed value), in the order given."""
        return {v.setting: v.conf for v in self.values if v.conf is not None}

    @property
    def conf_text(self) -> dict[str, str]:
        """The front end's settings it sets, as written."""
        return {v.setting: v.text for v in self.values if v.conf is not None}

    @property
    def resources(self) -> Change:
        """This change without the front end's settings: the resources it sets."""
        return Change(tuple(v for v in self.values if v.conf is None))

    def with_values(self, values: Iterable[Value]) -> Change:
        """This change with ``values`` set on top (a sweep point over fixed options)."""
        merged = {v.setting: v for v in self.values}
        merged.update({v.setting: v for v in values})
        return Change(tuple(merged.values()))

    def rounded(self, base: ClusterConfig) -> list[str]:
        """What a factor of a count made of ``base`` but could not give whole, as the replay
        takes it: ``cores=1.25x`` of 2 cores is 2.5, replayed as 2 (a note, not silence)."""
        counts = _counts(base)
        notes = []
        for v in self.values:
            count = counts.get(v.setting)
            if v.factor is None or v.conf is not None or count is None:
                continue
            wanted = count * v.factor
            taken = _whole(count, v.factor)
            if taken != wanted:
                notes.append(f"{v.setting}={v.text} of {count} is {wanted:g}: replayed as {taken}")
        return notes

    def resolve(self, base: ClusterConfig) -> WhatIf:
        """The resource change this makes to ``base``: factors become absolute values of
        this baseline (bandwidth factors stay factors, as `apply_what_if` scales them)."""
        fields: dict[str, float | int | bool | None] = {}
        for v in self.values:
            if v.conf is None:  # a front end's setting is the facade's to resolve
                fields.update(_resolved(v, base))
        return WhatIf(**fields)  # type: ignore[arg-type]


def _resolved(v: Value, base: ClusterConfig) -> dict[str, float | int | bool | None]:
    key, f = v.setting, v.factor
    if key in ("disk-bw", "net-bw"):
        prefix = key.split("-")[0]
        return {f"{prefix}_bw": v.absolute, f"{prefix}_factor": f}
    if key == "dynamic-allocation":
        return {"dynamic_allocation": bool(v.absolute)}
    if f is None:
        assert v.absolute is not None
        if key == "mem":
            return {"memory_bytes": int(v.absolute)}
        if key == "cpu-speed":
            return {"cpu_speed": float(v.absolute)}
        return {key.replace("-", "_"): int(v.absolute)}
    counts = _counts(base)
    if key in counts:
        return {key.replace("-", "_"): _whole(counts[key], f)}
    if key in _ALLOCATION_FACTORS:
        return {key.replace("-", "_"): _allocation_factor(key, base, f)}
    if key == "mem":
        return {"memory_bytes": max(1, int(base.memory_bytes * f))}
    return {"cpu_speed": base.cpu_speed * f}


def _counts(base: ClusterConfig) -> dict[str, int]:
    """The counts of ``base`` a factor of these settings multiplies."""
    return {
        "cores": base.executors * base.executor_cores,
        "executors": base.executors,
        "executor-cores": base.executor_cores,
        "host-cores": base.host_cores,
    }


def _whole(count: int, factor: float) -> int:
    """A factor of a count as the replay takes it: the nearest whole count, at least 1."""
    return max(1, round(count * factor))


_ALLOCATION_FACTORS = ("min-executors", "max-executors", "initial-executors")


def _allocation_factor(key: str, base: ClusterConfig, f: float) -> int:
    """A factor of the profiled run's allocation limit (``max-executors=2x``). A run that
    set no ``maxExecutors`` (Spark's default: unbounded) or ran static has its executors
    (`ClusterConfig.executors`: the most alive at once) as the maximum a factor scales."""
    a = base.allocation
    if key == "min-executors":
        return max(0, round(a.min_executors * f))
    if key == "initial-executors":
        return max(0, round(a.initial_executors * f))
    cap = a.max_executors if a.enabled and a.bounded else base.executors
    return max(1, round(cap * f))


def change_of(
    values: Mapping[str, str | None], where: str = "", conf: ConfTable | None = None
) -> Change:
    """A change from ``setting → text`` (None: not given), e.g. ``predict``'s options and
    its ``--conf`` settings (read by ``conf``)."""
    parsed: dict[str, Value] = {}
    written: dict[str, str] = {}
    for name, text in values.items():
        if text is None:
            continue
        value = parse_value(name, text, where, conf)
        if value.setting in parsed:  # ``--executors`` and its alias ``--workers``
            raise ConfigError(
                f"--{written[value.setting]} and --{name} set the same thing; give one of them"
            )
        parsed[value.setting], written[value.setting] = value, name
    return Change(tuple(parsed.values()))


def conf_pairs(
    items: Sequence[str], option: str = "--conf", conf: ConfTable | None = None
) -> dict[str, str]:
    """``["spark.sql.shuffle.partitions=64", ...]`` (spark-submit's ``--conf KEY=VALUE``,
    repeatable) → key → value as written; a key given twice is refused, not overridden.
    With ``conf``, a resource's name (``cores=4``) is refused too: it has an option of its
    own, and taken here it would silently win over that option."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise ConfigError(f"{option} {item[:200]!r}: write KEY=VALUE")
        if key in out:
            raise ConfigError(f"{option} sets {key[:200]} twice")
        if conf is not None and not _owned(key, conf) and setting_key(key) in SETTINGS:
            raise ConfigError(
                f"{option} {item[:200]}: {key} is a resource, not a setting of {option}; "
                f"give --{setting_key(key)} {value.strip()[:_SHOWN]}"
            )
        out[key] = value.strip()
    return out


def _owned(name: str, conf: ConfTable | None) -> bool:
    return conf is not None and conf.owns(name.strip())


def is_setting(text: str, conf: ConfTable | None = None) -> bool:
    """True for ``name=value`` with a known setting name (``cores=2``, not ``app.log``), or
    with a name in ``conf``'s namespace (``spark.sql.shuffle.partitions=64``)."""
    name, sep, _ = text.partition("=")
    return bool(sep) and (setting_key(name) in SETTINGS or _owned(name, conf))


def is_change_spec(text: str, conf: ConfTable | None = None) -> bool:
    """True for text that reads as a change (every comma-separated part a setting)."""
    parts = [p for p in text.split(",") if p.strip()]
    return bool(parts) and all(is_setting(p, conf) for p in parts)


def parse_change(text: str, conf: ConfTable | None = None) -> Change:
    """``"cores=2x,mem=0.5x"`` → a `Change` (a fleet scenario); every value checked now.
    ``conf``: the front end's table, for its own settings (``spark.sql.shuffle.partitions=64``)."""
    if len(text) > _MAX_SPEC_CHARS:
        raise ConfigError(f"what-if {text[:_SHOWN]!r}… is over {_MAX_SPEC_CHARS:,} characters")
    values: list[Value] = []
    seen: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        key = name.strip() if _owned(name, conf) else setting_key(name)
        if not sep or not (key in SETTINGS or _owned(key, conf)) or not value.strip():
            raise ConfigError(
                f"cannot read what-if {text[:200]!r}: write NAME=VALUE[,NAME=VALUE] with NAME "
                f"one of {', '.join(SETTINGS)}{_conf_hint(conf)} and VALUE absolute (cores=16, "
                "mem=4g) or a factor (cores=2x, mem=0.5x)"
            )
        if key in seen:
            raise ConfigError(f"what-if {text[:200]!r} sets {key} twice")
        seen.add(key)
        values.append(parse_value(name, value, where="what-if", conf=conf))
    if not values:
        raise ConfigError("an empty what-if: write e.g. cores=2x or mem=0.5x")
    return Change(tuple(values))


def parse_changes(texts: Sequence[str], conf: ConfTable | None = None) -> list[Change]:
    """Changes in the order given, each once (by label)."""
    out: list[Change] = []
    for text in texts:
        change = parse_change(text, conf)
        if change.label not in {c.label for c in out}:
            out.append(change)
    return out


# ------------------------------------------------------------------------------------------
# Sweeps: axes of values, and the grid they span.


@dataclass(frozen=True, slots=True)
class SweepAxis:
    """One axis of a grid: a setting and the values it takes, as written."""

    name: str
    values: tuple[str, ...]


def is_axis_spec(text: str, conf: ConfTable | None = None) -> bool:
    """True for ``name=v1,v2`` with a known setting name (or one of ``conf``'s)."""
    return is_setting(text, conf)


def parse_axes(specs: Sequence[str], conf: ConfTable | None = None) -> list[SweepAxis]:
    """``["cores=1,2,4", "mem=2g,4g"]`` → axes; each value is checked now, not mid-sweep.
    ``conf``: the front end's table, for axes of its settings
    (``spark.sql.shuffle.partitions=16,64,200``)."""
    axes: list[SweepAxis] = []
    seen: set[str] = set()
    for spec in specs:
        if len(spec) > _MAX_SPEC_CHARS:
            raise ConfigError(
                f"--sweep axis {spec[:_SHOWN]!r}… is over {_MAX_SPEC_CHARS:,} characters"
            )
        name, sep, values = spec.partition("=")
        key = name.strip() if _owned(name, conf) else setting_key(name)
        if not sep or not (key in SETTINGS or _owned(key, conf)):
            raise ConfigError(
                f"cannot read sweep axis {spec[:200]!r}: write NAME=V1,V2,... with NAME one of "
                + ", ".join(SETTINGS)
                + _conf_hint(conf)
            )
        if key in seen:
            raise ConfigError(f"sweep axis {key!r} given twice")
        seen.add(key)
        vals = tuple(v.strip() for v in values.split(",") if v.strip())
        if not vals:
            raise ConfigError(f"sweep axis {key!r} has no values")
        if len(vals) > MAX_SWEEP_POINTS:
            raise ConfigError(
                f"sweep axis {key!r} has {len(vals):,} values; a sweep may have at most "
                f"{MAX_SWEEP_POINTS:,} points"
            )
        for v in vals:
            parse_value(name, v, where="--sweep", conf=conf)
        axes.append(SweepAxis(key, vals))
    if not axes:
        raise ConfigError("--sweep needs at least one axis, e.g. --sweep cores=1,2,4,8")
    check_grid(axes)
    return axes


def check_grid(axes: Sequence[SweepAxis]) -> None:
    """Refuse a grid of more than `MAX_SWEEP_POINTS` points before anything runs."""
    points = math.prod(len(axis.values) for axis in axes)
    if points > MAX_SWEEP_POINTS:
        sizes = " × ".join(f"{len(a.values)} {a.name}" for a in axes)
        raise ConfigError(
            f"--sweep has {points:,} points ({sizes}); a sweep may have at most "
            f"{MAX_SWEEP_POINTS:,}: use fewer values per axis"
        )


def sweep_points(
    axes: Sequence[SweepAxis], fixed: Change | None = None, conf: ConfTable | None = None
) -> list[tuple[dict[str, str], Change]]:
    """Every point of the grid (the product of the axes): the axes' values as written, and
    the change they make on top of ``fixed`` (``conf`` reads axes of its settings)."""
    check_grid(axes)
    base = fixed or Change()
    for axis in axes:
        if axis.name in base.settings:
            raise ConfigError(
                f"--sweep {axis.name} and {axis.name}={base.settings[axis.name][:_SHOWN]} "
                "set the same thing: give it once (as an axis, or as a fixed value)"
            )
    points: list[tuple[dict[str, str], Change]] = []
    for combo in itertools.product(*(axis.values for axis in axes)):
        settings = {axis.name: value for axis, value in zip(axes, combo, strict=True)}
        values = [parse_value(k, v, where="--sweep", conf=conf) for k, v in settings.items()]
        points.append((settings, base.with_values(values)))
    return points


# ------------------------------------------------------------------------------------------
# The profiled run's own resources, where its log does not say them.


def baseline_overrides(
    host_cores: int | None = None,
    disk_bw: str | None = None,
    net_bw: str | None = None,
) -> BaselineOverrides:
    """`BaselineOverrides` from options as written (``--baseline-disk-bw 500MB/s``): only
    absolute values, since a factor of an unknown value says nothing."""
    return BaselineOverrides(
        host_cores=host_cores,
        disk_bw=_absolute_bw(disk_bw, "--baseline-disk-bw"),
        net_bw=_absolute_bw(net_bw, "--baseline-net-bw"),
    )


def _absolute_bw(text: str | None, option: str) -> float | None:
    if text is None:
        return None
    if parse_factor(text) is not None:
        raise ConfigError(f"{option} needs an absolute bandwidth such as 500MB/s")
    return parse_bandwidth(text)


def _known(settings: Mapping[str, Setting], conf: ConfTable | None = None) -> str:
    return "known settings are " + ", ".join(settings) + _conf_hint(conf)


def _conf_hint(conf: ConfTable | None) -> str:
    return f", or {conf.hint}" if conf is not None else ""


def _switch(label: str, value: str) -> bool:
    """``on``/``off`` (also true/false, yes/no, 1/0), as Spark's own switches are written."""
    text = value.strip().lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("off", "false", "no", "0"):
        return False
    raise ConfigError(f"{label} takes on or off, not {value[:_SHOWN]!r}")


def _int(label: str, value: str) -> int:
    if len(value) > 30 or not value.strip().lstrip("+-").isdigit():
        raise ConfigError(f"{label}: {value[:_SHOWN]!r} is not a whole number")
    return int(value)


def _float(label: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{label}: {value[:_SHOWN]!r} is not a number") from None
    return number  # its range (finite, positive) is `WhatIf`'s to check, as for every field
