"""Inference throughput of the resource classifier (functions/s, batched, CPU).

Classifies held-out corpus functions (source AST + doc as the locator would return them)
with the shipped model and prints functions per second for the full two-model path, the
code model alone, and name-only frames. Target: >= 1,000 functions/s on 2 cores.

Each figure is the median of ``--repeat`` timed runs, every run starting with the
classifier's caches cleared (the models and the Flair embedder stay loaded), so a path
does not profit from identifiers another run has already encoded.

    python benchmarks/classify_speed.py [--models perfmodel/embed/models]
                                        [--corpus corpora/build/v1] [--n 2000] [--threads 1]
                                        [--batch 256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from perfmodel.embed.classifier import FunctionInput, load_classifier
from perfmodel.embed.corpus.dataset import read_corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, default=Path("perfmodel/embed/models"))
    ap.add_argument("--corpus", type=Path, default=Path("corpora/build/v1"))
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    clf = load_classifier(args.models, roots=[])
    clf.batch_size = args.batch
    records = [r for r in read_corpus(args.corpus) if r.split == "test"][: args.n]
    items = [
        FunctionInput(r.qualified_name, tuple(r.name_tokens), r.language, json.loads(r.ast), r.doc)
        for r in records
    ]
    names = [FunctionInput(r.qualified_name, tuple(r.name_tokens), r.language) for r in records]
    clf.classify(items[:64])  # warm up: build the Flair embedder, first allocations
    with_docs = sum(1 for it in items if it.doc)
    print(
        f"{len(items)} held-out functions ({with_docs} with docs), batch {args.batch}, "
        f"{args.threads} torch thread(s), median of {args.repeat} run(s), caches cleared"
    )
    paths: list[tuple[str, Callable[[], Any]]] = [
        ("full (code + doc models, AST binarization included)", lambda: clf.classify(items)),
        ("code model only", lambda: clf.code_probabilities(items)),
        ("name-only frames (no source)", lambda: clf.code_probabilities(names)),
        (
            "doc model only (functions with docs)",
            lambda: clf.doc_probabilities([it.doc for it in items if it.doc]),
        ),
    ]
    for label, fn in paths:
        times = []
        for _ in range(max(args.repeat, 1)):
            clf.clear_caches()
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        dt = statistics.median(times)
        n = with_docs if label.startswith("doc") else len(items)
        spread = f", runs {n / max(times):.0f}-{n / min(times):.0f}/s" if len(times) > 1 else ""
        print(f"  {label:55s} {n / dt:8.0f} functions/s  ({dt:.2f} s{spread})")


if __name__ == "__main__":
    main()
