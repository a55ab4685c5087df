"""The documentation model: a GRU over Flair contextual string embeddings of doc words.

A doc comment is cleaned (by the corpus/locator), tokenized into words, embedded with
our local Flair character LMs (forward and backward stacked) and read by a GRU; its last
state is the doc embedding and a one-layer head turns it into resource logits. Flair's
character LMs need no word vocabulary, so words never seen in training (new APIs,
misspellings) still get meaningful vectors.

The LMs are frozen: word vectors are computed once per doc (``DocEmbedder``) and the GRU
trains on those, which is what makes training on two cores affordable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from perfmodel.embed.charlm import import_flair_offline

if TYPE_CHECKING:
    from flair.embeddings import StackedEmbeddings

MAX_DOC_WORDS = 48
_WORD = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def doc_words(doc: str, max_words: int = MAX_DOC_WORDS) -> list[str]:
    """Words and punctuation of a cleaned doc, truncated: the opening sentences say what a
    function does; long tails are parameter minutiae and cost char-LM time."""
    return _WORD.findall(doc)[:max_words]


class DocEmbedder:
    """Doc text -> (words, dim) tensor of Flair embeddings; batches docs by length."""

    def __init__(self, embeddings: StackedEmbeddings, batch_size: int = 128) -> None:
        self.embeddings = embeddings
        self.batch_size = batch_size

    @property
    def dim(self) -> int:
        return int(self.embeddings.embedding_length)

    def embed(self, docs: Sequence[str]) -> list[torch.Tensor | None]:
        """One tensor per doc, None for docs with no words."""
        import_flair_offline()
        from flair.data import Sentence

        words = [doc_words(d) for d in docs]
        out: list[torch.Tensor | None] = [None] * len(docs)
        # sort by character count: the char LMs run over padded characters, so similar
        # lengths in one batch waste little work (results do not depend on the batching)
        order = sorted(
            (i for i, w in enumerate(words) if w), key=lambda i: sum(len(t) + 1 for t in words[i])
        )
        with torch.no_grad():
            for s in range(0, len(order), self.batch_size):
                idx = order[s : s + self.batch_size]
                sentences = [Sentence(words[i]) for i in idx]
                self.embeddings.embed(sentences)
                for i, sent in zip(idx, sentences, strict=True):
                    out[i] = torch.stack([tok.embedding for tok in sent]).detach().clone()
                    sent.clear_embeddings()
        return out


@dataclass(frozen=True)
class DocModelConfig:
    input_dim: int
    n_classes: int
    hidden: int = 128

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class DocGRU(nn.Module):
    """GRU over word vectors; last hidden state -> resource logits."""

    def __init__(self, config: DocModelConfig) -> None:
        super().__init__()
        self.config = config
        self.dropout = nn.Dropout(0.2)
        self.gru = nn.GRU(config.input_dim, config.hidden, batch_first=True)
        self.head = nn.Linear(config.hidden, config.n_classes)

    def embed(self, docs: Sequence[torch.Tensor]) -> torch.Tensor:
        lengths = torch.tensor([d.shape[0] for d in docs])
        padded = self.dropout(pad_sequence(list(docs), batch_first=True))
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, last = self.gru(packed)
        return last[-1]

    def forward(self, docs: Sequence[torch.Tensor]) -> torch.Tensor:
        return self.head(self.embed(docs))
