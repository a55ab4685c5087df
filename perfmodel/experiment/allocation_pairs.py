"""Which study pairs differ in dynamic allocation, and the what-if that expresses them.

A spec's configurations set dynamic allocation through Spark settings (``conf``):
``spark.dynamicAllocation.enabled``, ``minExecutors``, ``maxExecutors``,
``initialExecutors`` and ``shuffleTracking.enabled``. Two configurations that differ only
there (and in what the other what-ifs change) are a predictable pair: the target's
allocation becomes a `perfmodel.simulate.config.WhatIf` (``dynamic_allocation``,
``min/max/initial_executors``; a static target keeps a fixed executor count). Other
allocation settings (timeouts) are not a what-if: configurations differing in them are not
paired.
"""

from __future__ import annotations

from typing import Any

from perfmodel.simulate.allocation_settings import read_settings
from perfmodel.simulate.config import MAX_EXECUTORS

EXPRESSED = frozenset(
    {
        "spark.dynamicAllocation.enabled",
        "spark.dynamicAllocation.minExecutors",
        "spark.dynamicAllocation.maxExecutors",
        "spark.dynamicAllocation.initialExecutors",
        "spark.dynamicAllocation.shuffleTracking.enabled",
    }
)
"""Settings the allocation what-if expresses (shuffle tracking: needed to run without an
external shuffle service; the replay reads it from each run's own log)."""
DYNAMIC_ALLOCATION = "dynamic allocation"
"""The what-if kind of pairs that differ in dynamic allocation (static ↔ dynamic, limits)."""


def _conf(settings: dict[str, Any]) -> dict[str, str]:
    conf = settings.get("conf") or {}
    return {str(k): str(v) for k, v in dict(conf).items()}


def without_allocation(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with the allocation settings the what-if expresses taken out of its
    ``conf`` (what two configurations must share to be a predictable pair)."""
    conf = {k: v for k, v in _conf(settings).items() if k not in EXPRESSED}
    return {**settings, "conf": conf}


def _policy(settings: dict[str, Any]) -> tuple[bool, int, int | None, int | None]:
    """(enabled, min, max or None when unbounded, initialExecutors or None when unset)."""
    s = read_settings(_conf(settings), "", "spark://")
    if not s.enabled:
        return False, 0, None, None
    return True, s.min_executors, s.max_executors if s.bounded else None, s.initial_setting


def differs(base: dict[str, Any], target: dict[str, Any]) -> bool:
    """Whether two run configurations differ in dynamic allocation or its limits."""
    return _policy(base) != _policy(target)


def what_if_fields(base: dict[str, Any], target: dict[str, Any]) -> dict[str, Any] | None:
    """The `WhatIf` fields moving ``base``'s allocation to ``target``'s; None where the
    pair does not differ in allocation (the caller's cores what-if applies as before).

    A static target keeps the executor count the caller's cores what-if gives it (one
    per one-core worker); a dynamic one gets the target's limits, each stated (an unset
    maximum is the largest the what-if takes)."""
    if not differs(base, target):
        return None
    enabled, minimum, maximum, initial = _policy(target)
    if not enabled:
        return {"dynamic_allocation": False}
    return {
        "dynamic_allocation": True,
        "min_executors": minimum,
        "max_executors": maximum if maximum is not None else MAX_EXECUTORS,
        "initial_executors": initial,
    }


__all__ = ["DYNAMIC_ALLOCATION", "EXPRESSED", "differs", "what_if_fields", "without_allocation"]
