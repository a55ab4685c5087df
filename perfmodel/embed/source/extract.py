"""Parse a source file and extract its functions, whatever the language.

The parsed tree is returned with the functions so that callers (the locator's cache,
the corpus builder) can compute ASTs only for the functions they keep.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Parser, Tree

from perfmodel.embed.source.ast_form import AstNode, to_ast
from perfmodel.embed.source.functions import ExtractedFunction
from perfmodel.embed.source.java import extract_java
from perfmodel.embed.source.languages import make_parser
from perfmodel.embed.source.python import extract_python
from perfmodel.embed.source.scala import extract_scala


@dataclass(frozen=True)
class ParsedSource:
    """A parsed file: its tree (for ASTs on demand) and its functions in source order."""

    language: str
    tree: Tree
    functions: tuple[ExtractedFunction, ...]


class Extractor:
    """Holds one tree-sitter parser per language; create one per worker, not per file."""

    def __init__(self) -> None:
        self._parsers: dict[str, Parser] = {}

    def parse(
        self, data: bytes, language: str, module: str = "", *, is_package: bool = False
    ) -> ParsedSource:
        """Parse ``data``; ``module`` is the Python module name or the Java/Scala package hint."""
        parser = self._parsers.get(language)
        if parser is None:
            parser = self._parsers[language] = make_parser(language)
        tree = parser.parse(data)
        if language == "java":
            functions = extract_java(tree, module)
        elif language == "scala":
            functions = extract_scala(tree, module)
        elif language == "python":
            functions = extract_python(tree, module, is_package=is_package)
        else:
            raise ValueError(f"unsupported language {language!r}")
        return ParsedSource(language=language, tree=tree, functions=tuple(functions))


def function_ast(parsed: ParsedSource, fn: ExtractedFunction) -> tuple[AstNode, int]:
    """Nested-list AST (and node count) of one extracted function, doc left out."""
    node = parsed.tree.root_node.descendant_for_byte_range(fn.start_byte, fn.end_byte)
    while node is not None and (node.start_byte, node.end_byte) != (fn.start_byte, fn.end_byte):
        node = node.parent
    if node is None:
        raise ValueError(f"function {fn.qualified_name} not found in its tree")
    return to_ast(node, frozenset(fn.skip_spans))
