"""Data quality of one log: every kind of damage met while reading it, counted.

A platform team points perfmodel at directories of logs that are truncated, rolled,
concatenated or half-overwritten. Reading never stops at a damaged line; instead each
damage is counted here by kind, with the first few places it was seen, so every output
that summarises a log can say how much of it was usable and whether the answer may be
off. What is done with each kind (skipped, clamped or de-duplicated) is documented in
``docs/damaged-logs.md``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

DAMAGE_KINDS: dict[str, str] = {
    "undecodable_line": "lines that are not valid JSON or UTF-8 (skipped)",
    "wrong_type": "events whose fields have the wrong JSON type (skipped)",
    "unknown_event": "events of a type perfmodel does not know (ignored)",
    "out_of_range_value": "values outside any physical range (clamped)",
    "duplicate_event": "events repeated verbatim, e.g. a TaskEnd logged twice (de-duplicated)",
    "impossible_times": "tasks or stages that end before they start (end clamped to start)",
    "missing_rolling_part": "parts missing from a rolling log's numbering",
    "truncated_tail": "logs that end in the middle of an event",
    "capped_stream": "logs cut off at the decompression cap",
}
"""Every kind of damage, and what reading does about it."""

ANSWER_CHANGING: frozenset[str] = frozenset(
    {
        "undecodable_line",
        "wrong_type",
        "out_of_range_value",
        "duplicate_event",
        "impossible_times",
        "missing_rolling_part",
        "capped_stream",
    }
)
"""Kinds whose presence means figures may differ from what the application really did.

Unknown events (newer Spark, custom listeners) and a truncated tail (the log of a running
or crashed application, already reported as incomplete) do not by themselves.
"""

MAX_EXAMPLES = 3


@dataclass(slots=True)
class DataQuality:
    """Counts of damage by kind (`DAMAGE_KINDS`), with the first few places each was seen."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, where: str = "", n: int = 1) -> None:
        """Count ``n`` occurrences of ``kind``; ``where`` (file:line, task id) is kept for
        the first few so a user can look at the damage themselves."""
        if kind not in DAMAGE_KINDS:
            raise ValueError(f"unknown damage kind {kind!r}")
        self.counts[kind] += n
        if where:
            seen = self.examples.setdefault(kind, [])
            if len(seen) < MAX_EXAMPLES:
                seen.append(where)

    @property
    def damaged(self) -> bool:
        return any(self.counts.values())

    @property
    def affects_answer(self) -> bool:
        return any(self.counts[k] for k in ANSWER_CHANGING)

    def headline(self) -> str | None:
        """One line for the top of a report when the damage could change the answer."""
        if not self.affects_answer:
            return None
        parts = [
            f"{self.counts[k]:,} {k.replace('_', ' ')}" for k in DAMAGE_KINDS if self.counts[k]
        ]
        return "damaged log, figures may be off: " + ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "damaged": self.damaged,
            "affects_answer": self.affects_answer,
            "headline": self.headline(),
            "counts": {k: int(self.counts[k]) for k in DAMAGE_KINDS},
            "examples": {k: list(v) for k, v in self.examples.items()},
        }
