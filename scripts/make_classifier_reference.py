"""Recompute tests/data/classifier_reference.json for newly shipped weights.

The fixture pins the classifier's fast inference paths (fused tree encoder, char-LMs run
directly on padded tensors) to the reference paths they replaced: ``binarize`` then
``encode_tree`` for the code model, Flair's ``Sentence`` path (``embed_with_flair``) for
the doc model. The functions (inputs) stay those of the fixture; only the distributions are
recomputed, with the reference paths, from the weights in ``--models``. Run it after
retraining the shipped models:

    python scripts/make_classifier_reference.py [--models perfmodel/embed/models]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from perfmodel.embed.ast import binarize
from perfmodel.embed.doc_model import DocEmbedder
from perfmodel.embed.tree_batch import collate, encode_tree
from perfmodel.embed.weights import load_bundle, rebuild_charlms
from perfmodel.embed.word_embeddings import flair_embedder

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "classifier_reference.json"


def _round(values: list[float]) -> list[float]:
    return [round(float(v), 7) for v in values]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, default=Path("perfmodel/embed/models"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    bundle = load_bundle(args.models)
    ref = json.loads(FIXTURE.read_text())
    embedder = DocEmbedder.from_flair(flair_embedder(rebuild_charlms(bundle), glove=bundle.glove))
    with torch.inference_mode():
        for f in ref["functions"]:
            tree = binarize(f["ast"], f["language"], tuple(f["name_tokens"]), bundle.max_nodes)
            batch = collate([encode_tree(tree, bundle.types, bundle.words)])
            logits = bundle.code_model(batch, reconstruct=False).logits
            f["code"] = _round(torch.softmax(logits, dim=1)[0].tolist())
            (vec,) = embedder.embed_with_flair([f["doc"]])
            if vec is None or bundle.doc_model is None:
                f["doc_probs"] = None
            else:
                probs = torch.softmax(bundle.doc_model([vec]), dim=1)[0]
                f["doc_probs"] = _round(probs.tolist())
    ref["classes"] = bundle.classes
    ref["about"] = (
        "Inputs (functions written for the tests: tests/data/corpus and "
        "tests/data/classifier_sources, plus name-only frames) and the code and doc "
        "distributions of the reference paths (Flair Sentence path, binarize + encode_tree; "
        "scripts/make_classifier_reference.py); computed "
        f"{time.strftime('%Y-%m-%d', time.gmtime())} with the shipped models "
        "(perfmodel/embed/models), torch 1 thread."
    )
    FIXTURE.write_text(json.dumps(ref, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {FIXTURE} ({len(ref['functions'])} functions)")


if __name__ == "__main__":
    main()
