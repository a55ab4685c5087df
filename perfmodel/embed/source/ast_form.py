"""Convert a tree-sitter subtree to the nested-list AST stored in the corpus.

Format (JSON-friendly, what the recursive autoencoder of issue 5 binarizes):
an internal node is ``[type, [child, ...]]``; a leaf is ``[type, text]`` where ``text``
is the token (identifier, literal, type name; literals truncated). Only named nodes are
kept, comments dropped: punctuation and keywords are implied by the node types, and
comments belong to the doc model. Node types are tree-sitter's, so they differ per
language; the ``language`` column tells which grammar they come from.
"""

from __future__ import annotations

from typing import Any

from tree_sitter import Node

MAX_LEAF_CHARS = 64
_COMMENT_TYPES = frozenset({"comment", "block_comment", "line_comment"})
# Nodes whose children are only fragments of one token; keep them as a single leaf.
_ATOMIC_TYPES = frozenset(
    {
        "string_literal",
        "string",
        "character_literal",
        "text_block",
        "interpolated_string_expression",
        "concatenated_string",
        "scoped_identifier",
        "scoped_type_identifier",
        "stable_identifier",
    }
)

AstNode = list[Any]


def to_ast(node: Node, skip: frozenset[tuple[int, int]] = frozenset()) -> tuple[AstNode, int]:
    """Nested-list AST of ``node`` and its node count.

    ``skip`` holds (start_byte, end_byte) of subtrees to leave out, e.g. a Python
    docstring, which the doc model sees instead. Iterative so that deep expression
    chains cannot exhaust the Python stack.
    """
    count = 0
    root: AstNode = []
    stack: list[tuple[Node, AstNode]] = [(node, root)]
    while stack:
        cur, slot = stack.pop()
        count += 1
        children = (
            []
            if cur.type in _ATOMIC_TYPES
            else [
                c
                for c in cur.named_children
                if c.type not in _COMMENT_TYPES and (c.start_byte, c.end_byte) not in skip
            ]
        )
        if not children:
            text = (cur.text or b"").decode("utf-8", "replace")
            slot.extend([cur.type, text[:MAX_LEAF_CHARS]])
            continue
        kids: list[AstNode] = [[] for _ in children]
        slot.extend([cur.type, kids])
        for child, kid in zip(reversed(children), reversed(kids), strict=True):
            stack.append((child, kid))
    return root, count


def ast_leaves(ast: AstNode) -> list[tuple[str, str]]:
    """(type, text) of every leaf in source order; handy for tests and identifier models."""
    out: list[tuple[str, str]] = []
    stack = [ast]
    while stack:
        typ, payload = stack.pop()
        if isinstance(payload, str):
            out.append((typ, payload))
        else:
            stack.extend(reversed(payload))
    return out
