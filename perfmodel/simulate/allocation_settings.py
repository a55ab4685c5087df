"""Spark's dynamic allocation settings: what a log says, Spark's defaults, a what-if on them.

With ``spark.dynamicAllocation.enabled`` the executors are an outcome of the run, decided
by a handful of ``spark.dynamicAllocation.*`` settings. They belong to a configuration
(`perfmodel.simulate.config.ClusterConfig.allocation`) as the executor count does, so they
are read here on their own, each with its source, apart from the policy that acts on them
(`perfmodel.simulate.allocation`):

- `AllocationSettings`: the policy's settings (all times in ms);
- `read_settings`: from the log's Spark properties, Spark's default where unset or
  unreadable (the source says which), local mode never allocating;
- `change_settings`: a what-if on them (``--dynamic-allocation``, ``--min-executors``,
  ``--max-executors``, ``--initial-executors``), refusing what Spark refuses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from perfmodel.errors import PerfmodelError

INT_MAX = 2**31 - 1
"""Spark's default ``maxExecutors`` (Int.MaxValue): no cap of its own."""
EXECUTOR_CAP = 100_000
"""The most executors a log's settings are taken to ask for at once (the what-if's own
limit, `perfmodel.simulate.config.MAX_EXECUTORS`): the replay keeps state per executor,
so a typing mistake in a log (``initialExecutors=1e9``) must not size it."""
INF = math.inf


class AllocationError(PerfmodelError, ValueError):
    """Allocation settings or a backlog that cannot be replayed; the message says why."""


@dataclass(frozen=True, slots=True)
class AllocationSettings:
    """The dynamic allocation policy of one configuration (all times in ms).

    ``initial_executors`` is what Spark starts with: the largest of ``minExecutors``,
    ``initialExecutors`` and ``spark.executor.instances`` (Spark's
    ``getDynamicAllocationInitialExecutors``), kept within ``max_executors``.
    """

    enabled: bool = False
    min_executors: int = 0
    max_executors: int = INT_MAX
    initial_setting: int | None = None
    """``spark.dynamicAllocation.initialExecutors`` as set (None: unset, i.e. the minimum)."""
    instances: int = 0
    """``spark.executor.instances`` (0 unset): with dynamic allocation, a floor of the start."""
    backlog_timeout_ms: float = 1000.0
    sustained_backlog_timeout_ms: float = 1000.0
    idle_timeout_ms: float = 60_000.0
    cached_idle_timeout_ms: float = INF
    shuffle_tracking: bool = False
    """Whether executors holding shuffle files are kept (``shuffleTracking.enabled`` and no
    external shuffle service, as Spark's ExecutorMonitor decides)."""
    shuffle_timeout_ms: float = INF
    allocation_ratio: float = 1.0
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def initial_executors(self) -> int:
        initial = self.initial_setting if self.initial_setting is not None else 0
        return min(max(self.min_executors, initial, self.instances), self.max_executors)

    @property
    def bounded(self) -> bool:
        """Whether ``maxExecutors`` caps the executors (Spark's default does not)."""
        return self.max_executors < INT_MAX

    def describe(self) -> str:
        """A short line for the user: the limits that shape the executor timeline."""
        cap = f"max {self.max_executors}" if self.bounded else "no max"
        return (
            f"dynamic allocation: min {self.min_executors}, {cap}, initial "
            f"{self.initial_executors}, idle timeout {self.idle_timeout_ms / 1000:g} s"
        )

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (the ``dynamic_allocation`` object of ``predict --json``)."""
        return {
            "enabled": self.enabled,
            "min_executors": self.min_executors,
            "max_executors": self.max_executors if self.bounded else None,
            "initial_executors": self.initial_executors,
            "scheduler_backlog_timeout_ms": self.backlog_timeout_ms,
            "sustained_scheduler_backlog_timeout_ms": self.sustained_backlog_timeout_ms,
            "executor_idle_timeout_ms": self.idle_timeout_ms,
            "cached_executor_idle_timeout_ms": _finite(self.cached_idle_timeout_ms),
            "shuffle_tracking": self.shuffle_tracking,
            "shuffle_tracking_timeout_ms": _finite(self.shuffle_timeout_ms),
            "executor_allocation_ratio": self.allocation_ratio,
            "sources": dict(self.sources),
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


_PREFIX = "spark.dynamicAllocation."
_TIME = re.compile(r"^\s*(-?\d+)\s*(us|ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_TIME_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "min": 60e3, "h": 3.6e6, "d": 8.64e7}
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
_LOCAL = re.compile(r"^local(\[.*\])?$")


def _version(text: str) -> tuple[int, int] | None:
    m = _VERSION.match(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def read_settings(
    properties: Mapping[str, str], spark_version: str = "", master: str = ""
) -> AllocationSettings:
    """The policy the logged application ran with (or would run with once enabled).

    Unset keys take Spark's defaults; an unreadable value (which Spark would have refused
    at start) takes the default too, and its source says so. Local mode never allocates
    (Spark ignores the setting there; ``local-cluster`` does allocate)."""
    src: dict[str, str] = {}
    reader = _Reader(properties, src)
    on = reader.boolean("enabled", False)
    local = bool(_LOCAL.match(master.replace(" ", "")))
    enabled = on and not local
    src["enabled"] = (
        "log: spark.dynamicAllocation.enabled=true, ignored by Spark in local mode"
        if on and local
        else reader.source("enabled")
    )
    minimum = reader.integer("minExecutors", 0, low=0)
    maximum = reader.integer("maxExecutors", INT_MAX, low=1, default_text="unbounded")
    initial = reader.optional_integer("initialExecutors", low=0)
    instances = _non_negative_int(properties.get("spark.executor.instances"))
    src["instances"] = (
        "log: spark.executor.instances" if instances is not None else "Spark default: unset"
    )
    if minimum > EXECUTOR_CAP:
        src["min_executors"] += f" (taken as {EXECUTOR_CAP:,}, the most the replay holds)"
        minimum = EXECUTOR_CAP
    if initial is not None and initial > EXECUTOR_CAP:
        src["initial_setting"] += f" (taken as {EXECUTOR_CAP:,}, the most the replay holds)"
        initial = EXECUTOR_CAP
    if instances is not None and instances > EXECUTOR_CAP:
        src["instances"] += f" (taken as {EXECUTOR_CAP:,}, the most the replay holds)"
        instances = EXECUTOR_CAP
    backlog = reader.duration("schedulerBacklogTimeout", 1000.0, unit_ms=1e3)
    sustained = reader.duration("sustainedSchedulerBacklogTimeout", backlog, unit_ms=1e3)
    if "sustainedSchedulerBacklogTimeout" not in reader.read:
        src["sustained_backlog_timeout_ms"] = "Spark default: schedulerBacklogTimeout"
    idle = reader.duration("executorIdleTimeout", 60_000.0, unit_ms=1e3)
    cached = reader.duration("cachedExecutorIdleTimeout", INF, unit_ms=1e3, default_text="never")
    version = _version(spark_version)
    tracking_default = version is not None and version >= (3, 4)
    tracking = reader.boolean(
        "shuffleTracking.enabled",
        tracking_default,
        default_text=(
            "Spark ≥ 3.4 default: true (SPARK-39846)"
            if tracking_default
            else "Spark default before 3.4: false"
        ),
    )
    service = str(properties.get("spark.shuffle.service.enabled", "")).strip().lower() == "true"
    if tracking and service:
        src["shuffle_tracking"] = (
            "log: spark.shuffle.service.enabled=true (the external service keeps shuffle "
            "files, so executors holding them may go)"
        )
    shuffle_timeout = reader.duration(
        "shuffleTracking.timeout", INF, unit_ms=1.0, default_text="never"
    )
    ratio = reader.ratio("executorAllocationRatio", 1.0)
    if minimum > maximum:
        src["min_executors"] += f" (above maxExecutors {maximum}: Spark refuses it; capped)"
        minimum = maximum
    settings = AllocationSettings(
        enabled=enabled,
        min_executors=minimum,
        max_executors=maximum,
        initial_setting=initial,
        instances=instances or 0,
        backlog_timeout_ms=backlog,
        sustained_backlog_timeout_ms=sustained,
        idle_timeout_ms=idle,
        cached_idle_timeout_ms=cached,
        shuffle_tracking=tracking and not service,
        shuffle_timeout_ms=shuffle_timeout,
        allocation_ratio=ratio,
        sources=src,
    )
    src["initial_executors"] = _initial_source(settings)
    return settings


def _initial_source(s: AllocationSettings) -> str:
    parts = [f"minExecutors {s.min_executors}"]
    parts.append(
        f"initialExecutors {s.initial_setting}"
        if s.initial_setting is not None
        else "initialExecutors unset"
    )
    parts.append(f"spark.executor.instances {s.instances}" if s.instances else "instances unset")
    capped = (
        f", capped at maxExecutors {s.max_executors}"
        if max(s.min_executors, s.initial_setting or 0, s.instances) > s.max_executors
        else ""
    )
    return f"the largest of {', '.join(parts)} (Spark's rule){capped}"


def _non_negative_int(text: object) -> int | None:
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


class _Reader:
    """Reads ``spark.dynamicAllocation.*`` keys, recording each value's source."""

    _FIELD = {
        "enabled": "enabled",
        "minExecutors": "min_executors",
        "maxExecutors": "max_executors",
        "initialExecutors": "initial_setting",
        "schedulerBacklogTimeout": "backlog_timeout_ms",
        "sustainedSchedulerBacklogTimeout": "sustained_backlog_timeout_ms",
        "executorIdleTimeout": "idle_timeout_ms",
        "cachedExecutorIdleTimeout": "cached_idle_timeout_ms",
        "shuffleTracking.enabled": "shuffle_tracking",
        "shuffleTracking.timeout": "shuffle_timeout_ms",
        "executorAllocationRatio": "allocation_ratio",
    }

    def __init__(self, props: Mapping[str, str], src: dict[str, str]) -> None:
        self.props = props
        self.src = src
        self.read: set[str] = set()

    def source(self, key: str) -> str:
        return self.src[self._FIELD[key]]

    def _raw(self, key: str) -> str | None:
        value = self.props.get(_PREFIX + key)
        return None if value is None or not str(value).strip() else str(value).strip()

    def _set(self, key: str, text: str) -> None:
        self.src[self._FIELD[key]] = text

    def _given(self, key: str, raw: str) -> None:
        self.read.add(key)
        self._set(key, f"log: {_PREFIX}{key}={raw}")

    def _default(self, key: str, shown: str, raw: str | None) -> None:
        if raw is None:
            self._set(key, f"Spark default: {shown}")
        else:
            self._set(key, f"log: {_PREFIX}{key}={raw!r} unreadable; Spark default {shown} used")

    def boolean(self, key: str, default: bool, default_text: str = "") -> bool:
        raw = self._raw(key)
        if raw is not None and raw.lower() in ("true", "false"):
            self._given(key, raw)
            return raw.lower() == "true"
        self._default(key, default_text or str(default).lower(), raw)
        return default

    def integer(self, key: str, default: int, low: int, default_text: str = "") -> int:
        raw = self._raw(key)
        value = _non_negative_int(raw) if raw is not None else None
        if value is not None and value >= low:
            self._given(key, raw or "")
            return min(value, INT_MAX)
        self._default(key, default_text or str(default), raw)
        return default

    def optional_integer(self, key: str, low: int) -> int | None:
        raw = self._raw(key)
        value = _non_negative_int(raw) if raw is not None else None
        if value is not None and value >= low:
            self._given(key, raw or "")
            return value
        self._default(key, "minExecutors", raw)
        return None

    def duration(self, key: str, default: float, unit_ms: float, default_text: str = "") -> float:
        raw = self._raw(key)
        if raw is not None:
            m = _TIME.match(raw)
            if m and int(m.group(1)) >= 0:
                unit = m.group(2)
                self._given(key, raw)
                scale = _TIME_UNITS_MS[unit.lower()] if unit else unit_ms
                value = int(m.group(1)) * scale
                # Spark's "never" defaults are Integer.MAX_VALUE s and Long.MAX_VALUE ms.
                return INF if value >= INT_MAX * 1e3 else value
        shown = default_text or (f"{default / 1000:g}s" if math.isfinite(default) else "never")
        self._default(key, shown, raw)
        return default

    def ratio(self, key: str, default: float) -> float:
        raw = self._raw(key)
        try:
            value = float(raw) if raw is not None else math.nan
        except ValueError:
            value = math.nan
        if 0.0 < value <= 1.0:
            self._given(key, raw or "")
            return value
        self._default(key, f"{default:g}", raw)
        return default


def change_settings(
    base: AllocationSettings,
    *,
    enabled: bool | None = None,
    min_executors: int | None = None,
    max_executors: int | None = None,
    initial_executors: int | None = None,
) -> AllocationSettings:
    """``base`` with a what-if applied (None keeps a value); the sources say what changed.

    Raises `AllocationError` for a combination Spark refuses (min above max) or that
    cannot start as asked (initial outside [min, max])."""
    src = dict(base.sources)
    new = base
    if enabled is not None and enabled != base.enabled:
        new = replace(new, enabled=enabled)
        src["enabled"] = "what-if"
    if min_executors is not None:
        new = replace(new, min_executors=min_executors)
        src["min_executors"] = "what-if"
    if max_executors is not None:
        new = replace(new, max_executors=max_executors)
        src["max_executors"] = "what-if"
    if initial_executors is not None:
        new = replace(new, initial_setting=initial_executors, instances=0)
        src["initial_executors"] = "what-if"
    if new.min_executors > new.max_executors:
        raise AllocationError(
            f"the minimum executors ({new.min_executors}) are above the maximum "
            f"({new.max_executors}): Spark refuses that"
        )
    if initial_executors is not None and not (
        new.min_executors <= initial_executors <= new.max_executors
    ):
        raise AllocationError(
            f"--initial-executors {initial_executors} must lie between the minimum "
            f"({new.min_executors}) and the maximum ({new.max_executors}) executors"
        )
    if src.get("initial_executors") != "what-if":
        src["initial_executors"] = _initial_source(new)
    return replace(new, sources=src)


__all__ = [
    "EXECUTOR_CAP",
    "INT_MAX",
    "AllocationError",
    "AllocationSettings",
    "change_settings",
    "read_settings",
]
