"""Parsing sizes and bandwidths the way Spark users write them.

Users type what they type in ``spark-submit`` (``--executor-memory 7g``) and what disk and
network vendors print (``500MB/s``, ``10Gbit/s``), so both conventions are accepted:
memory sizes use Spark's binary units (``1g`` = 2^30 bytes; ``512b`` is bytes, as Spark
reads it; a bare number is MiB, as in ``spark.executor.memory``); bandwidths use the decimal
SI units vendors use (``1GB/s`` = 10^9 bytes/s), with a lower-case ``b``/``bit`` meaning bits
and an upper-case ``B``/``byte`` meaning bytes.
"""

from __future__ import annotations

import math
import re

from perfmodel.errors import PerfmodelError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgtp])(?:i?b)?|(b))?\s*$", re.IGNORECASE)
"""A number, then a binary prefix with an optional ``b``/``ib`` (``4g``, ``4gb``, ``4GiB``), or
a lone ``b`` for bytes, or nothing (MiB)."""
_SIZE_UNIT = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_BARE_SIZE_UNIT = 1 << 20

_BW = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?)(bits?|[Bb]ytes?|b|B)\s*(/\s*s|ps|/sec)?\s*$",
)
_BW_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BW_BINARY = {"": 1.0, "k": 2.0**10, "m": 2.0**20, "g": 2.0**30, "t": 2.0**40}


_MAX_SIZE = float(1 << 60)
_MAX_SHOWN = 40


def _shown(text: str) -> str:
    """The user's text for a message, cut so a 400-digit number stays readable."""
    return repr(text) if len(text) <= _MAX_SHOWN else repr(text[:_MAX_SHOWN] + "…")


class UnitError(PerfmodelError, ValueError):
    """A size, bandwidth or factor that cannot be read; the message says what is accepted."""


def parse_size(text: str) -> int:
    """Bytes of a memory size: ``7g``, ``512m``, ``1.5G``, ``2048`` (MiB), ``4gb``, ``4GiB``,
    ``512b`` (bytes).

    A lone ``b`` is bytes, as in Spark's ``spark.executor.memory``: read as MiB, ``--mem 1b``
    was a MiB of memory while ``--mem 1k`` was refused as too small.
    """
    m = _SIZE.match(text)
    if m is None:
        raise UnitError(
            f"cannot read memory size {_shown(text)}: write it as Spark does, e.g. 7g, 512m, "
            "2048 (MiB)"
        )
    number, prefix, in_bytes = m.groups()
    scale = _SIZE_UNIT[prefix.lower()] if prefix else 1 if in_bytes else _BARE_SIZE_UNIT
    value = float(number) * scale
    # At least a byte: ``0.5b`` would otherwise round down to a size of 0.
    if not 1 <= value < _MAX_SIZE:
        raise UnitError(f"memory size {_shown(text)} must be at least 1b and below 1024p")
    return int(value)


def parse_bandwidth(text: str) -> float:
    """Bytes per second of a bandwidth: ``500MB/s``, ``10Gbit/s``, ``1Gbps``, ``200MiB/s``.

    The unit is required (a bare number is ambiguous between bits and bytes). ``b``, ``bit``
    and ``bps`` are bits; ``B`` and ``byte`` are bytes.
    """
    m = _BW.match(text)
    if m is None:
        raise UnitError(
            f"cannot read bandwidth {_shown(text)}: give a unit, e.g. 500MB/s, 10Gbit/s, 1Gbps, 2x"
        )
    number, prefix, binary, unit, _per = m.groups()
    scale = (_BW_BINARY if binary else _BW_PREFIX)[prefix.lower()]
    is_bits = unit.startswith("bit") or unit == "b"
    value = float(number) * scale / (8.0 if is_bits else 1.0)
    if not 0 < value < math.inf:
        raise UnitError(f"bandwidth {_shown(text)} must be positive and finite")
    return value


def parse_factor(text: str) -> float | None:
    """A relative factor written ``2x``/``0.5x`` (None when the text is not one)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*[x×]\s*", text)
    if m is None:
        return None
    value = float(m.group(1))
    if not 0 < value < math.inf:
        raise UnitError(f"factor {_shown(text)} must be positive and finite")
    return value


def format_size(n_bytes: float) -> str:
    """Spark-style size for output (``7g``, ``512m``), exact where possible."""
    for unit, scale in (("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if n_bytes >= scale:
            value = n_bytes / scale
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.2f}{unit}"
    return f"{n_bytes:.0f}b"


def format_bandwidth(bytes_per_s: float) -> str:
    """Bandwidth for output in bytes (``500MB/s``) — the unit people compare disks in."""
    for unit, scale in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bytes_per_s >= scale:
            return f"{bytes_per_s / scale:.3g}{unit}"
    return f"{bytes_per_s:.3g}B/s"


def format_share(x: float) -> str:
    """A share or relative error for tables (``9.1%``), "n/a" where there is none (NaN)."""
    return "n/a" if x != x else f"{100 * x:.1f}%"
