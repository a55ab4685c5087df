"""Binarize corpus ASTs for the recursive autoencoder, and encode them as integer arrays.

The autoencoder composes exactly two children into a parent (``p = f(W[c1; c2] + b)``,
Socher et al. 2011), but tree-sitter nodes have any number of children. Each original
inner node becomes a balanced binary tree over ``[type leaf, child_1, ..., child_k]``:
the node's type enters as an extra leaf so that the composition knows *what* it is
combining (an argument list, a loop), and balanced pairing keeps the height at
O(log k) so that level-by-level batching needs few levels. Every original leaf is kept.

The frame's qualified name is one more leaf at the top (``@name``), because a sampled
frame always carries it and a function without source (a jar-only Spark class) has
nothing else: such a frame is the two-leaf tree ``[@name, @nosource]``, classified by
the same model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfmodel.embed.source.ast_form import ast_leaves
from perfmodel.embed.source.names import split_identifier

NAME_LEAF = "@name"
NO_SOURCE_LEAF = "@nosource"
FUNCTION_NODE = "@function"
MAX_SUBTOKENS_PER_LEAF = 6
DEFAULT_MAX_NODES = 400


@dataclass(frozen=True)
class BinaryTree:
    """A binarized AST.

    Leaves are numbered ``0..L-1`` in source order; inner node ``j`` has id ``L + j`` and
    children ``left[j]``, ``right[j]`` (ids of either kind). Children are always created
    before their parent, so the last inner node is the root (or leaf 0 if there is none).
    ``leaf_types`` are language-qualified node types (``java:identifier``) or the
    markers above; ``leaf_tokens`` the identifier subtokens of each leaf's text.
    """

    leaf_types: tuple[str, ...]
    leaf_tokens: tuple[tuple[str, ...], ...]
    left: tuple[int, ...]
    right: tuple[int, ...]

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_types)

    @property
    def root(self) -> int:
        return self.n_leaves + len(self.left) - 1 if self.left else 0

    def heights(self) -> np.ndarray:
        """Height of each inner node (leaves have height 0)."""
        n = self.n_leaves
        h = np.zeros(n + len(self.left), dtype=np.int32)
        for j, (a, b) in enumerate(zip(self.left, self.right, strict=True)):
            h[n + j] = 1 + max(h[a], h[b])
        return h[n:]


def subtokens(text: str) -> tuple[str, ...]:
    """Identifier subtokens of a leaf's text (camelCase/snake_case split, lower-cased)."""
    return tuple(split_identifier(text)[:MAX_SUBTOKENS_PER_LEAF])


class _Builder:
    def __init__(self) -> None:
        self.leaf_types: list[str] = []
        self.leaf_tokens: list[tuple[str, ...]] = []
        self.pairs: list[tuple[int, int]] = []  # ids: leaf i -> i, inner j -> -(j + 1)

    def leaf(self, typ: str, tokens: tuple[str, ...]) -> int:
        self.leaf_types.append(typ)
        self.leaf_tokens.append(tokens)
        return len(self.leaf_types) - 1

    def combine(self, items: list[int]) -> int:
        """Balanced binary tree over ``items`` (at least one); returns its root id."""
        while len(items) > 1:
            nxt = []
            for i in range(0, len(items) - 1, 2):
                self.pairs.append((items[i], items[i + 1]))
                nxt.append(-len(self.pairs))
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        return items[0]

    def finish(self) -> BinaryTree:
        n = len(self.leaf_types)

        def gid(i: int) -> int:
            return i if i >= 0 else n + (-i - 1)

        return BinaryTree(
            tuple(self.leaf_types),
            tuple(self.leaf_tokens),
            tuple(gid(a) for a, _ in self.pairs),
            tuple(gid(b) for _, b in self.pairs),
        )


def _prune(ast: list[Any], max_nodes: int | None) -> list[Any]:
    """Keep the first ``max_nodes`` nodes in pre-order (signature and the start of the body).

    Long functions are truncated rather than skipped; what a method does is mostly visible
    in its first few hundred nodes, and the cost of the model is linear in the node count.
    """
    if max_nodes is None:
        return ast
    budget = max_nodes
    root: list[Any] = []
    stack: list[tuple[list[Any], list[Any]]] = [(ast, root)]
    while stack:
        node, slot = stack.pop()
        typ, payload = node
        if isinstance(payload, str):
            slot.extend([typ, payload])
            continue
        kids: list[list[Any]] = []
        slot.extend([typ, kids])
        # reserve budget for children in order; pre-order means earlier children win
        chosen = []
        for child in payload:
            if budget <= 0:
                break
            budget -= 1
            chosen.append(child)
        kids.extend([] for _ in chosen)
        for child, kid in zip(reversed(chosen), reversed(kids), strict=True):
            stack.append((child, kid))
    return root


def binarize(
    ast: list[Any] | None,
    language: str,
    name_tokens: Sequence[str],
    max_nodes: int | None = DEFAULT_MAX_NODES,
) -> BinaryTree:
    """Binary tree of a function: ``@function(@name, AST)``, or ``(@name, @nosource)``.

    ``ast`` is the corpus's nested-list form (``[type, [children]]`` / ``[type, text]``)
    or None when the source was not found. Iterative, so deep expression chains cannot
    exhaust the Python stack.
    """
    b = _Builder()
    name_id = b.leaf(NAME_LEAF, tuple(name_tokens))
    if ast is None:
        body = b.leaf(NO_SOURCE_LEAF, ())
        b.combine([name_id, body])
        return b.finish()
    pruned = _prune(ast, max_nodes)
    # post-order via an explicit stack: (node, expanded?, child ids collected so far)
    results: list[list[int]] = [[]]
    stack: list[tuple[list[Any], bool]] = [(pruned, False)]
    while stack:
        node, expanded = stack.pop()
        typ, payload = node
        qtype = f"{language}:{typ}"
        if isinstance(payload, str):
            results[-1].append(b.leaf(qtype, subtokens(payload)))
            continue
        if not expanded:
            stack.append((node, True))
            type_leaf = b.leaf(qtype, ())
            results.append([type_leaf])
            for child in reversed(payload):
                stack.append((child, False))
            continue
        items = results.pop()
        results[-1].append(b.combine(items))
    (body,) = results[0]
    b.combine([name_id, body])
    return b.finish()


def original_leaves(ast: list[Any]) -> list[tuple[str, str]]:
    """(type, text) of every leaf of a nested-list AST, in source order."""
    return ast_leaves(ast)


def identifier_words(trees: Iterable[BinaryTree]) -> Iterable[str]:
    """All subtokens of all leaves (used to build vocabularies and the baseline)."""
    for t in trees:
        for toks in t.leaf_tokens:
            yield from toks
