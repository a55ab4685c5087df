"""Every JSON field the event parser reads, found from its msgspec schemas, and lines with
one of them given a value of the wrong JSON type.

Deriving the fields from `perfmodel.spark.events` (not from a hand-written list)
means a field added to the parser is fuzzed from then on.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from msgspec import inspect as mi

from perfmodel.spark import events as ev

Path = tuple[str | int, ...]


def _struct_of(t: mi.Type) -> mi.StructType | None:
    for member in getattr(t, "types", (t,)):
        if isinstance(member, mi.StructType):
            return member
    return None


def _list_item(t: mi.Type) -> mi.Type | None:
    for member in getattr(t, "types", (t,)):
        if isinstance(member, mi.ListType):
            return member.item_type
    return None


def _is_any(t: mi.Type) -> bool:
    return any(isinstance(m, mi.AnyType) for m in getattr(t, "types", (t,)))


def read_paths(value: Any, schema: mi.StructType, prefix: Path = ()) -> list[Path]:
    """Paths in ``value`` (a decoded event) of every field ``schema`` reads with a type."""
    out: list[Path] = []
    if not isinstance(value, dict):
        return out
    for field in schema.fields:
        key = field.encode_name
        if key not in value or key == "Event" or _is_any(field.type):
            continue
        here = (*prefix, key)
        out.append(here)
        child = value[key]
        nested = _struct_of(field.type)
        if nested is not None:
            out.extend(read_paths(child, nested, here))
        item = _list_item(field.type)
        if item is not None and isinstance(child, list):
            inner = _struct_of(item)
            for n, element in enumerate(child[:3]):
                out.append((*here, n))
                if inner is not None:
                    out.extend(read_paths(element, inner, (*here, n)))
    return out


def wrong_value(value: Any) -> Any:
    """A value of another JSON type than ``value`` (never null: many fields may be null)."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 7
    if isinstance(value, int | float):
        return "seven"
    if isinstance(value, list):
        return {"not": "a list"}
    if value is None:  # a null optional value: an object is wrong for all but objects
        return {"not": "expected"}
    return ["not", "an object"]


def _set(doc: Any, path: Path, value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


def wrong_type_mutations(line: bytes, index: int) -> list[tuple[int, bytes]]:
    """``(index, damaged line)`` for every field of ``line`` the parser reads."""
    try:
        event = json.loads(line)
    except ValueError:
        return []
    cls = ev.EVENT_TYPES.get(event.get("Event", "")) if isinstance(event, dict) else None
    if cls is None:
        return []
    schema = mi.type_info(cls)
    assert isinstance(schema, mi.StructType)
    out = []
    for path in read_paths(event, schema):
        damaged = json.loads(line)
        _get = damaged
        for step in path:
            _get = _get[step]
        _set(damaged, path, wrong_value(_get))
        text = json.dumps(damaged, separators=(",", ":")).encode()
        try:
            msgspec.json.Decoder(cls).decode(text)
        except msgspec.ValidationError:
            out.append((index, text))  # only damage the parser really refuses
    return out
