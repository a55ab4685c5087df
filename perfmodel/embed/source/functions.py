"""The record every language extractor produces for one function or method."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ExtractedFunction:
    """One function as found in a source file.

    ``qualified_name`` is spelled as a stack frame would spell it: JVM binary class
    name plus method (``java.util.HashMap$TreeNode.putTreeVal``, ``<init>`` for
    constructors, ``Foo$`` for Scala objects) or Python module + ``__qualname__``
    (``socket.socket.recv``, ``f.<locals>.g``). ``trivial`` says why a function carries
    no learnable signal (no body, getter, setter, stub) or is None.
    """

    qualified_name: str
    name: str
    class_name: str | None
    package: str
    language: str
    signature: str
    body: str
    doc: str
    params: tuple[str, ...]
    line_start: int
    line_end: int
    start_byte: int
    end_byte: int
    trivial: str | None = None
    skip_spans: tuple[tuple[int, int], ...] = ()

    @property
    def code(self) -> str:
        """Signature and body: the function's text without its doc comment."""
        return f"{self.signature} {self.body}".strip() if self.body else self.signature


def collapse_ws(text: str) -> str:
    """One-line form of a signature."""
    return re.sub(r"\s+", " ", text).strip()


def erase_type(typ: str) -> str:
    """Simple erased name of a parameter type, for matching overloads against frames."""
    t = re.sub(r"<.*>", "", typ).replace("...", "[]").strip()
    t = re.sub(r"\s+", "", t)
    t = re.sub(r"^(final|@\w+)", "", t)
    dims = t.count("[]")
    base = t.replace("[]", "").rsplit(".", 1)[-1].rsplit("$", 1)[-1]
    return base + "[]" * dims
