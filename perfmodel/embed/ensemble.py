"""How the heads' distributions are combined, and how the combination is chosen.

The shipped distribution is a weighted mean of the heads a function has (code, doc,
identifier tokens), with weights per language. The weights are chosen on **out-of-fold
predictions over the training packages**: the training packages are split into folds by
package, each fold is predicted by heads trained on the other folds, and the weights that
maximize macro-F1 over all those predictions are kept. The test packages play no part.

Why folds rather than the validation packages carved out of the training split: those are
about 20 packages (11 Java), three in four Java functions in them are from CPU packages,
and the three heads rank differently on them than on any other split; weights chosen on
them follow those few packages. Out-of-fold predictions cover every training package (about
150), so what they reward is what generalizes across packages.

Equal weights are kept when the search cannot tell (ties break toward them), and a language
without weights of its own (Scala frames, models trained before this existed) uses the
weights chosen over all languages.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from itertools import product

import numpy as np

HEADS = ("code", "doc", "token")
DEFAULT_KEY = "*"
"""The weights for a language that has none of its own."""
GRID_STEP = 0.1

Weights = tuple[float, float, float]
EQUAL: Weights = (1.0, 1.0, 1.0)


def package_folds(
    packages: Sequence[str], labels: Sequence[str], k: int, seed: int
) -> list[list[int]]:
    """``k`` folds of positions, whole packages each: packages grouped by their majority
    label and dealt round-robin in hash order, so every fold holds every label's packages
    (where a label has at least ``k`` of them)."""
    by_pkg: dict[str, Counter[str]] = defaultdict(Counter)
    for p, y in zip(packages, labels, strict=True):
        by_pkg[p][y] += 1
    fold_of: dict[str, int] = {}
    turn = 0
    for label in sorted({c.most_common(1)[0][0] for c in by_pkg.values()}):
        group = sorted(
            (p for p, c in by_pkg.items() if c.most_common(1)[0][0] == label),
            key=lambda p: hashlib.sha256(f"{seed}|{p}".encode()).hexdigest(),
        )
        for p in group:
            fold_of[p] = turn % k
            turn += 1
    folds: list[list[int]] = [[] for _ in range(k)]
    for i, p in enumerate(packages):
        folds[fold_of[p]].append(i)
    return [f for f in folds if f]


def combine(
    code: np.ndarray, doc: np.ndarray | None, token: np.ndarray | None, weights: Weights
) -> np.ndarray:
    """Weighted mean of the heads a function has; the weights of absent heads drop out."""
    parts = [(code, weights[0]), (doc, weights[1]), (token, weights[2])]
    present = [(h, w) for h, w in parts if h is not None and w > 0]
    if not present:  # every present head weighted 0: fall back to the code model
        return code
    total = sum(w for _, w in present)
    return sum(h * (w / total) for h, w in present)  # type: ignore[return-value]


def combine_rows(
    code: np.ndarray, doc: np.ndarray, has_doc: np.ndarray, token: np.ndarray, weights: Weights
) -> np.ndarray:
    """:func:`combine` over rows at once; ``doc`` rows where ``has_doc`` is False are ignored."""
    wc, wd, wt = weights
    wdoc = np.where(has_doc, wd, 0.0)[:, None]
    num = wc * code + wdoc * np.nan_to_num(doc) + wt * token
    den = wc + wdoc + wt
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), code)


def _grid() -> list[Weights]:
    steps = np.round(np.arange(0.0, 1.0 + 1e-9, GRID_STEP), 6)
    out = [
        (float(a), float(b), float(c))
        for a, b, c in product(steps, repeat=3)
        if abs(a + b + c - 1.0) < 1e-6 and a + c > 0  # a function without a doc needs a head
    ]
    return out


def macro_f1(y: np.ndarray, pred: np.ndarray, n_classes: int) -> float:
    """The mean over the classes ``0 .. n_classes - 1`` of each class's F1, 2·TP / (2·TP +
    FP + FN), taken as 0 for a class neither true nor predicted: scikit-learn's
    ``f1_score(average="macro", labels=range(n_classes), zero_division=0)``. Computed here
    because this module runs in every process that classifies code (through the weights),
    and importing scikit-learn would cost each about a second of CPU."""
    y = np.asarray(y, dtype=np.int64)
    pred = np.asarray(pred, dtype=np.int64)
    hit = y == pred
    tp = np.bincount(y[hit], minlength=n_classes)[:n_classes]
    true = np.bincount(y, minlength=n_classes)[:n_classes]
    predicted = np.bincount(pred, minlength=n_classes)[:n_classes]
    denominator = true + predicted  # 2·TP + FP + FN
    f1 = np.divide(2 * tp, denominator, out=np.zeros(n_classes), where=denominator > 0)
    return float(f1.mean()) if n_classes else 0.0


def choose_weights(
    y: np.ndarray,
    code: np.ndarray,
    doc: np.ndarray,
    has_doc: np.ndarray,
    token: np.ndarray,
) -> tuple[Weights, float]:
    """The grid weights (sum 1, step 0.1) with the highest macro-F1 of the combined
    prediction; ties go to the weights nearest equal. Returns them and that macro-F1."""
    n = code.shape[1]
    best: tuple[float, float, Weights] = (-1.0, 0.0, (1 / 3, 1 / 3, 1 / 3))
    for w in _grid():
        f1 = macro_f1(y, combine_rows(code, doc, has_doc, token, w).argmax(1), n)
        closeness = -sum(abs(x - 1 / 3) for x in w)
        if (f1, closeness) > best[:2]:
            best = (f1, closeness, w)
    return best[2], best[0]


def choose_language_weights(
    y: np.ndarray,
    languages: Sequence[str],
    code: np.ndarray,
    doc: np.ndarray,
    has_doc: np.ndarray,
    token: np.ndarray,
) -> dict[str, dict[str, object]]:
    """Weights per language and over all (:data:`DEFAULT_KEY`), each with the out-of-fold
    macro-F1 of the chosen and of equal weights, and the number of functions."""
    langs = np.asarray(languages)
    out: dict[str, dict[str, object]] = {}
    for key in (DEFAULT_KEY, *sorted(set(languages))):
        sel = np.ones(len(y), bool) if key == DEFAULT_KEY else langs == key
        args = (code[sel], doc[sel], has_doc[sel], token[sel])
        w, f1 = choose_weights(y[sel], *args)
        equal = macro_f1(y[sel], combine_rows(*args, EQUAL).argmax(1), code.shape[1])
        out[key] = {
            "weights": [round(x, 3) for x in w],
            "oof_macro_f1": round(f1, 4),
            "oof_macro_f1_equal_weights": round(equal, 4),
            "n": int(sel.sum()),
        }
    return out


def weights_for(ensemble: Mapping[str, object] | None, language: str) -> Weights:
    """The weights stored for ``language`` (else the all-language ones, else equal)."""
    if not ensemble:
        return EQUAL
    table = ensemble.get("weights", {})
    if not isinstance(table, Mapping):
        return EQUAL
    w = table.get(language, table.get(DEFAULT_KEY))
    if w is None:
        return EQUAL
    return (float(w[0]), float(w[1]), float(w[2]))
