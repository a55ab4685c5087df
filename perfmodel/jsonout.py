"""Strict JSON for every ``--json`` output: scripts parse it with any JSON library.

Python's json writes ``NaN`` and ``Infinity``, which are not JSON. A non-finite figure
means "not known" (a ratio of nothing, a replay that could not run), so it becomes
``null``, the same as any other unknown value.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable
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
    """``value`` as JSON on ``out``, written member by member: the top-level object's
    members, and each item of its lists, are encoded one at a time, so the whole document
    never sits in memory at once (a 95,000-stage diagnosis is ~220 MB of JSON). A
    dataclass is written as `dataclasses.asdict` would make it, without making it."""
    write, flush = _bytes_writer(out)
    if not indent or not (isinstance(value, dict) or _is_dataclass_instance(value)):
        write(encode(value, indent) + b"\n")
    else:
        _dump_members(value, write, indent)
    flush()


def dump_items(items: Iterable[Any], out: TextIO, indent: int = 2) -> None:
    """A JSON array on ``out``, each item written as soon as ``items`` yields it (a sweep's
    points, each a whole prediction): neither the items nor the document are ever all in
    memory. The layout is `dumps`' for the same list."""
    write, flush = _bytes_writer(out)
    pad = b" " * indent
    first = True
    for item in items:
        text = encode(item, indent).replace(b"\n", b"\n" + pad)
        write((b"[\n" if first else b",\n") + pad + text)
        first = False
    write(b"[]\n" if first else b"\n]\n")
    flush()


def _bytes_writer(out: TextIO) -> tuple[Callable[[bytes], object], Callable[[], None]]:
    """Write bytes to ``out``: straight to its binary buffer where it has one (stdout),
    after what was already written to it as text."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        return buffer.write, buffer.flush

    def write(data: bytes) -> None:
        out.write(data.decode())

    return write, lambda: None


def _is_dataclass_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _dump_members(value: Any, write: Callable[[bytes], object], indent: int) -> None:
    if isinstance(value, dict):
        members = list(value.items())
    else:
        members = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    if not members:
        write(b"{}\n")
        return
    pad = b" " * indent
    write(b"{\n")
    for n, (key, member) in enumerate(members):
        write(pad + encode(str(key), None) + b": ")
        if isinstance(member, list | tuple) and member:
            write(b"[\n")
            for i, item in enumerate(member):
                # Raw newlines appear in formatted JSON only between tokens (strings escape
                # theirs), so indenting every line is a plain replace.
                text = encode(item, indent).replace(b"\n", b"\n" + pad + pad)
                write(pad + pad + text + (b",\n" if i < len(member) - 1 else b"\n"))
            write(pad + b"]")
        else:
            write(encode(member, indent).replace(b"\n", b"\n" + pad))
        write(b",\n" if n < len(members) - 1 else b"\n")
    write(b"}\n")
