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

import numpy as np
import torch

from perfmodel.embed.ast import BinaryTree
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
