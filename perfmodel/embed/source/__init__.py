"""Source location: from a sampled stack frame to the code and documentation that ran.

Main entry points: ``SourceLocator(roots).locate(frame) -> LocatedSource``,
``parse_frame(frame) -> ParsedFrame``, ``split_identifier(name)``, ``default_roots()``.
"""

from perfmodel.embed.source.ast_form import AstNode, ast_leaves, to_ast
from perfmodel.embed.source.extract import Extractor, ParsedSource, function_ast
from perfmodel.embed.source.frames import ParsedFrame, parse_frame
from perfmodel.embed.source.functions import ExtractedFunction
from perfmodel.embed.source.locator import LocatedSource, SourceLocator, locate
from perfmodel.embed.source.names import name_tokens, split_identifier
from perfmodel.embed.source.roots import SourceRoot, default_roots, find_jdk_src_zip, root_from_spec

__all__ = [
    "AstNode",
    "ExtractedFunction",
    "Extractor",
    "LocatedSource",
    "ParsedFrame",
    "ParsedSource",
    "SourceLocator",
    "SourceRoot",
    "ast_leaves",
    "default_roots",
    "find_jdk_src_zip",
    "function_ast",
    "locate",
    "name_tokens",
    "parse_frame",
    "root_from_spec",
    "split_identifier",
    "to_ast",
]
