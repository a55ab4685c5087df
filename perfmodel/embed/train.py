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

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from perfmodel.embed.aggregate_eval import EXECUTOR_PLUMBING, evaluate_policies
from perfmodel.embed.ast import binarize
from perfmodel.embed.charlm import train_char_lm
from perfmodel.embed.classifier import average_heads
from perfmodel.embed.code_model import RecursiveAutoencoder
from perfmodel.embed.doc_model import DocEmbedder, DocGRU
from perfmodel.embed.ensemble import combine, weights_for
from perfmodel.embed.evaluate import Metrics, score
from perfmodel.embed.source.names import name_tokens
from perfmodel.embed.token_model import TokenModel
from perfmodel.embed.train_data import (
    Progress,
    TrainConfig,
    TrainData,
    fit_token_head,
    no_progress,
    prepare_data,
    token_texts,
)
from perfmodel.embed.train_heads import (
    doc_probs,
    predict_code,
    train_code_model,
    train_doc_model,
)
from perfmodel.embed.tree_batch import EncodedTree, encode_tree
from perfmodel.embed.vocab import Vocab
from perfmodel.embed.weights import ModelBundle, save_bundle

ENSEMBLE_ROW = "ensemble (code + doc + tokens, weighted)"
"""The shipped combination's row in the metrics."""


@dataclass
class TrainResult:
    bundle: ModelBundle
    metrics: dict[str, Any]
    seconds: float


def train(
    corpus: Path,
    out_dir: Path | None,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
) -> TrainResult:
    """Run the whole pipeline (module docstring); saves to ``out_dir`` unless None."""
    config = config or TrainConfig()
    progress = progress or no_progress
    start = time.monotonic()
    torch.set_num_threads(config.threads)
    timings: dict[str, float] = {}

    progress("reading corpus and binarizing ASTs", 0, 1)
    data = prepare_data(corpus, config)
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
    embedder = DocEmbedder.from_weights(charlms, glove=config.glove)
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
    token_model, token_c = fit_token_head(data, config.seed)
    # deferred: oof builds on this module's training functions
    from perfmodel.embed.oof import out_of_fold

    oof = out_of_fold(data, encoded, name_only, vectors, types, words, config, progress, token_c)
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
        token_model,
        fit_token_head(data, config.seed, None),
        oof.ensemble,
    )
    plumbing = [
        encode_tree(binarize(None, "java", name_tokens(f)), types, words) for f in EXECUTOR_PLUMBING
    ]
    plumbing_probs = predict_code(code_model, plumbing)
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
    metrics["token_c"] = token_c
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


def _corpus_info(corpus: Path, data: TrainData) -> dict[str, Any]:
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


def evaluate_all(
    data: TrainData,
    encoded: list[EncodedTree],
    name_only: list[EncodedTree],
    vectors: list[torch.Tensor | None],
    code_model: RecursiveAutoencoder,
    doc_model: DocGRU | None,
    token_model: TokenModel,
    baseline: tuple[TokenModel, float],
    ensemble: dict[str, Any],
) -> tuple[dict[str, Any], np.ndarray]:
    """Test-set metrics of every model and the baseline, overall and per language, and the
    shipped ensemble's test probabilities (rows in ``data.test`` order). ``token_model`` is
    the third head (character n-grams), ``baseline`` the TF-IDF baseline over whole
    subtokens (and its C), both fitted on the training packages; ``ensemble`` holds the
    heads' weights per language, chosen out of fold on the training packages."""
    test = data.test
    yt = data.y[test]
    code = predict_code(code_model, [encoded[i] for i in test])
    name = predict_code(code_model, [name_only[i] for i in test])
    docp = doc_probs(doc_model, vectors, test, len(data.classes))
    avg = np.stack([c if d is None else (c + d) / 2 for c, d in zip(code, docp, strict=True)])
    with_doc = [k for k, d in enumerate(docp) if d is not None]

    baseline_model, baseline_c = baseline
    texts = token_texts(data, test)
    token = token_model.probabilities(texts)
    base_pred = baseline_model.probabilities(texts).argmax(1)
    name_texts = [" ".join(data.records[i].name_tokens) for i in test]
    name_token = token_model.probabilities(name_texts)
    base_name_pred = baseline_model.probabilities(name_texts).argmax(1)
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
        "token head (character n-grams)": m(token.argmax(1)),
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
            "token": m(token.argmax(1), sel).macro_f1,
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
