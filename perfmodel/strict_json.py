"""JSON that every parser accepts: ``--json`` output never holds ``NaN`` or ``Infinity``.

Python's `json` writes non-finite floats as the bare words ``NaN`` and ``Infinity``, which
are not JSON: ``jq`` and most other parsers reject the whole document. A non-finite number
in a result means "no value" (an empty ratio, a replay that could not run), so it is written
as ``null``, and ``allow_nan=False`` guards that nothing slipped through.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (at any depth) replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps` of ``value`` as strict JSON (non-finite floats become ``null``)."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
