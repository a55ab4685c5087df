"""Running one command's analysis with Python's cycle collector off.

A command that analyses one log (diagnose, predict, report, recommend) builds a profile of
hundreds of thousands of objects and then walks it; it makes no cyclic garbage worth
collecting (what it drops is freed by reference counting). With the collector on, every
collection walks the whole growing profile again: 0.2 s of a 1.6 s `diagnose` of a
6,000-stage log, more than the pauses around ingest and replay save (`gc_paused`), since
the first collection after each pause walks every object allocated during it. The
collector comes back on only after the command's own objects are gone, so it has nothing
left to walk; a library caller (the fleet engine, a notebook) is unaffected.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def without_cycle_collector(run: Callable[[], T]) -> T:
    """``run()`` with the cycle collector off. Its locals (the loaded profile, the analysis)
    are freed when it returns, before the collector is enabled again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return run()
    finally:
        if was_enabled:
            gc.enable()
