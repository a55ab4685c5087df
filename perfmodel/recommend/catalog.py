"""The machine catalog: one CSV row per VM type, parsed and checked with msgspec.

A recommendation is only as good as the prices and speeds it is fed, so every row says
where its figures came from (``source``) and when they applied (``as_of``), and a bad row
is refused with its row number and column rather than silently skipped. The format is
documented in docs/recommend.md.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import msgspec

from perfmodel.errors import PerfmodelError

COLUMNS: tuple[str, ...] = (
    "vm_type",
    "provider",
    "vcpu",
    "memory_gib",
    "network_gbps",
    "disk_mbps",
    "cpu_speed",
    "price_per_hour",
    "billing_granularity_s",
    "min_billing_s",
    "region",
    "source",
    "as_of",
)
"""The catalog's columns, all required, in the documented order (any order is accepted)."""

GIB = 1 << 30

# Every number has a finite range, far beyond any real machine but short of infinity: a price
# of ``inf`` would make every configuration cost "$inf", a speed of 1e-300 would overflow the
# replay. Names are one line of printable characters (a newline in a quoted cell would split
# the text reports and the JSON consumers' tables).
_YEAR_S = 366 * 86_400
_Name = Annotated[
    str, msgspec.Meta(min_length=1, max_length=100, pattern=r"\A[A-Za-z0-9._:/+-]+\Z")
]
_Text = Annotated[
    str, msgspec.Meta(min_length=1, max_length=1000, pattern=r"\A[^\x00-\x1f\x7f]+\Z")
]


class CatalogError(PerfmodelError):
    """A catalog that cannot be used; the message names the file, row and column."""


class MachineType(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One VM type: its size, speed, bandwidths and price (a catalog row)."""

    vm_type: _Name
    provider: _Name
    vcpu: Annotated[int, msgspec.Meta(ge=1, le=4096)]
    memory_gib: Annotated[float, msgspec.Meta(gt=0, le=1e6)]
    network_gbps: Annotated[float, msgspec.Meta(gt=0, le=1e5)]
    """Per-VM network bandwidth (the provider's headline figure, Gbit/s)."""
    disk_mbps: Annotated[float, msgspec.Meta(gt=0, le=1e7)]
    """Local (or attached-volume) disk bandwidth of one VM, MB/s (10^6 bytes/s)."""
    cpu_speed: Annotated[float, msgspec.Meta(ge=1e-3, le=1e3)]
    """Per-core speed relative to the catalog's reference (1.0); only ratios are used."""
    price_per_hour: Annotated[float, msgspec.Meta(ge=0, le=1e6)]
    """On-demand USD per VM-hour."""
    billing_granularity_s: Annotated[int, msgspec.Meta(ge=1, le=_YEAR_S)]
    min_billing_s: Annotated[int, msgspec.Meta(ge=0, le=_YEAR_S)]
    region: _Text
    source: _Text
    as_of: dt.date

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * GIB)

    @property
    def disk_bw(self) -> float:
        """Bytes per second."""
        return self.disk_mbps * 1e6

    @property
    def net_bw(self) -> float:
        """Bytes per second."""
        return self.network_gbps * 1e9 / 8


def parse_catalog(path: str | Path) -> list[MachineType]:
    """Every row of a catalog CSV; the first bad row ends with an error naming it."""
    p = Path(path)
    _check_file(p)
    try:
        text = p.read_text(encoding="utf-8-sig")  # Excel starts its CSV with a byte-order mark
    except FileNotFoundError:
        raise CatalogError(f"{p}: no such catalog file (see docs/recommend.md)") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{p}: not a UTF-8 CSV file ({exc.reason})") from None
    return parse_catalog_text(text, str(p))


MAX_CATALOG_BYTES = 64 << 20
"""Largest catalog read: every VM type of every cloud region is a few MB of CSV."""


def _check_file(p: Path) -> None:
    """A catalog is a regular file of a sane size: a device or a FIFO would be read forever."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise CatalogError(f"{p}: no such catalog file (see docs/recommend.md)") from None
    except OSError as exc:
        raise CatalogError(f"{p}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise CatalogError(f"{p}: not a regular file (a catalog is a CSV file)")
    if st.st_size > MAX_CATALOG_BYTES:
        raise CatalogError(
            f"{p}: {st.st_size:,} bytes, far larger than any machine catalog "
            f"(at most {MAX_CATALOG_BYTES >> 20} MiB is read)"
        )


def parse_catalog_text(text: str, name: str = "catalog") -> list[MachineType]:
    """As `parse_catalog`, from the CSV's text (lines starting with ``#`` are comments)."""
    # Lines keep their ends, so a newline inside a quoted cell stays in the cell (and is
    # refused by the column's pattern) instead of vanishing between two lines.
    lines = [ln for ln in text.splitlines(keepends=True) if not ln.lstrip().startswith("#")]
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        raise CatalogError(f"{name}: empty catalog (the first line must be the header)")
    header = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in header]
    unknown = [h for h in header if h not in COLUMNS]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown column(s) {', '.join(unknown)}")
        raise CatalogError(f"{name}: header: {'; '.join(parts)} (columns: {', '.join(COLUMNS)})")
    machines: list[MachineType] = []
    seen: dict[str, int] = {}
    for row_number, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise CatalogError(
                f"{name}: row {row_number}: {len(cells)} cells, the header has {len(header)}"
            )
        raw = {h: c.strip() for h, c in zip(header, cells, strict=True)}
        machine = _row(raw, name, row_number)
        if machine.vm_type in seen:
            raise CatalogError(
                f"{name}: row {row_number}, column vm_type: {machine.vm_type!r} already "
                f"given in row {seen[machine.vm_type]}"
            )
        seen[machine.vm_type] = row_number
        machines.append(machine)
    if not machines:
        raise CatalogError(f"{name}: the catalog has a header but no machine rows")
    return machines


def _row(raw: dict[str, str], name: str, row_number: int) -> MachineType:
    values: dict[str, object] = dict(raw)
    for column in ("vcpu", "billing_granularity_s", "min_billing_s"):
        values[column] = _number(raw[column], int, name, row_number, column)
    for column in ("memory_gib", "network_gbps", "disk_mbps", "cpu_speed", "price_per_hour"):
        values[column] = _number(raw[column], float, name, row_number, column)
    try:
        return msgspec.convert(values, MachineType)
    except msgspec.ValidationError as exc:
        column, reason = _split_validation(str(exc))
        if "matching regex" in reason:
            reason = (
                "use letters, digits and . _ : / + - only"
                if column in ("vm_type", "provider")
                else "write one line of printable text (no newline or control character)"
            )
        raise CatalogError(
            f"{name}: row {row_number}, column {column}: {reason} (got {raw.get(column, '')!r})"
        ) from None


def _number(text: str, kind: type, name: str, row_number: int, column: str) -> object:
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise CatalogError(
            f"{name}: row {row_number}, column {column}: expected {what}, got {text!r}"
        ) from None


def _split_validation(message: str) -> tuple[str, str]:
    """msgspec's "reason - at `$.column`" → (column, reason)."""
    m = re.match(r"^(.*) - at `\$\.(\w+)`$", message)
    if m is None:
        return "?", message
    return m.group(2), m.group(1)


def find_machine(machines: Sequence[MachineType], vm_type: str) -> MachineType:
    """The catalog row named ``vm_type``; the error lists a few names that exist."""
    for m in machines:
        if m.vm_type == vm_type:
            return m
    names = ", ".join(m.vm_type for m in machines[:8])
    more = f" and {len(machines) - 8} more" if len(machines) > 8 else ""
    raise CatalogError(f"--baseline-machine {vm_type!r} is not in the catalog ({names}{more})")
