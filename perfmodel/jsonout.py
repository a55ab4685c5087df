"""Strict JSON for every ``--json`` output: scripts parse it with any JSON library.

Python's json writes ``NaN`` and ``Infinity``, which are not JSON. A non-finite figure
means "not known" (a ratio of nothing, a replay that could not run), so it becomes
``null``, the same as any other unknown value.
"""

from __future__ import annotations

import json
import math
from typing import Any, TextIO


def finite(value: Any) -> Any:
    """``value`` with every non-finite float inside it replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, indent: int | None = 2) -> str:
    return json.dumps(finite(value), indent=indent, default=str, allow_nan=False)


def dump(value: Any, out: TextIO, indent: int | None = 2) -> None:
    """Written piece by piece: an indented ``dumps`` of a 6,000-stage diagnosis holds a
    million small strings at once (~90 MB) before it writes any."""
    json.dump(finite(value), out, indent=indent, default=str, allow_nan=False)
    out.write("\n")
