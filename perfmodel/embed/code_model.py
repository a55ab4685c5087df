"""The code model: a recursive autoencoder over binarized ASTs with a resource head.

Leaves embed their node type plus the mean of their identifier subtokens; a parent is
``p = tanh(W[c1; c2] + b)``, normalized to unit length as in Socher et al. (2011) so the
reconstruction objective cannot be met by shrinking every vector. A decoder reconstructs
``[c1; c2]`` from ``p``; its squared error is the autoencoder loss, added to the
classification loss of a one-layer head on the root vector (the code embedding).
Nodes are computed level by level over a whole batch (see ``tree_batch``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from perfmodel.embed.tree_batch import CodeBatch


@dataclass(frozen=True)
class CodeModelConfig:
    n_types: int
    n_words: int
    n_classes: int
    dim: int = 128
    word_dropout: float = 0.0
    mean_pool: bool = False

    def to_dict(self) -> dict[str, int | float | bool]:
        return asdict(self)


@dataclass
class CodeOutput:
    logits: torch.Tensor  # (B, C)
    embedding: torch.Tensor  # (B, dim) root vectors
    reconstruction: torch.Tensor  # scalar mean squared reconstruction error


class RecursiveAutoencoder(nn.Module):
    """Root vector of each tree in a :class:`CodeBatch`, and resource logits from it."""

    def __init__(self, config: CodeModelConfig) -> None:
        super().__init__()
        self.config = config
        d = config.dim
        self.type_emb = nn.Embedding(config.n_types, d)
        self.word_emb = nn.EmbeddingBag(config.n_words, d, mode="mean", padding_idx=None)
        self.encode = nn.Linear(2 * d, d)
        self.decode = nn.Linear(d, 2 * d)
        self.head = nn.Linear(2 * d if config.mean_pool else d, config.n_classes)
        nn.init.normal_(self.type_emb.weight, std=0.3)
        nn.init.normal_(self.word_emb.weight, std=0.3)

    def leaves(self, batch: CodeBatch) -> torch.Tensor:
        ids = batch.sub_ids
        if self.training and self.config.word_dropout > 0:
            # identifier dropout: a labeled package shares its vocabulary, so without it the
            # model memorizes package words instead of learning what the code does
            keep = torch.rand(ids.shape) >= self.config.word_dropout
            ids = ids * keep
        words = self.word_emb(ids, batch.sub_offsets)
        words = words * batch.leaf_has_sub.unsqueeze(1).to(words.dtype)
        return F.normalize(torch.tanh(self.type_emb(batch.leaf_type) + words), dim=1)

    def forward(self, batch: CodeBatch, reconstruct: bool = True) -> CodeOutput:
        leaves = self.leaves(batch)
        table = leaves.new_zeros(batch.n_nodes, self.config.dim)
        table[: batch.n_leaves] = leaves
        errors: list[torch.Tensor] = []
        base = batch.n_leaves
        for start, end in batch.levels:
            children = torch.cat(
                [table[batch.left[start:end]], table[batch.right[start:end]]], dim=1
            )
            parent = F.normalize(torch.tanh(self.encode(children)), dim=1)
            if reconstruct:
                rebuilt = self.decode(parent)
                errors.append(((rebuilt - children.detach()) ** 2).sum(dim=1))
            table[base + start : base + end] = parent
        roots = table[batch.roots]
        recon = torch.cat(errors).mean() if errors else roots.new_zeros(())
        embedding = roots
        if self.config.mean_pool:
            n_trees = int(batch.roots.shape[0])
            sums = table.new_zeros(n_trees, self.config.dim).index_add(0, batch.node_tree, table)
            counts = torch.bincount(batch.node_tree, minlength=n_trees).clamp(min=1)
            embedding = torch.cat([roots, sums / counts.unsqueeze(1).to(table.dtype)], dim=1)
        return CodeOutput(self.head(embedding), embedding, recon)
