"""Strict JSON for every ``--json`` output: scripts parse it with any JSON library.

Python's json writes ``NaN`` and ``Infinity``, which are not JSON. A non-finite figure
means "not known" (a ratio of nothing, a replay that could not run), so it becomes
``null``, the same as any other unknown value.
"""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

import msgspec


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


def builtin(value: Any) -> Any:
    """What json's ``default=str`` would write for a value msgspec has no rule for; float
    subclasses (numpy's float64) stay numbers, as json keeps them."""
    if isinstance(value, float):
        return float(value)
    return str(value)


def encode(value: Any, indent: int | None = 2) -> bytes:
    """``dumps`` as UTF-8 bytes, made in C: on a 6,000-stage diagnosis (14 MB of JSON)
    Python's indented encoder, which runs in Python, took ~1.3 s. msgspec writes
    non-finite floats as ``null`` itself and leaves non-ASCII text unescaped (still JSON)."""
    raw = msgspec.json.encode(value, enc_hook=builtin)
    return msgspec.json.format(raw, indent=indent) if indent else raw


def dump(value: Any, out: TextIO, indent: int | None = 2) -> None:
    """Written as one buffer of bytes (pieces from Python's encoder were ~90 MB at once)."""
    data = encode(value, indent)
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        buffer.write(data)
        buffer.write(b"\n")
        buffer.flush()
    else:
        out.write(data.decode())
        out.write("\n")
