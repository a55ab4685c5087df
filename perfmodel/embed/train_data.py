"""What training reads: its configuration, the corpus split into fit, validation and test
functions, and the identifier-token head that needs nothing else.

The validation packages are carved out of the training split here, once, so that every
model (`perfmodel.embed.train_heads`) and the baseline choose their settings on the same
held-back packages; ``test`` is kept for the final evaluation (`perfmodel.embed.train`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfmodel.embed.ast import BinaryTree, binarize
from perfmodel.embed.charlm import CharLMConfig
from perfmodel.embed.corpus.dataset import CorpusRecord, read_corpus
from perfmodel.embed.evaluate import fit_baseline, identifier_text
from perfmodel.embed.token_model import HEAD_CHAR_NGRAMS, TokenModel, from_sklearn

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters; ``tiny()`` is the configuration the tests use."""

    epochs: int = 6
    doc_epochs: int = 10
    dim: int = 64
    doc_hidden: int = 128
    batch_size: int = 64
    lr: float = 2e-3
    recon_weight: float = 0.1
    word_dropout: float = 0.5
    mean_pool: bool = True
    weight_decay: float = 0.05
    glove: bool = True
    name_only_rate: float = 0.2
    max_nodes: int = 400
    min_word_count: int = 2
    max_vocab: int = 50000
    valid_fraction: float = 0.15
    folds: int = 3
    seed: int = 13
    threads: int = 1
    limit: int | None = None
    charlm: CharLMConfig = field(default_factory=CharLMConfig)

    @classmethod
    def tiny(cls) -> TrainConfig:
        return cls(
            glove=False,
            epochs=3,
            doc_epochs=3,
            dim=32,
            doc_hidden=32,
            batch_size=16,
            max_nodes=120,
            min_word_count=1,
            folds=2,
            charlm=CharLMConfig(
                hidden_size=32, embedding_size=16, epochs=1, sequence_length=40, mini_batch_size=8
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def no_progress(stage: str, done: int, total: int) -> None:
    return None


def _hash(seed: int, text: str) -> str:
    return hashlib.sha256(f"{seed}|{text}".encode()).hexdigest()


def validation_packages(records: Sequence[CorpusRecord], fraction: float, seed: int) -> set[str]:
    """Training packages held back for model selection: per class, in hash order, until
    about ``fraction`` of that class's training functions are covered."""
    by_pkg: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        by_pkg[r.package][r.label] += 1
    totals: Counter[str] = Counter(r.label for r in records)
    chosen: set[str] = set()
    held: Counter[str] = Counter()
    for label in sorted(totals):
        pkgs = sorted(
            (p for p, c in by_pkg.items() if c.most_common(1)[0][0] == label),
            key=lambda p: _hash(seed, p),
        )
        for p in pkgs[:-1]:  # never hold back a class's last package
            if held[label] >= fraction * totals[label]:
                break
            if by_pkg[p][label] > 2 * fraction * totals[label]:
                continue
            chosen.add(p)
            held.update(by_pkg[p])
        if held[label] == 0 and len(pkgs) > 1:  # only large packages: take the smallest
            p = min(pkgs, key=lambda q: (by_pkg[q][label], _hash(seed, q)))
            chosen.add(p)
            held.update(by_pkg[p])
    return chosen


@dataclass
class TrainData:
    records: list[CorpusRecord]
    classes: list[str]
    y: np.ndarray
    fit: list[int]
    valid: list[int]
    test: list[int]
    trees: list[BinaryTree]


def prepare_data(corpus: Path, config: TrainConfig) -> TrainData:
    records = read_corpus(corpus)
    if config.limit is not None:
        records = sorted(records, key=lambda r: _hash(config.seed, r.id))[: config.limit]
    classes = sorted({r.label for r in records})
    if len(classes) < 2:
        raise ValueError(f"{corpus}: need at least two classes, found {classes}")
    train = [r for r in records if r.split == "train"]
    valid_pkgs = validation_packages(train, config.valid_fraction, config.seed)
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[r.label] for r in records], dtype=np.int64)
    fit = [i for i, r in enumerate(records) if r.split == "train" and r.package not in valid_pkgs]
    valid = [i for i, r in enumerate(records) if r.split == "train" and r.package in valid_pkgs]
    test = [i for i, r in enumerate(records) if r.split == "test"]
    if not fit or not valid or not test:
        raise ValueError(
            f"{corpus}: empty fit/validation/test set "
            f"({len(fit)}/{len(valid)}/{len(test)} functions)"
        )
    trees = [
        binarize(json.loads(r.ast), r.language, r.name_tokens, config.max_nodes) for r in records
    ]
    return TrainData(records, classes, y, fit, valid, test, trees)


def token_texts(data: TrainData, idx: Sequence[int]) -> list[str]:
    """The identifier tokens of functions ``idx``, as the token head and baseline read them."""
    return [identifier_text(data.trees[i].leaf_tokens) for i in idx]


def fit_token_head(
    data: TrainData, seed: int, char_ngrams: tuple[int, int] | None = HEAD_CHAR_NGRAMS
) -> tuple[TokenModel, float]:
    """TF-IDF + logistic regression over the training packages' identifier tokens (C chosen
    on the validation packages carved out of them); returns it and C. With the default
    ``char_ngrams`` it is the third head; with None, the evaluation's baseline."""
    base = fit_baseline(
        token_texts(data, data.fit),
        data.y[data.fit].tolist(),
        token_texts(data, data.valid),
        data.y[data.valid].tolist(),
        seed,
        char_ngrams,
    )
    return from_sklearn(base.vectorizer, base.model), base.c
