"""Train, select and evaluate the resource models on a corpus build, and save them.

Pipeline (one call, deterministic for a given seed and thread count):

1. read the corpus; its ``split`` column is the held-out-by-package split (``test`` is
   never looked at until the final evaluation);
2. carve validation *packages* out of ``train`` to choose the TF-IDF baseline's C (the
   baseline, fitted on all training packages, is also the identifier-token head);
3. train the forward and backward Flair character LMs on the training docs, embed docs
   (stacked with GloVe vectors when ``glove``);
4. out of fold over the training packages (``perfmodel.embed.oof``): train the code model
   (recursive autoencoder + head; a share of examples is shown as name-only trees so frames
   without source are handled), the doc model (GRU) and the token head once per fold, and
   choose each model's epoch count and the heads' weights per language on the out-of-fold
   predictions; then refit code and doc models on all training packages for that many
   epochs (package diversity is what generalizes);
5. evaluate the weighted ensemble, each head, the equal-weight average and the TF-IDF
   baseline on ``test``; save weights, config (with the ensemble weights), metrics and the
   model card.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from perfmodel.embed.aggregate_eval import EXECUTOR_PLUMBING, evaluate_policies
from perfmodel.embed.ast import BinaryTree, binarize
from perfmodel.embed.charlm import CharLMConfig, build_language_model, flair_embedder, train_char_lm
from perfmodel.embed.classifier import average_heads
from perfmodel.embed.code_model import CodeModelConfig, RecursiveAutoencoder
from perfmodel.embed.corpus.dataset import CorpusRecord, read_corpus
from perfmodel.embed.doc_model import DocEmbedder, DocGRU, DocModelConfig
from perfmodel.embed.ensemble import combine, weights_for
from perfmodel.embed.evaluate import Metrics, fit_baseline, identifier_text, score
from perfmodel.embed.source.names import name_tokens
from perfmodel.embed.token_model import TokenModel, from_sklearn
from perfmodel.embed.tree_batch import EncodedTree, collate, encode_tree
from perfmodel.embed.vocab import Vocab
from perfmodel.embed.weights import ModelBundle, save_bundle

Progress = Callable[[str, int, int], None]
ENSEMBLE_ROW = "ensemble (code + doc + tokens, weighted)"
"""The shipped combination's row in the metrics."""


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


@dataclass
class TrainResult:
    bundle: ModelBundle
    metrics: dict[str, Any]
    seconds: float


def _noop(stage: str, done: int, total: int) -> None:
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
class _Data:
    records: list[CorpusRecord]
    classes: list[str]
    y: np.ndarray
    fit: list[int]
    valid: list[int]
    test: list[int]
    trees: list[BinaryTree]


def _prepare(corpus: Path, config: TrainConfig) -> _Data:
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
    return _Data(records, classes, y, fit, valid, test, trees)


def _class_weights(y: np.ndarray, n: int) -> torch.Tensor:
    """Square-root inverse frequency: helps the small classes without over-weighting."""
    counts = np.bincount(y, minlength=n).astype(np.float64) + 1.0
    w = np.sqrt(counts.sum() / counts)
    return torch.tensor(w / w.mean(), dtype=torch.float32)


def _predict_code(
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


def train_code_model(
    data: _Data,
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
    best_state, best_f1, log = copy.deepcopy(model.state_dict()), -1.0, []
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
        if on_epoch is not None:
            model.eval()
            on_epoch(model)
            model.train()
        if valid_idx is None:
            log.append({"epoch": epoch + 1, "loss": total / steps})
            continue
        yv = data.y[valid_idx]
        f1 = _macro_f1(yv, _predict_code(model, [encoded[i] for i in valid_idx]), data.classes)
        f1_name = _macro_f1(
            yv, _predict_code(model, [name_only[i] for i in valid_idx]), data.classes
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
        if f1 > best_f1:
            best_f1, best_state = f1, copy.deepcopy(model.state_dict())
    if valid_idx is not None:
        model.load_state_dict(best_state)
    model.eval()
    return model, log


def train_doc_model(
    data: _Data,
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
    best_state, best_f1, log = copy.deepcopy(model.state_dict()), -1.0, []
    steps = (len(fit) + config.batch_size - 1) // config.batch_size
    order = list(fit)

    def predict(idx: list[int]) -> np.ndarray:
        model.eval()
        with torch.no_grad():
            out = [
                torch.softmax(
                    model([vectors[i].float() for i in idx[s : s + 256]]),  # type: ignore[union-attr]
                    dim=1,
                ).numpy()
                for s in range(0, len(idx), 256)
            ]
        model.train()
        return np.concatenate(out)

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
        if on_epoch is not None:
            model.eval()
            on_epoch(model)
            model.train()
        if valid is None:
            log.append({"epoch": epoch + 1, "loss": total / steps})
            continue
        f1 = _macro_f1(data.y[valid], predict(valid), data.classes)
        log.append({"epoch": epoch + 1, "loss": total / steps, "valid_macro_f1": f1})
        if f1 > best_f1:
            best_f1, best_state = f1, copy.deepcopy(model.state_dict())
    if valid is not None:
        model.load_state_dict(best_state)
    model.eval()
    return model, log


def _doc_probs(
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


def train(
    corpus: Path,
    out_dir: Path | None,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
) -> TrainResult:
    """Run the whole pipeline (module docstring); saves to ``out_dir`` unless None."""
    config = config or TrainConfig()
    progress = progress or _noop
    start = time.monotonic()
    torch.set_num_threads(config.threads)
    timings: dict[str, float] = {}

    progress("reading corpus and binarizing ASTs", 0, 1)
    data = _prepare(corpus, config)
    fit_trees = [data.trees[i] for i in data.fit + data.valid]
    types = Vocab.build(t for tr in fit_trees for t in tr.leaf_types)
    words = Vocab.build(
        (w for tr in fit_trees for toks in tr.leaf_tokens for w in toks),
        min_count=config.min_word_count,
        max_size=config.max_vocab,
    )
    encoded = [encode_tree(t, types, words) for t in data.trees]
    name_only = [
        encode_tree(binarize(None, r.language, r.name_tokens), types, words) for r in data.records
    ]
    timings["prepare"] = time.monotonic() - start

    t0 = time.monotonic()
    fit_docs = [data.records[i].doc for i in data.fit + data.valid if data.records[i].doc]
    charlms = []
    for k, forward in enumerate((True, False)):
        progress(f"character LM {'forward' if forward else 'backward'}", k, 2)
        charlms.append(train_char_lm(fit_docs, forward, config.charlm, config.seed + k))
    timings["char_lms"] = time.monotonic() - t0

    t0 = time.monotonic()
    embedder = DocEmbedder(
        flair_embedder([build_language_model(s, st) for s, st in charlms], glove=config.glove)
    )
    docs = [r.doc for r in data.records]
    vectors: list[torch.Tensor | None] = []
    chunk = 512
    for s in range(0, len(docs), chunk):
        vectors.extend(
            v.half() if v is not None else None for v in embedder.embed(docs[s : s + chunk])
        )
        progress("embedding docs with Flair", min(s + chunk, len(docs)), len(docs))
    timings["doc_embedding"] = time.monotonic() - t0

    t0 = time.monotonic()
    token_model, baseline_c = fit_token_head(data, config.seed)
    # deferred: oof builds on this module's training functions
    from perfmodel.embed.oof import out_of_fold

    oof = out_of_fold(data, encoded, name_only, vectors, types, words, config, progress, baseline_c)
    timings["out_of_fold"] = time.monotonic() - t0

    t0 = time.monotonic()
    everything = sorted(data.fit + data.valid)
    code_model, _ = train_code_model(
        data, encoded, name_only, types, words, config, progress, everything, None, oof.code_epochs
    )
    timings["code_model"] = time.monotonic() - t0
    t0 = time.monotonic()
    doc_model, _ = train_doc_model(
        data, vectors, config, progress, everything, None, oof.doc_epochs
    )
    timings["doc_model"] = time.monotonic() - t0

    progress("evaluating on held-out packages", 0, 1)
    t0 = time.monotonic()
    metrics, avg = evaluate_all(
        data,
        encoded,
        name_only,
        vectors,
        code_model,
        doc_model,
        (token_model, baseline_c),
        oof.ensemble,
    )
    plumbing = [
        encode_tree(binarize(None, "java", name_tokens(f)), types, words) for f in EXECUTOR_PLUMBING
    ]
    plumbing_probs = _predict_code(code_model, plumbing)
    metrics["aggregation"] = evaluate_policies(
        [
            (
                data.records[i].qualified_name,
                data.records[i].label,
                dict(zip(data.classes, map(float, avg[k]), strict=True)),
            )
            for k, i in enumerate(data.test)
        ],
        {
            f: dict(zip(data.classes, map(float, p), strict=True))
            for f, p in zip(EXECUTOR_PLUMBING, plumbing_probs, strict=True)
        },
        data.classes,
        config.seed,
    )
    timings["evaluation"] = time.monotonic() - t0
    timings["total"] = time.monotonic() - start
    metrics["training_log"] = oof.log
    metrics["ensemble_selection"] = oof.ensemble["selection"]
    metrics["timings_s"] = {k: round(v, 1) for k, v in timings.items()}
    bundle = ModelBundle(
        classes=data.classes,
        types=types,
        words=words,
        code_model=code_model,
        doc_model=doc_model,
        charlms=charlms,
        max_nodes=config.max_nodes,
        glove=config.glove,
        token_model=token_model,
        meta={
            "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "corpus": _corpus_info(corpus, data),
            "train_config": config.to_dict(),
            "torch": torch.__version__,
            "metrics": metrics,
            "ensemble": {k: v for k, v in oof.ensemble.items() if k != "selection"},
        },
    )
    if out_dir is not None:
        save_bundle(bundle, out_dir)
    return TrainResult(bundle, metrics, time.monotonic() - start)


def _corpus_info(corpus: Path, data: _Data) -> dict[str, Any]:
    build = corpus / "build.json" if corpus.is_dir() else corpus.parent / "build.json"
    info: dict[str, Any] = {"path": str(corpus), "functions": len(data.records)}
    if build.is_file():
        b = json.loads(build.read_text())
        info.update({k: b.get(k) for k in ("built_at", "schema_version", "jdk_release", "python")})
    fit_pkgs = {data.records[i].package for i in data.fit}
    valid_pkgs = {data.records[i].package for i in data.valid}
    test_pkgs = {data.records[i].package for i in data.test}
    info["split"] = {
        name: {
            "functions": len(idx),
            "packages": len(pk),
            "by_class": dict(Counter(data.records[i].label for i in idx)),
        }
        for name, idx, pk in (
            ("fit", data.fit, fit_pkgs),
            ("validation", data.valid, valid_pkgs),
            ("test", data.test, test_pkgs),
        )
    }
    info["languages"] = dict(Counter(r.language for r in data.records))
    return info


def token_texts(data: _Data, idx: Sequence[int]) -> list[str]:
    """The identifier tokens of functions ``idx``, as the token head and baseline read them."""
    return [identifier_text(data.trees[i].leaf_tokens) for i in idx]


def fit_token_head(data: _Data, seed: int) -> tuple[TokenModel, float]:
    """The identifier-token head: the evaluation's TF-IDF baseline fitted on the training
    packages (C chosen on the validation packages carved out of them); returns it and C."""
    base = fit_baseline(
        token_texts(data, data.fit),
        data.y[data.fit].tolist(),
        token_texts(data, data.valid),
        data.y[data.valid].tolist(),
        seed,
    )
    return from_sklearn(base.vectorizer, base.model), base.c


def evaluate_all(
    data: _Data,
    encoded: list[EncodedTree],
    name_only: list[EncodedTree],
    vectors: list[torch.Tensor | None],
    code_model: RecursiveAutoencoder,
    doc_model: DocGRU | None,
    token_head: tuple[TokenModel, float],
    ensemble: dict[str, Any],
) -> tuple[dict[str, Any], np.ndarray]:
    """Test-set metrics of every model and the baseline, overall and per language, and the
    shipped ensemble's test probabilities (rows in ``data.test`` order). ``token_head`` is
    the baseline fitted on the training packages (and its C), the third head; ``ensemble``
    holds the heads' weights per language, chosen out of fold on the training packages."""
    test = data.test
    yt = data.y[test]
    code = _predict_code(code_model, [encoded[i] for i in test])
    name = _predict_code(code_model, [name_only[i] for i in test])
    docp = _doc_probs(doc_model, vectors, test, len(data.classes))
    avg = np.stack([c if d is None else (c + d) / 2 for c, d in zip(code, docp, strict=True)])
    with_doc = [k for k, d in enumerate(docp) if d is not None]

    token_model, baseline_c = token_head
    token = token_model.probabilities(token_texts(data, test))
    base_pred = token.argmax(1)
    name_texts = [" ".join(data.records[i].name_tokens) for i in test]
    name_token = token_model.probabilities(name_texts)
    base_name_pred = name_token.argmax(1)
    langs = [data.records[i].language for i in test]
    ens = np.stack(
        [
            combine(c, d, t, weights_for(ensemble, lang))
            for c, d, t, lang in zip(code, docp, token, langs, strict=True)
        ]
    )
    equal = np.stack([average_heads(c, d, t) for c, d, t in zip(code, docp, token, strict=True)])
    ens_name = np.stack(
        [
            combine(c, None, t, weights_for(ensemble, lang))
            for c, t, lang in zip(name, name_token, langs, strict=True)
        ]
    )
    classes = data.classes

    def m(pred: np.ndarray, idx: Sequence[int] | None = None) -> Metrics:
        sel = list(range(len(test))) if idx is None else list(idx)
        return score(yt[sel].tolist(), np.asarray(pred)[sel].tolist(), classes)

    results: dict[str, Metrics] = {
        ENSEMBLE_ROW: m(ens.argmax(1)),
        "ensemble, name only (code + tokens)": m(ens_name.argmax(1)),
        "average (code + doc + tokens)": m(equal.argmax(1)),
        "average (code + doc)": m(avg.argmax(1)),
        "code model": m(code.argmax(1)),
        "baseline TF-IDF + LR": m(base_pred),
        "code model, name only": m(name.argmax(1)),
        "baseline, name only": m(base_name_pred),
    }
    if with_doc:
        docs_arr = np.stack([docp[k] for k in with_doc])  # type: ignore[misc]
        results["doc model (functions with docs)"] = score(
            yt[with_doc].tolist(), docs_arr.argmax(1).tolist(), classes
        )
        results["average (functions with docs)"] = m(avg.argmax(1), with_doc)
        results["code model (functions with docs)"] = m(code.argmax(1), with_doc)
        results["baseline (functions with docs)"] = m(base_pred, with_doc)
    by_language: dict[str, dict[str, float]] = {}
    for lang in sorted({data.records[i].language for i in test}):
        sel = [k for k, i in enumerate(test) if data.records[i].language == lang]
        by_language[lang] = {
            "n": len(sel),
            "ensemble": m(ens.argmax(1), sel).macro_f1,
            "equal_weights": m(equal.argmax(1), sel).macro_f1,
            "average": m(avg.argmax(1), sel).macro_f1,
            "code": m(code.argmax(1), sel).macro_f1,
            "baseline": m(base_pred, sel).macro_f1,
        }
    return (
        {
            "classes": classes,
            "test": {k: v.to_dict() for k, v in results.items()},
            "test_by_language": by_language,
            "baseline_c": baseline_c,
            "docs_in_test": len(with_doc),
        },
        ens,
    )
