"""The identifier-token head: numpy inference equals the scikit-learn pipeline it came from,
and it survives a save/load round trip through safetensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from perfmodel.embed.classifier import average_heads
from perfmodel.embed.token_model import TokenModel, char_wb_grams, from_sklearn, function_text

TEXTS = [
    "socket recv into buffer socket",
    "socket send all bytes",
    "http connection request send",
    "file read bytes path",
    "file write path flush",
    "disk path open read",
    "hash update crc table",
    "sort merge compare keys",
    "compress deflate block hash",
]
LABELS = [2, 2, 2, 1, 1, 1, 0, 0, 0]


def _fitted() -> tuple[TfidfVectorizer, LogisticRegression]:
    vec = TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True, min_df=1)
    lr = LogisticRegression(C=3.0, max_iter=2000, class_weight="balanced", random_state=0)
    lr.fit(vec.fit_transform(TEXTS), LABELS)
    return vec, lr


def test_numpy_inference_equals_sklearn() -> None:
    vec, lr = _fitted()
    head = from_sklearn(vec, lr)
    queries = [*TEXTS, "Socket socket read path", "never seen words", ""]
    expected = lr.predict_proba(vec.transform(queries))
    np.testing.assert_allclose(head.probabilities(queries), expected, atol=1e-9)


def test_character_ngram_head_equals_sklearn() -> None:
    """The third head reads each subtoken's character n-grams (char_wb); words shorter
    than the longest n-gram, one-letter words and unseen words included."""
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, min_df=1)
    lr = LogisticRegression(C=3.0, max_iter=2000, class_weight="balanced", random_state=0)
    lr.fit(vec.fit_transform(TEXTS), LABELS)
    head = from_sklearn(vec, lr)
    assert head.char_ngrams == (3, 5)
    queries = [*TEXTS, "Sock recvall x io", "a b", "zzzz qqq", ""]
    expected = lr.predict_proba(vec.transform(queries))
    np.testing.assert_allclose(head.probabilities(queries), expected, atol=1e-9)


def test_char_wb_grams_match_sklearns_analyzer() -> None:
    analyze = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).build_analyzer()
    for text in ["a", "ab cd", "socket", "x yz hello", "abc"]:
        assert char_wb_grams(text.split(), (2, 4)) == analyze(text)


def test_round_trip_through_a_safetensors_file(tmp_path: Path) -> None:
    vec, lr = _fitted()
    head = from_sklearn(vec, lr)
    # scikit-learn's coef_ can be Fortran-ordered: written as is, its bytes came back
    # scrambled (the shipped head once disagreed with scikit-learn on 36% of functions).
    head.coef = np.asfortranarray(head.coef)
    save_file(head.tensors(), str(tmp_path / "t.safetensors"))
    again = TokenModel.from_tensors(head.vocab, load_file(str(tmp_path / "t.safetensors")))
    np.testing.assert_allclose(again.probabilities(TEXTS), head.probabilities(TEXTS), atol=1e-5)
    grams = TokenModel.from_tensors(head.vocab, head.tensors(), [3, 5])
    assert grams.char_ngrams == (3, 5)


def test_function_text_reads_identifiers_and_name() -> None:
    ast = ["function_definition", [["identifier", "recv_all"], ["identifier", "sock"]]]
    text = function_text(ast, "python", ("net", "util", "recv", "all"), 400).split()
    assert {"recv", "all", "sock", "net", "util"} <= set(text)
    assert function_text(None, "java", ("java", "net", "socket"), 400).split() == [
        "java",
        "net",
        "socket",
    ]


def test_heads_are_averaged_with_equal_weights() -> None:
    code = np.array([0.6, 0.3, 0.1])
    doc = np.array([0.0, 0.9, 0.1])
    token = np.array([0.3, 0.3, 0.4])
    np.testing.assert_allclose(average_heads(code, doc, token), [0.3, 0.5, 0.2])
    np.testing.assert_allclose(average_heads(code, None, token), [0.45, 0.3, 0.25])
    assert average_heads(code, None, None) is code
