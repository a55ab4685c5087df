"""Held-out evaluation: per-class precision/recall, macro-F1 and confusion matrices.

Every neural figure is reported beside a simple baseline trained on the same split —
TF-IDF over identifier subtokens (AST leaves plus the qualified name) with logistic
regression — because a corpus labeled by package can often be solved by names alone,
and a neural model that does not beat that has not learned anything worth its cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support


@dataclass(frozen=True)
class Metrics:
    """Scores of one model on one set of examples (``confusion[true][pred]``)."""

    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, dict[str, float]]
    confusion: list[list[int]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score(y_true: Sequence[int], y_pred: Sequence[int], classes: Sequence[str]) -> Metrics:
    labels = list(range(len(classes)))
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    return Metrics(
        n=len(y_true),
        accuracy=float(np.mean(np.asarray(y_true) == np.asarray(y_pred))) if len(y_true) else 0.0,
        macro_f1=float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)),
        per_class={
            c: {
                "precision": float(p[i]),
                "recall": float(r[i]),
                "f1": float(f[i]),
                "support": int(s[i]),
            }
            for i, c in enumerate(classes)
        },
        confusion=confusion_matrix(y_true, y_pred, labels=labels).tolist(),
    )


def identifier_text(leaf_tokens: Sequence[Sequence[str]]) -> str:
    return " ".join(t for toks in leaf_tokens for t in toks)


@dataclass
class Baseline:
    """TF-IDF over identifier subtokens + logistic regression (C picked on validation)."""

    vectorizer: TfidfVectorizer
    model: LogisticRegression
    c: float

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.predict(self.vectorizer.transform(texts))


def fit_tfidf_lr(
    texts: Sequence[str],
    y: Sequence[int],
    c: float,
    seed: int,
    char_ngrams: tuple[int, int] | None = None,
) -> Baseline:
    """The baseline's pipeline fitted with a given C: TF-IDF over the whitespace-separated
    subtokens, or over their character n-grams (``char_ngrams``, as the token head reads
    them)."""
    vec = (
        TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True, min_df=2)
        if char_ngrams is None
        else TfidfVectorizer(
            analyzer="char_wb", ngram_range=char_ngrams, sublinear_tf=True, min_df=2
        )
    )
    x = vec.fit_transform(texts)
    lr = LogisticRegression(C=c, max_iter=2000, class_weight="balanced", random_state=seed)
    lr.fit(x, y)
    return Baseline(vec, lr, c)


def fit_baseline(
    fit_texts: Sequence[str],
    fit_y: Sequence[int],
    valid_texts: Sequence[str],
    valid_y: Sequence[int],
    seed: int,
    char_ngrams: tuple[int, int] | None = None,
) -> Baseline:
    """Pick C on the validation packages, then refit on fit + validation (all of train)."""

    def make(c: float, texts: Sequence[str], y: Sequence[int]) -> Baseline:
        return fit_tfidf_lr(texts, y, c, seed, char_ngrams)

    best_c, best_f1 = 1.0, -1.0
    for c in (0.3, 1.0, 3.0, 10.0):
        f1 = f1_score(valid_y, make(c, fit_texts, fit_y).predict(valid_texts), average="macro")
        if f1 > best_f1:
            best_c, best_f1 = c, float(f1)
    return make(best_c, [*fit_texts, *valid_texts], [*fit_y, *valid_y])


def format_metrics_table(rows: dict[str, Metrics], classes: Sequence[str]) -> str:
    """Markdown table: one row per model, macro-F1, accuracy and per-class P/R."""
    head = "| model | n | macro-F1 | accuracy | " + " | ".join(f"{c} P / R" for c in classes) + " |"
    sep = "|---" * (4 + len(classes)) + "|"
    lines = [head, sep]
    for name, m in rows.items():
        cells = " | ".join(
            f"{m.per_class[c]['precision']:.3f} / {m.per_class[c]['recall']:.3f}" for c in classes
        )
        lines.append(f"| {name} | {m.n} | **{m.macro_f1:.3f}** | {m.accuracy:.3f} | {cells} |")
    return "\n".join(lines)


def format_confusion(m: Metrics, classes: Sequence[str]) -> str:
    lines = [
        "| true \\ predicted | " + " | ".join(classes) + " |",
        "|---" * (len(classes) + 1) + "|",
    ]
    for c, row in zip(classes, m.confusion, strict=True):
        lines.append(f"| {c} | " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)
