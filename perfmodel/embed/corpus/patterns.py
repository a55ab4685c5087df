"""Name patterns used by labeling manifests.

A pattern is dotted like a qualified name: ``java.io.FileInputStream.**``,
``sun.nio.ch.*Socket*.**``, ``socket.socket.recv``, ``**.toString``. In a segment ``*``
and ``?`` are wildcards that never cross a dot; a whole segment ``**`` matches any number
of segments (including none). Nested-class ``$`` counts as a dot, so
``java.util.HashMap.**`` covers ``java.util.HashMap$TreeNode.putTreeVal`` and Scala
``object Foo`` (``Foo$``) is matched by ``Foo``.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

_SEGMENT = re.compile(r"^[\w<>*?\-\[\]!]+$")


class PatternError(ValueError):
    """A malformed pattern; the message says what is wrong with it."""


def normalize_name(qualified_name: str) -> str:
    """Qualified name with ``$`` separators turned into dots (empty segments dropped)."""
    return ".".join(s for s in re.split(r"[.$]+", qualified_name) if s)


def _segment_regex(seg: str) -> str:
    return fnmatch.translate(seg).removeprefix("(?s:").removesuffix(")\\Z").replace(".*", "[^.]*")


@dataclass(frozen=True)
class Pattern:
    """A compiled name pattern (see module docstring)."""

    text: str
    segments: tuple[str, ...]
    regex: re.Pattern[str] = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: object) -> Pattern:
        if not isinstance(text, str) or not text.strip():
            raise PatternError("pattern must be a non-empty string")
        if text != text.strip() or " " in text:
            raise PatternError(f"pattern {text!r} contains whitespace")
        segs = tuple(s for s in re.split(r"[.$]", text))
        if any(s == "" for s in segs):
            raise PatternError(f"pattern {text!r} has an empty segment (doubled or trailing dot)")
        for i, s in enumerate(segs):
            if s == "**":
                if i > 0 and segs[i - 1] == "**":
                    raise PatternError(f"pattern {text!r} repeats '**'")
                continue
            if "**" in s:
                raise PatternError(f"pattern {text!r}: '**' must be a whole segment, not {s!r}")
            if not _SEGMENT.match(s):
                raise PatternError(f"pattern {text!r}: invalid segment {s!r}")
            if s.count("[") != s.count("]"):
                raise PatternError(f"pattern {text!r}: unbalanced '[' in segment {s!r}")
        if segs == ("**",):
            raise PatternError("pattern '**' would match everything")
        rx = ""
        for i, s in enumerate(segs):
            if s == "**":
                rx += r"(?:[^.]+\.)*" if i == 0 else r"(?:\.[^.]+)*"
                continue
            if i > 0 and not (i == 1 and segs[0] == "**"):
                rx += r"\."
            rx += _segment_regex(s)
        return cls(text=text, segments=segs, regex=re.compile(rx + r"\Z"))

    def matches(self, normalized_name: str) -> bool:
        """Match against a name already passed through ``normalize_name``."""
        return self.regex.match(normalized_name) is not None

    @property
    def first_literal(self) -> str | None:
        """First segment if it has no wildcard: lets callers index rules by it."""
        first = self.segments[0]
        return None if any(c in first for c in "*?[") else first

    @property
    def specificity(self) -> tuple[int, int, int]:
        """Orders overlapping patterns: more literal segments wins, then fewer wildcards."""
        literal = sum(1 for s in self.segments if not any(c in s for c in "*?["))
        bounded = sum(1 for s in self.segments if s != "**")
        return literal, bounded, len(self.text)

    def may_match_under(self, prefix: tuple[str, ...]) -> bool:
        """Could a name that starts with ``prefix`` segments match? Used to skip whole files."""
        for i, seg in enumerate(prefix):
            if i >= len(self.segments):
                return False
            pat = self.segments[i]
            if pat == "**":
                return True
            if not fnmatch.fnmatchcase(seg, pat):
                return False
        return True
