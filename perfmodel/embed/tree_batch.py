"""Integer encoding of binary trees and their collation into level-by-level batches.

A per-node Python loop over a recursive network is far too slow (a function has about a
hundred nodes, a profile thousands of functions). Instead a batch of trees is flattened
into one node table ordered by height: all leaves first, then every inner node of height
1 across the batch, then height 2, and so on. The model then computes one height with
one matrix multiply, since a node's children always have smaller heights. Collation is
vectorized with numpy so that it is cheap next to the model itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from perfmodel.embed.ast import (
    DEFAULT_MAX_NODES,
    NAME_LEAF,
    NO_SOURCE_LEAF,
    BinaryTree,
    subtokens,
)
from perfmodel.embed.vocab import Vocab


@dataclass(frozen=True)
class EncodedTree:
    """A :class:`BinaryTree` as integer arrays (vocabulary ids), ready to collate."""

    leaf_type: np.ndarray  # (L,) type ids
    sub_ids: np.ndarray  # (S,) subtoken ids of all leaves, concatenated
    sub_len: np.ndarray  # (L,) number of subtokens per leaf
    left: np.ndarray  # (I,) child ids (leaves 0..L-1, inner L..)
    right: np.ndarray  # (I,)
    height: np.ndarray  # (I,)

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_type.shape[0])

    @property
    def n_inner(self) -> int:
        return int(self.left.shape[0])


def encode_tree(tree: BinaryTree, types: Vocab, words: Vocab) -> EncodedTree:
    sub = [words.ids(toks) for toks in tree.leaf_tokens]
    return EncodedTree(
        leaf_type=np.asarray(types.ids(tree.leaf_types), dtype=np.int64),
        sub_ids=np.asarray([i for s in sub for i in s], dtype=np.int64),
        sub_len=np.asarray([len(s) for s in sub], dtype=np.int64),
        left=np.asarray(tree.left, dtype=np.int64),
        right=np.asarray(tree.right, dtype=np.int64),
        height=tree.heights().astype(np.int64),
    )


@dataclass(frozen=True)
class CodeBatch:
    """Trees flattened into one height-ordered node table.

    Rows ``0..n_leaves-1`` of the table are leaves; the inner nodes of level ``k`` are rows
    ``n_leaves + levels[k][0] .. n_leaves + levels[k][1] - 1`` and have children
    ``left[levels[k][0]:levels[k][1]]`` / ``right[...]``. ``roots`` holds the row of each
    tree's root, in batch order.
    """

    leaf_type: torch.Tensor
    sub_ids: torch.Tensor
    sub_offsets: torch.Tensor
    leaf_has_sub: torch.Tensor
    left: torch.Tensor
    right: torch.Tensor
    levels: tuple[tuple[int, int], ...]
    roots: torch.Tensor
    node_tree: torch.Tensor  # (n_nodes,) batch index of the tree each table row belongs to
    n_leaves: int

    @property
    def n_nodes(self) -> int:
        return self.n_leaves + int(self.left.shape[0])


def collate(trees: Sequence[EncodedTree]) -> CodeBatch:
    """Flatten ``trees`` into one :class:`CodeBatch` (see the module docstring)."""
    n_leaf = np.fromiter((t.n_leaves for t in trees), dtype=np.int64, count=len(trees))
    n_inner = np.fromiter((t.n_inner for t in trees), dtype=np.int64, count=len(trees))
    leaf_base = np.concatenate([[0], np.cumsum(n_leaf)[:-1]])
    inner_base = np.concatenate([[0], np.cumsum(n_inner)[:-1]])
    total_leaves = int(n_leaf.sum())
    total_inner = int(n_inner.sum())

    leaf_type = np.concatenate([t.leaf_type for t in trees])
    sub_ids = np.concatenate([t.sub_ids for t in trees])
    sub_len = np.concatenate([t.sub_len for t in trees])
    sub_offsets = np.concatenate([[0], np.cumsum(sub_len)[:-1]])

    if total_inner:
        height = np.concatenate([t.height for t in trees])
        tree_of = np.repeat(np.arange(len(trees)), n_inner)
        # stable sort by height keeps batch and creation order inside a level
        order = np.argsort(height, kind="stable")
        row = np.empty(total_inner, dtype=np.int64)
        row[order] = total_leaves + np.arange(total_inner)

        def to_rows(child: np.ndarray) -> np.ndarray:
            lb = leaf_base[tree_of]
            ib = inner_base[tree_of]
            nl = n_leaf[tree_of]
            is_leaf = child < nl
            inner_rows = row[np.where(is_leaf, 0, ib + child - nl)]
            return np.where(is_leaf, lb + child, inner_rows)

        left = to_rows(np.concatenate([t.left for t in trees]))[order]
        right = to_rows(np.concatenate([t.right for t in trees]))[order]
        sorted_h = height[order]
        bounds = np.flatnonzero(np.diff(sorted_h)) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [total_inner]])
        levels = tuple((int(s), int(e)) for s, e in zip(starts, ends, strict=True))
        roots = np.where(n_inner > 0, row[np.maximum(inner_base + n_inner - 1, 0)], leaf_base)
        inner_tree = tree_of[order]
    else:
        left = right = np.zeros(0, dtype=np.int64)
        levels = ()
        roots = leaf_base
        inner_tree = np.zeros(0, dtype=np.int64)
    node_tree = np.concatenate([np.repeat(np.arange(len(trees)), n_leaf), inner_tree])
    return CodeBatch(
        leaf_type=torch.from_numpy(leaf_type),
        sub_ids=torch.from_numpy(sub_ids),
        sub_offsets=torch.from_numpy(sub_offsets),
        leaf_has_sub=torch.from_numpy(sub_len > 0),
        left=torch.from_numpy(left),
        right=torch.from_numpy(right),
        levels=levels,
        roots=torch.from_numpy(np.asarray(roots, dtype=np.int64)),
        node_tree=torch.from_numpy(node_tree.astype(np.int64)),
        n_leaves=total_leaves,
    )


class TreeEncoder:
    """Binarize and encode a function in one pass, for inference.

    ``encode(ast, language, name_tokens)`` equals
    ``encode_tree(binarize(ast, language, name_tokens, max_nodes), types, words)`` array
    for array (``tests/e2e/test_embed_ast.py`` checks this), but it builds no intermediate
    :class:`BinaryTree` of strings: pruning happens during the traversal, heights are
    computed as parents are created, and each leaf text's subtoken ids are looked up
    once (a profile's functions repeat the same identifiers over and over). Training
    keeps the two-step form, whose trees it also inspects.
    """

    def __init__(
        self,
        types: Vocab,
        words: Vocab,
        max_nodes: int | None = DEFAULT_MAX_NODES,
        cache_size: int = 200_000,
    ) -> None:
        self.types = types
        self.words = words
        self.max_nodes = max_nodes
        self.cache_size = cache_size
        self._type_ids: dict[str, dict[str, int]] = {}  # language -> node type -> id
        self._text_ids: dict[str, tuple[int, ...]] = {}  # leaf text -> subtoken ids

    def _text(self, text: str) -> tuple[int, ...]:
        ids = self._text_ids.get(text)
        if ids is None:
            if len(self._text_ids) >= self.cache_size:
                self._text_ids.clear()
            ids = tuple(self.words.ids(subtokens(text)))
            self._text_ids[text] = ids
        return ids

    def encode(
        self, ast: list[Any] | None, language: str, name_tokens: Sequence[str]
    ) -> EncodedTree:
        type_ids = self._type_ids.get(language)
        if type_ids is None:
            type_ids = self._type_ids[language] = {}
        types = self.types
        leaf_type: list[int] = [types.id(NAME_LEAF)]
        sub_ids: list[int] = self.words.ids(name_tokens)
        sub_len: list[int] = [len(sub_ids)]
        # inner node j is referred to as ~j (negative) until the leaf count is known
        left: list[int] = []
        right: list[int] = []
        height: list[int] = []

        def combine(items: list[int]) -> int:
            # the balanced pairing of ast._Builder.combine
            while len(items) > 1:
                nxt = []
                for i in range(0, len(items) - 1, 2):
                    a = items[i]
                    b = items[i + 1]
                    ha = height[~a] if a < 0 else 0
                    hb = height[~b] if b < 0 else 0
                    left.append(a)
                    right.append(b)
                    height.append(1 + (ha if ha > hb else hb))
                    nxt.append(~(len(left) - 1))
                if len(items) % 2:
                    nxt.append(items[-1])
                items = nxt
            return items[0]

        if ast is None:
            leaf_type.append(types.id(NO_SOURCE_LEAF))
            sub_len.append(0)
            combine([0, 1])
        else:
            # binarize's post-order traversal, pruned as ast._prune does: an inner node
            # reserves budget for its children, in order, when the pre-order reaches it.
            # None on the stack closes the inner node whose children follow it.
            unlimited = self.max_nodes is None
            budget = 0 if self.max_nodes is None else self.max_nodes
            text_ids = self._text_ids
            results: list[list[int]] = [[]]
            stack: list[list[Any] | None] = [ast]
            pop = stack.pop
            push = stack.append
            while stack:
                node = pop()
                if node is None:
                    items = results.pop()
                    results[-1].append(combine(items))
                    continue
                typ, payload = node
                tid = type_ids.get(typ)
                if tid is None:
                    tid = type_ids[typ] = types.id(f"{language}:{typ}")
                if isinstance(payload, str):
                    ids = text_ids.get(payload)
                    if ids is None:
                        ids = self._text(payload)
                    results[-1].append(len(leaf_type))
                    leaf_type.append(tid)
                    sub_ids.extend(ids)
                    sub_len.append(len(ids))
                    continue
                results.append([len(leaf_type)])
                leaf_type.append(tid)
                sub_len.append(0)
                if unlimited:
                    chosen = payload
                else:
                    chosen = payload[: max(budget, 0)]
                    budget -= len(chosen)
                push(None)
                stack.extend(reversed(chosen))
            (body,) = results[0]
            combine([0, body])
        n = len(leaf_type)
        lr = np.asarray([left, right], dtype=np.int64).reshape(2, -1)
        lr = np.where(lr >= 0, lr, n - 1 - lr)
        return EncodedTree(
            leaf_type=np.asarray(leaf_type, dtype=np.int64),
            sub_ids=np.asarray(sub_ids, dtype=np.int64),
            sub_len=np.asarray(sub_len, dtype=np.int64),
            left=lr[0],
            right=lr[1],
            height=np.asarray(height, dtype=np.int64),
        )
