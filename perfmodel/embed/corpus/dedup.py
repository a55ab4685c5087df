"""Remove duplicate functions so the same code cannot sit in train and test.

JDK and library code repeats itself: overloads that forward, copies in parallel class
hierarchies (``HeapByteBuffer``/``DirectByteBuffer``), vendored modules. Two functions
are duplicates when their bodies are equal after removing whitespace and comments (for
tiny bodies the signature is included, since ``{ return impl.x(); }`` is common). The
first in (qualified name, path) order is kept; a group whose members carry different
labels is dropped entirely, since the label is then a property of the caller, not the code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|#[^\n]*", re.S)
_SMALL_BODY = 40


@dataclass(frozen=True)
class DedupResult:
    kept: list[int]
    duplicates: int
    conflicting: int


def body_key(signature: str, body: str, name: str) -> str:
    """Hash identifying a function's code for duplicate detection."""
    norm = re.sub(r"\s+", "", _COMMENT.sub("", body))
    if len(norm) < _SMALL_BODY:
        norm = name + "|" + re.sub(r"\s+", "", signature) + "|" + norm
    return hashlib.sha1(norm.encode("utf-8", "replace")).hexdigest()


def dedup(
    keys: Sequence[str], labels: Sequence[str], order: Sequence[tuple[str, str]]
) -> DedupResult:
    """Indices to keep, given each item's key, label and sort order (name, path)."""
    groups: dict[str, list[int]] = {}
    for i in sorted(range(len(keys)), key=lambda i: order[i]):
        groups.setdefault(keys[i], []).append(i)
    kept: list[int] = []
    duplicates = conflicting = 0
    for members in groups.values():
        if len({labels[i] for i in members}) > 1:
            conflicting += len(members)
            continue
        kept.append(members[0])
        duplicates += len(members) - 1
    kept.sort()
    return DedupResult(kept=kept, duplicates=duplicates, conflicting=conflicting)
