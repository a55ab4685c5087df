"""The heads' combination and its choice: folds by package, weights by macro-F1."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from perfmodel.embed.ensemble import (
    EQUAL,
    choose_language_weights,
    choose_weights,
    combine,
    combine_rows,
    macro_f1,
    package_folds,
    weights_for,
)


def test_folds_keep_packages_whole_and_spread_every_label() -> None:
    packages = [f"p{i // 5}" for i in range(60)]  # 12 packages of 5 functions
    labels = [["cpu", "disk", "network"][int(p[1:]) % 3] for p in packages]
    folds = package_folds(packages, labels, 3, seed=13)
    assert sorted(i for f in folds for i in f) == list(range(60))
    for f in folds:
        assert {labels[i] for i in f} == {"cpu", "disk", "network"}
        others = {packages[i] for g in folds if g is not f for i in g}
        assert not {packages[i] for i in f} & others
    assert package_folds(packages, labels, 3, seed=13) == folds  # deterministic


def test_combine_weights_present_heads_only() -> None:
    code, doc, token = np.array([0.6, 0.2, 0.2]), np.array([0.0, 1.0, 0.0]), np.array([0, 0, 1.0])
    np.testing.assert_allclose(combine(code, doc, token, (0.5, 0.25, 0.25)), [0.3, 0.35, 0.35])
    # no doc: code and tokens renormalized to 2/3 and 1/3
    np.testing.assert_allclose(
        combine(code, None, token, (0.5, 0.25, 0.25)), [0.4, 0.2 * 2 / 3, 0.2 * 2 / 3 + 1 / 3]
    )
    np.testing.assert_allclose(combine(code, None, None, EQUAL), code)
    rows = combine_rows(
        np.stack([code, code]),
        np.stack([doc, np.full(3, np.nan)]),
        np.array([True, False]),
        np.stack([token, token]),
        (0.5, 0.25, 0.25),
    )
    np.testing.assert_allclose(rows[0], combine(code, doc, token, (0.5, 0.25, 0.25)))
    np.testing.assert_allclose(rows[1], combine(code, None, token, (0.5, 0.25, 0.25)))


def test_weights_follow_the_head_that_is_right() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    right = np.eye(3)[y] * 0.6 + 0.4 / 3  # always right, not very confident
    wrong = np.eye(3)[(y + 1) % 3] * 0.9 + 0.1 / 3  # always wrong, confident
    has = np.ones(300, bool)
    w, f1 = choose_weights(y, wrong, wrong, has, right)
    assert f1 == pytest.approx(1.0)
    assert w[2] > w[0] + w[1]
    # when every choice scores the same, equal weights win the tie
    w, _ = choose_weights(y, right, right, has, right)
    assert max(w) - min(w) <= 0.1 + 1e-9


def test_language_weights_and_lookup() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 200)
    langs = ["java"] * 100 + ["python"] * 100
    right = np.eye(3)[y] * 0.6 + 0.4 / 3
    wrong = np.eye(3)[(y + 1) % 3] * 0.9 + 0.1 / 3
    code = np.concatenate([right[:100], wrong[100:]])  # code right on Java only
    token = np.concatenate([wrong[:100], right[100:]])  # tokens right on Python only
    doc = np.full((200, 3), np.nan)
    sel = choose_language_weights(y, langs, code, doc, np.zeros(200, bool), token)
    assert set(sel) == {"*", "java", "python"}
    table = {"weights": {k: v["weights"] for k, v in sel.items()}}
    assert weights_for(table, "java")[0] > weights_for(table, "java")[2]
    assert weights_for(table, "python")[2] > weights_for(table, "python")[0]
    assert weights_for(table, "scala") == tuple(sel["*"]["weights"])
    assert weights_for(None, "java") == EQUAL
    assert sel["java"]["oof_macro_f1"] == pytest.approx(1.0)


@given(
    n_classes=st.integers(1, 6),
    pairs=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=60),
)
def test_macro_f1_is_scikit_learn_s(n_classes: int, pairs: list[tuple[int, int]]) -> None:
    """The weights were chosen with scikit-learn's macro-F1; the numpy one that replaced it
    (so that classifying never imports scikit-learn) must rank them the same, so it must be
    the same number: every class counted, absent ones as 0, labels past the classes only as
    misses."""
    y = np.array([a % n_classes for a, _ in pairs])
    pred = np.array([b for _, b in pairs])
    labels = list(range(n_classes))
    expected = f1_score(y, pred, labels=labels, average="macro", zero_division=0)
    assert macro_f1(y, pred, n_classes) == pytest.approx(expected, abs=1e-12)
