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
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


class LogProblem(Protocol):
    """What counting needs of a reading problem (`perfmodel.profile.eventlog.LogProblem`,
    which imports this module)."""

    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def message(self) -> str: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def count(self) -> int: ...


DAMAGE_KINDS: dict[str, str] = {
    "undecodable_line": (
        "lines that are not valid JSON or absurdly long (skipped), or not valid UTF-8 (the bad "
        "bytes replaced by U+FFFD)"
    ),
    "wrong_type": "events whose fields have the wrong JSON type (skipped)",
    "unknown_event": "events of a type perfmodel does not know (ignored)",
    "out_of_range_value": "values outside any physical range (clamped)",
    "duplicate_event": "events repeated verbatim, e.g. a TaskEnd logged twice (de-duplicated)",
    "impossible_times": "tasks or stages that end before they start (end clamped to start)",
    "missing_rolling_part": "parts missing from a rolling log's numbering",
    "truncated_tail": "logs that end in the middle of an event (the partial event is dropped)",
    "corrupt_stream": "parts whose data is damaged part-way (events before the damage are kept)",
    "capped_stream": "logs cut off at the decompression cap (events before the cap are kept)",
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
        "corrupt_stream",
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

    def merge(self, other: DataQuality) -> None:
        """Add another count (e.g. the reader's) to this one."""
        for kind, n in other.counts.items():
            if n:
                self.counts[kind] += n
        for kind, places in other.examples.items():
            seen = self.examples.setdefault(kind, [])
            seen.extend(places[: MAX_EXAMPLES - len(seen)])

    def count_reading(
        self, problems: Iterable[LogProblem], unknown_events: Mapping[str, int] | None = None
    ) -> None:
        """Count what reading a log met: its problems by kind, and events of types the front
        end does not know (``unknown_events``: name → count, which the front end tells).

        A problem without a ``kind`` that names a line is a line the event decoder could not
        use; its message says why (`line_problem_kind`). Problems that are neither (skipped
        header lines, notes) are not damage. A line is counted once: one whose bytes were not
        UTF-8 and that, repaired, was still no event is one damaged line, not two.
        """
        counted = getattr(problems, "counts", None)  # an `eventlog.ProblemList` counted them
        if counted is not None:
            examples: dict[str, list[str]] = getattr(problems, "examples", {})
            for kind, n in counted.items():
                self.counts[kind] += n
                seen = self.examples.setdefault(kind, [])
                seen.extend(examples.get(kind, [])[: MAX_EXAMPLES - len(seen)])
            problems = ()
        lines_seen: set[tuple[str, int]] = set()
        for problem in problems:
            kind = problem.kind
            if kind is None and problem.line is not None:
                kind = line_problem_kind(problem.message)
            if kind is None:
                continue
            if problem.line:
                if (problem.file, problem.line) in lines_seen:
                    continue
                lines_seen.add((problem.file, problem.line))
            where = f"{problem.file}:{problem.line}" if problem.line else problem.file
            self.add(kind, where, problem.count)
        for name, n in (unknown_events or {}).items():
            if n:
                self.add("unknown_event", name, n)

    @property
    def damaged(self) -> bool:
        """Anything wrong with the log; events of unknown types (newer Spark, custom
        listeners) are counted but are not damage."""
        return any(n for kind, n in self.counts.items() if kind != "unknown_event")

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


_INT_BOUNDS = ("Expected `int` <=", "Expected `int` >=")


def line_problem_kind(message: str) -> str:
    """Kind of damage of a line the event decoder rejected, from its message.

    msgspec says "out of range" for a float beyond double range and "Expected `int` <=" for
    an integer beyond Spark's 64-bit longs; other validation errors ("Expected `str`, got
    `int` - at `$...`") are fields of the wrong JSON type; anything else is a line that is
    not JSON at all.
    """
    if (
        "out of range" in message
        or "Expected `int` <=" in message
        or "Expected `int` >=" in message
    ):
        return "out_of_range_value"
    if message.startswith("unexpected field values") or (
        "Expected `" in message and "$" in message
    ):
        return "wrong_type"
    return "undecodable_line"
