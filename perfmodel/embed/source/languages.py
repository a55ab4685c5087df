"""Tree-sitter grammars per language and file-extension mapping."""

from __future__ import annotations

import tree_sitter_java
import tree_sitter_python
import tree_sitter_scala
from tree_sitter import Language, Parser

LANGUAGE_BY_SUFFIX = {".java": "java", ".scala": "scala", ".py": "python"}
_GRAMMARS = {
    "java": tree_sitter_java.language,
    "scala": tree_sitter_scala.language,
    "python": tree_sitter_python.language,
}


def language_of(path: str) -> str | None:
    """Language of a source file by suffix, or None when we cannot parse it."""
    dot = path.rfind(".")
    return LANGUAGE_BY_SUFFIX.get(path[dot:]) if dot >= 0 else None


def make_parser(language: str) -> Parser:
    """A fresh parser; cheap, and not shared so callers own their state."""
    return Parser(Language(_GRAMMARS[language]()))
