"""Train the two neural heads: the recursive autoencoder over code trees and the GRU over
documentation vectors, with epoch selection on held-back packages (`perfmodel.embed.oof`
runs them once per fold, `perfmodel.embed.train` once more on every training package).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from perfmodel.embed.code_model import CodeModelConfig, RecursiveAutoencoder
from perfmodel.embed.doc_model import DocGRU, DocModelConfig
from perfmodel.embed.evaluate import score
from perfmodel.embed.train_data import Progress, TrainConfig, TrainData
from perfmodel.embed.tree_batch import EncodedTree, collate
from perfmodel.embed.vocab import Vocab


def _class_weights(y: np.ndarray, n: int) -> torch.Tensor:
    """Square-root inverse frequency: helps the small classes without over-weighting."""
    counts = np.bincount(y, minlength=n).astype(np.float64) + 1.0
    w = np.sqrt(counts.sum() / counts)
    return torch.tensor(w / w.mean(), dtype=torch.float32)


def predict_code(
    model: RecursiveAutoencoder, trees: Sequence[EncodedTree], batch: int = 512
) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(trees), batch):
            logits = model(collate(trees[s : s + batch]), reconstruct=False).logits
            out.append(torch.softmax(logits, dim=1).numpy())
    model.train()
    return np.concatenate(out) if out else np.zeros((0, model.config.n_classes), np.float32)


def _macro_f1(y: np.ndarray, probs: np.ndarray, classes: list[str]) -> float:
    return score(y.tolist(), probs.argmax(1).tolist(), classes).macro_f1


class _BestEpoch:
    """The end-of-epoch bookkeeping both heads share: hand the model (in eval mode) to the
    caller's hook, and keep the state of the epoch with the best validation macro-F1 (the
    untrained state until one is scored), to restore when training ends."""

    def __init__(self, model: torch.nn.Module, on_epoch: Callable[[Any], None] | None) -> None:
        self.model = model
        self.on_epoch = on_epoch
        self.state = copy.deepcopy(model.state_dict())
        self.f1 = -1.0

    def epoch_done(self) -> None:
        if self.on_epoch is not None:
            self.model.eval()
            self.on_epoch(self.model)
            self.model.train()

    def scored(self, f1: float) -> None:
        if f1 > self.f1:
            self.f1, self.state = f1, copy.deepcopy(self.model.state_dict())

    def finish(self, selected: bool) -> None:
        """Restore the best epoch where epochs were scored (else keep the last); eval mode."""
        if selected:
            self.model.load_state_dict(self.state)
        self.model.eval()


def train_code_model(
    data: TrainData,
    encoded: list[EncodedTree],
    name_only: list[EncodedTree],
    types: Vocab,
    words: Vocab,
    config: TrainConfig,
    progress: Progress,
    train_idx: list[int],
    valid_idx: list[int] | None,
    epochs: int,
    on_epoch: Callable[[RecursiveAutoencoder], None] | None = None,
) -> tuple[RecursiveAutoencoder, list[dict[str, float]]]:
    """Train on ``train_idx`` for ``epochs``; with ``valid_idx``, keep the epoch with the best
    validation macro-F1 (else the last). Returns the model and a per-epoch log; ``on_epoch``
    sees the model (in eval mode) after every epoch."""
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model = RecursiveAutoencoder(
        CodeModelConfig(
            len(types),
            len(words),
            len(data.classes),
            config.dim,
            config.word_dropout,
            config.mean_pool,
        )
    )
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    weights = _class_weights(data.y[train_idx], len(data.classes))
    best, log = _BestEpoch(model, on_epoch), []
    order = list(train_idx)
    steps = (len(order) + config.batch_size - 1) // config.batch_size
    phase = "code model" if valid_idx is not None else "code model, refit on all training"
    for epoch in range(epochs):
        rng.shuffle(order)
        total = recon_total = 0.0
        for step, s in enumerate(range(0, len(order), config.batch_size)):
            ids = order[s : s + config.batch_size]
            batch = collate(
                [name_only[i] if rng.random() < config.name_only_rate else encoded[i] for i in ids]
            )
            out = model(batch)
            cls = F.cross_entropy(out.logits, torch.from_numpy(data.y[ids]), weight=weights)
            loss = cls + config.recon_weight * out.reconstruction
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += cls.item()
            recon_total += out.reconstruction.item()
            progress(f"{phase}, epoch {epoch + 1}/{epochs}", step + 1, steps)
        best.epoch_done()
        if valid_idx is None:
            log.append({"epoch": epoch + 1, "loss": total / steps})
            continue
        yv = data.y[valid_idx]
        f1 = _macro_f1(yv, predict_code(model, [encoded[i] for i in valid_idx]), data.classes)
        f1_name = _macro_f1(
            yv, predict_code(model, [name_only[i] for i in valid_idx]), data.classes
        )
        log.append(
            {
                "epoch": epoch + 1,
                "loss": total / steps,
                "reconstruction": recon_total / steps,
                "valid_macro_f1": f1,
                "valid_name_only_macro_f1": f1_name,
            }
        )
        best.scored(f1)
    best.finish(valid_idx is not None)
    return model, log


def train_doc_model(
    data: TrainData,
    vectors: list[torch.Tensor | None],
    config: TrainConfig,
    progress: Progress,
    train_idx: list[int],
    valid_idx: list[int] | None,
    epochs: int,
    on_epoch: Callable[[DocGRU], None] | None = None,
) -> tuple[DocGRU | None, list[dict[str, float]]]:
    """GRU on precomputed Flair vectors of the functions that have docs; epoch selection on
    ``valid_idx`` as in :func:`train_code_model`."""
    fit = [i for i in train_idx if vectors[i] is not None]
    valid = None if valid_idx is None else [i for i in valid_idx if vectors[i] is not None]
    if not fit or valid == []:
        return None, []
    dim = int(vectors[fit[0]].shape[1])  # type: ignore[union-attr]
    torch.manual_seed(config.seed + 1)
    rng = random.Random(config.seed + 1)
    model = DocGRU(DocModelConfig(dim, len(data.classes), config.doc_hidden))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    weights = _class_weights(data.y[fit], len(data.classes))
    best, log = _BestEpoch(model, on_epoch), []
    steps = (len(fit) + config.batch_size - 1) // config.batch_size
    order = list(fit)

    def predict(idx: list[int]) -> np.ndarray:
        model.eval()
        probs = doc_probs(model, vectors, idx, len(data.classes))
        model.train()
        return np.stack(probs)  # type: ignore[arg-type]

    phase = "doc model" if valid is not None else "doc model, refit on all training"
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for step, s in enumerate(range(0, len(order), config.batch_size)):
            ids = order[s : s + config.batch_size]
            logits = model([vectors[i].float() for i in ids])  # type: ignore[union-attr]
            loss = F.cross_entropy(logits, torch.from_numpy(data.y[ids]), weight=weights)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += loss.item()
            progress(f"{phase}, epoch {epoch + 1}/{epochs}", step + 1, steps)
        best.epoch_done()
        if valid is None:
            log.append({"epoch": epoch + 1, "loss": total / steps})
            continue
        f1 = _macro_f1(data.y[valid], predict(valid), data.classes)
        log.append({"epoch": epoch + 1, "loss": total / steps, "valid_macro_f1": f1})
        best.scored(f1)
    best.finish(valid is not None)
    return model, log


def doc_probs(
    model: DocGRU | None, vectors: list[torch.Tensor | None], idx: list[int], n_classes: int
) -> list[np.ndarray | None]:
    out: list[np.ndarray | None] = [None] * len(idx)
    if model is None:
        return out
    have = [k for k, i in enumerate(idx) if vectors[i] is not None]
    with torch.no_grad():
        for s in range(0, len(have), 256):
            ks = have[s : s + 256]
            probs = torch.softmax(
                model([vectors[idx[k]].float() for k in ks]),  # type: ignore[union-attr]
                dim=1,
            ).numpy()
            for k, p in zip(ks, probs, strict=True):
                out[k] = p
    return out
