"""Out-of-fold predictions over the training packages, and what is chosen on them.

The training packages are split into ``config.folds`` folds by package
(:func:`perfmodel.embed.ensemble.package_folds`); each fold is predicted, after every
epoch, by code and doc models trained on the other folds, and by the identifier-token head
fitted on them. On those predictions (every training function predicted by models that
never saw its package) the pipeline chooses

* the code model's and the doc model's epoch counts (highest out-of-fold macro-F1), and
* the heads' weights per language (:func:`perfmodel.embed.ensemble.choose_language_weights`).

The test packages are not read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from perfmodel.embed.code_model import RecursiveAutoencoder
from perfmodel.embed.doc_model import DocGRU
from perfmodel.embed.ensemble import choose_language_weights, package_folds
from perfmodel.embed.evaluate import fit_tfidf_lr, score
from perfmodel.embed.token_model import HEAD_CHAR_NGRAMS
from perfmodel.embed.train_data import Progress, TrainConfig, TrainData, token_texts
from perfmodel.embed.train_heads import doc_probs, predict_code, train_code_model, train_doc_model
from perfmodel.embed.tree_batch import EncodedTree
from perfmodel.embed.vocab import Vocab


@dataclass
class OutOfFold:
    code_epochs: int
    doc_epochs: int
    ensemble: dict[str, Any]
    """``weights`` per language (and ``*``), how they were chosen and their out-of-fold
    macro-F1 (stored in the model's config.json)."""
    log: dict[str, list[dict[str, float]]]
    """Per model, out-of-fold macro-F1 after each epoch."""


def _epoch_log(
    y: np.ndarray, per_epoch: list[np.ndarray], rows: np.ndarray, classes: list[str]
) -> list[dict[str, Any]]:
    return [
        {
            "epoch": e + 1,
            "oof_macro_f1": score(y[rows].tolist(), p[rows].argmax(1).tolist(), classes).macro_f1,
        }
        for e, p in enumerate(per_epoch)
    ]


def out_of_fold(
    data: TrainData,
    encoded: list[EncodedTree],
    name_only: list[EncodedTree],
    vectors: list[torch.Tensor | None],
    types: Vocab,
    words: Vocab,
    config: TrainConfig,
    progress: Progress,
    token_c: float,
) -> OutOfFold:
    """Train every head once per fold and choose epochs and weights (module docstring)."""
    everything = sorted(data.fit + data.valid)
    records = [data.records[i] for i in everything]
    folds = package_folds(
        [r.package for r in records], [r.label for r in records], config.folds, config.seed
    )
    n, c = len(everything), len(data.classes)
    code_oof = [np.zeros((n, c), np.float32) for _ in range(config.epochs)]
    doc_oof = [np.full((n, c), np.nan, np.float32) for _ in range(config.doc_epochs)]
    token_oof = np.zeros((n, c), np.float32)
    y = data.y[everything]
    for f, held_pos in enumerate(folds):
        fold = _Fold(everything, held_pos, f"fold {f + 1}/{len(folds)}: ", progress)

        def keep_code(model: RecursiveAutoencoder, fold: _Fold = fold) -> None:
            fold.keep(code_oof, predict_code(model, fold.held_trees(encoded)))

        def keep_doc(model: DocGRU, fold: _Fold = fold) -> None:
            fold.keep(doc_oof, doc_probs(model, vectors, fold.held, c))

        train_code_model(
            data,
            encoded,
            name_only,
            types,
            words,
            config,
            fold.progress,
            fold.train_idx,
            None,
            config.epochs,
            keep_code,
        )
        train_doc_model(
            data,
            vectors,
            config,
            fold.progress,
            fold.train_idx,
            None,
            config.doc_epochs,
            keep_doc,
        )
        head = fit_tfidf_lr(
            token_texts(data, fold.train_idx),
            data.y[fold.train_idx].tolist(),
            token_c,
            config.seed,
            HEAD_CHAR_NGRAMS,
        )
        x = head.vectorizer.transform(token_texts(data, fold.held))
        token_oof[fold.rows] = head.model.predict_proba(x)
    all_rows = np.arange(n)
    code_log = _epoch_log(y, code_oof, all_rows, data.classes)
    has_doc = ~np.isnan(doc_oof[0][:, 0]) if doc_oof else np.zeros(n, bool)
    doc_log = _epoch_log(y, doc_oof, np.flatnonzero(has_doc), data.classes) if has_doc.any() else []
    code_epochs = _best(code_log)
    doc_epochs = _best(doc_log)
    doc_pick = doc_oof[doc_epochs - 1] if doc_oof else np.full((n, c), np.nan)
    has_doc = ~np.isnan(doc_pick[:, 0])
    selection = choose_language_weights(
        y,
        [r.language for r in records],
        code_oof[code_epochs - 1],
        doc_pick,
        has_doc,
        token_oof,
    )
    ensemble = {
        "heads": ["code", "doc", "token"],
        "weights": {k: v["weights"] for k, v in selection.items()},
        "chosen_on": f"out-of-fold predictions over the training packages ({len(folds)} "
        "folds by package); the test packages were not used",
        "selection": selection,
        "token_oof_macro_f1": score(
            y.tolist(), token_oof.argmax(1).tolist(), data.classes
        ).macro_f1,
    }
    return OutOfFold(code_epochs, doc_epochs, ensemble, {"code": code_log, "doc": doc_log})


class _Fold:
    """One fold: its held-out rows, the rest to train on, and where each epoch's
    predictions of the held-out rows go."""

    def __init__(
        self, everything: list[int], held_pos: list[int], tag: str, progress: Progress
    ) -> None:
        self.held = [everything[k] for k in held_pos]
        held = set(self.held)
        self.train_idx = [i for i in everything if i not in held]
        self.rows = np.asarray(held_pos)
        self.tag = tag
        self._progress = progress
        self._epoch: dict[int, int] = {}

    def progress(self, stage: str, done: int, total: int) -> None:
        self._progress(self.tag + stage, done, total)

    def held_trees(self, encoded: list[EncodedTree]) -> list[EncodedTree]:
        return [encoded[i] for i in self.held]

    def keep(self, per_epoch: list[np.ndarray], probs: Any) -> None:
        """Store one epoch's predictions (rows None: no doc) in the next epoch's array."""
        e = self._epoch.get(id(per_epoch), 0)
        self._epoch[id(per_epoch)] = e + 1
        out = per_epoch[e]
        if isinstance(probs, np.ndarray):
            out[self.rows] = probs
            return
        for k, p in zip(self.rows, probs, strict=True):
            if p is not None:
                out[k] = p


def _best(log: list[dict[str, float]]) -> int:
    return int(max(log, key=lambda e: e["oof_macro_f1"])["epoch"]) if log else 1
