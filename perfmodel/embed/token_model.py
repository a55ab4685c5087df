"""The identifier-token head: TF-IDF over the character n-grams of a function's identifier
subtokens, logistic regression.

The held-out evaluation reports TF-IDF over whole subtokens as its baseline; on Python that
simple model beats the AST autoencoder (the corpus is labelled by package, and Python code
says what it does in its names more than in its tree shape). As a third head beside the code
and doc models (weights per language chosen out of fold, ``perfmodel.embed.ensemble``) it
reads the subtokens' character 3- to 5-grams instead (scikit-learn's ``char_wb``): out of
fold over the training packages that scores 0.880 macro-F1 against 0.857 for whole subtokens
at C = 3 (Python 0.881 against 0.839), because an unseen package's names share stems and affixes
(``recv``/``receive``, ``*Stream``, ``*Writer``) more often than whole subtokens. The
choice was made on those out-of-fold predictions, not on the test packages. The weights are
fitted by us on the training packages (`train_data.fit_token_head`, during `perfmodel
train`; nothing is downloaded), and stored as tensors like the other heads: the vocabulary
and n-gram range in config.json, the IDF weights and the linear layer in
``token_model.safetensors``.

Inference re-implements the fitted scikit-learn pipeline in numpy (the analyzer, sublinear
TF, smoothed IDF, L2 norm, multinomial softmax) so loading needs no pickle;
`tests/unit/test_token_model.py` checks it against scikit-learn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.embed.ast import binarize

TOKEN_FILE = "token_model.safetensors"
HEAD_CHAR_NGRAMS = (3, 5)
"""The token head's character n-gram lengths (chosen out of fold; module docstring)."""


def char_wb_grams(words: Sequence[str], lengths: tuple[int, int]) -> list[str]:
    """Character n-grams of each word padded with a space on either side, as scikit-learn's
    ``char_wb`` analyzer makes them: a padded word no longer than ``n`` counts once, whole,
    and ends that word's n-grams."""
    grams: list[str] = []
    lo, hi = lengths
    for word in words:
        padded = f" {word} "
        for n in range(lo, hi + 1):
            if len(padded) <= n:
                grams.append(padded)
                break
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


@dataclass
class TokenModel:
    """A fitted TF-IDF + logistic regression, as plain arrays."""

    vocab: tuple[str, ...]
    idf: np.ndarray
    """(V,) inverse document frequencies."""
    coef: np.ndarray
    """(classes, V) weights of the softmax layer."""
    intercept: np.ndarray
    """(classes,)"""
    char_ngrams: tuple[int, int] | None = None
    """The n-gram lengths over each subtoken's characters; None: whole subtokens."""

    def __post_init__(self) -> None:
        self._index = {t: i for i, t in enumerate(self.vocab)}

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """(n, classes) softmax for whitespace-separated token texts."""
        out = np.empty((len(texts), self.coef.shape[0]), dtype=np.float64)
        for row, text in enumerate(texts):
            counts: dict[int, int] = {}
            words = text.lower().split()
            features = words if self.char_ngrams is None else char_wb_grams(words, self.char_ngrams)
            for tok in features:
                j = self._index.get(tok)
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            logits = self.intercept.astype(np.float64).copy()
            if counts:
                idx = np.fromiter(counts, dtype=np.int64)
                tf = 1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64))
                x = tf * self.idf[idx]
                x /= np.linalg.norm(x)
                logits += self.coef[:, idx] @ x
            logits -= logits.max()
            e = np.exp(logits)
            out[row] = e / e.sum()
        return out

    def tensors(self) -> dict[str, np.ndarray]:
        arrays = {"idf": self.idf, "coef": self.coef, "intercept": self.intercept}
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}

    @classmethod
    def from_tensors(
        cls,
        vocab: Sequence[str],
        tensors: dict[str, np.ndarray],
        char_ngrams: Sequence[int] | None = None,
    ) -> TokenModel:
        return cls(
            tuple(vocab),
            np.asarray(tensors["idf"], dtype=np.float64),
            np.asarray(tensors["coef"], dtype=np.float64),
            np.asarray(tensors["intercept"], dtype=np.float64),
            (int(char_ngrams[0]), int(char_ngrams[1])) if char_ngrams else None,
        )


def function_text(ast: object, language: str, name_tokens: Sequence[str], max_nodes: int) -> str:
    """The head's input: identifier subtokens of the AST's leaves and of the name (as the
    evaluation's baseline reads a function)."""
    tree = binarize(ast, language, name_tokens, max_nodes)  # type: ignore[arg-type]
    return " ".join(t for toks in tree.leaf_tokens for t in toks)


def from_sklearn(vectorizer: object, model: object) -> TokenModel:
    """Arrays of a fitted ``TfidfVectorizer`` (sublinear, L2; whitespace tokens or
    ``char_wb`` n-grams) and ``LogisticRegression``."""
    vocab = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)  # type: ignore[attr-defined]
    coef = np.asarray(model.coef_, dtype=np.float64)  # type: ignore[attr-defined]
    intercept = np.asarray(model.intercept_, dtype=np.float64)  # type: ignore[attr-defined]
    analyzer = vectorizer.analyzer  # type: ignore[attr-defined]
    if analyzer not in ("word", "char_wb"):
        raise ValueError(f"token head: analyzer {analyzer!r} has no numpy inference")
    grams = tuple(vectorizer.ngram_range) if analyzer == "char_wb" else None  # type: ignore[attr-defined]
    return TokenModel(tuple(vocab), np.asarray(vectorizer.idf_), coef, intercept, grams)  # type: ignore[attr-defined]
