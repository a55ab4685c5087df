"""Gradients flow through both models: their losses fall on a tiny labeled set."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import torch
from torch.nn import functional as F

from perfmodel.embed.ast import binarize
from perfmodel.embed.charlm import CharLMConfig, CharLMSpec, build_language_model, train_char_lm
from perfmodel.embed.code_model import CodeModelConfig, RecursiveAutoencoder
from perfmodel.embed.doc_model import DocEmbedder, DocGRU, DocModelConfig, doc_words
from perfmodel.embed.tree_batch import collate, encode_tree
from perfmodel.embed.vocab import Vocab
from perfmodel.embed.word_embeddings import flair_embedder

TINY_LM = CharLMConfig(
    hidden_size=16, embedding_size=8, epochs=1, sequence_length=20, mini_batch_size=4
)

EXAMPLES = [  # (identifier words in a call, label index): 0 cpu, 1 disk, 2 network
    (["inflate", "buffer", "checksum"], 0),
    (["hash", "digest", "update"], 0),
    (["sort", "compare", "array"], 0),
    (["file", "channel", "read"], 1),
    (["fsync", "descriptor", "write"], 1),
    (["directory", "list", "path"], 1),
    (["socket", "recv", "buffer"], 2),
    (["connect", "address", "port"], 2),
    (["http", "request", "send"], 2),
]

DOCS = [
    ("Compresses the input buffer and updates the checksum.", 0),
    ("Computes the message digest of the given bytes.", 0),
    ("Sorts the array in ascending order.", 0),
    ("Reads bytes from this file into the buffer.", 1),
    ("Forces updates to the file to be written to the storage device.", 1),
    ("Lists the entries of the directory.", 1),
    ("Receives data from the socket connection.", 2),
    ("Connects this socket to the remote address.", 2),
    ("Sends the HTTP request to the server.", 2),
]


def _ast(words: list[str]) -> list:
    call = ["method_invocation", [["identifier", w] for w in words]]
    return ["method_declaration", [["identifier", "run"], ["block", [call]]]]


def test_code_model_learns_and_all_parameters_get_gradients() -> None:
    torch.manual_seed(0)
    trees = [binarize(_ast(w), "java", ("demo", "ops")) for w, _ in EXAMPLES]
    types = Vocab.build(t for tr in trees for t in tr.leaf_types)
    words = Vocab.build(w for tr in trees for toks in tr.leaf_tokens for w in toks)
    model = RecursiveAutoencoder(CodeModelConfig(len(types), len(words), 3, dim=16))
    batch = collate([encode_tree(t, types, words) for t in trees])
    y = torch.tensor([label for _, label in EXAMPLES])
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses, recon = [], []
    for step in range(60):
        out = model(batch)
        loss = F.cross_entropy(out.logits, y) + 0.1 * out.reconstruction
        opt.zero_grad()
        loss.backward()
        if step == 0:
            for name, p in model.named_parameters():
                assert p.grad is not None and p.grad.abs().sum() > 0, name
        opt.step()
        losses.append(loss.item())
        recon.append(out.reconstruction.item())
    assert losses[-1] < 0.3 * losses[0]
    assert recon[-1] < recon[0]  # the autoencoder part learns too
    assert (model(batch).logits.argmax(1) == y).all()


def test_doc_model_learns_over_flair_embeddings() -> None:
    torch.manual_seed(0)
    texts = [d for d, _ in DOCS] * 20
    spec, state = train_char_lm(texts, True, TINY_LM, seed=0)
    assert not any(k.startswith("decoder.") for k in state)
    embedder = DocEmbedder.from_flair(flair_embedder([build_language_model(spec, state)]))
    vectors = embedder.embed([d for d, _ in DOCS] + [""])
    assert vectors[-1] is None
    assert all(
        v is not None and v.shape == (len(doc_words(d)), embedder.dim)
        for v, (d, _) in zip(vectors, DOCS, strict=False)
    )
    model = DocGRU(DocModelConfig(embedder.dim, 3, hidden=16))
    model.dropout.p = 0.0
    y = torch.tensor([label for _, label in DOCS])
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    seqs = [v for v in vectors if v is not None]
    losses = []
    for step in range(80):
        loss = F.cross_entropy(model(seqs), y)
        opt.zero_grad()
        loss.backward()
        if step == 0:
            for name, p in model.named_parameters():
                assert p.grad is not None and p.grad.abs().sum() > 0, name
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


EDGE_DOCS = [
    "Reads up to len bytes of data from the input stream into an array of bytes.",
    "Returns the value; see {@link #get(int)} -- x2 & y_3 (in UTF-8).",
    "Ünïcödé “quotes” — 𝛼β and ☃ are chars the LM never saw.",
    "A",
    "aVeryLongIdentifierLikeWordThatGoesOnAndOnAndOnForQuiteSomeCharacters_0123456789",
    "!!! ... ???",
    "",
    "   ",
    "Reads up to len bytes of data from the input stream into an array of bytes.",  # again
    " ".join(f"word{i}" for i in range(80)),  # truncated to MAX_DOC_WORDS
]


def _stack(lms: list[Any], glove: bool, **flair_options: object) -> Any:
    from flair.embeddings import FlairEmbeddings, StackedEmbeddings, WordEmbeddings

    parts: list[Any] = [FlairEmbeddings(lm, **flair_options) for lm in lms]
    if glove:
        vocab = {w: i for i, w in enumerate(["the", "reads", "bytes", "of", "#", "x0", "a"])}
        words = WordEmbeddings(None, vocab=vocab, embedding_length=5, name="glove")
        words.embedding = torch.nn.Embedding.from_pretrained(torch.randn(len(vocab) + 1, 5))
        parts.append(words)
    return StackedEmbeddings(parts)


def _assert_same_vectors(a: list[torch.Tensor | None], b: list[torch.Tensor | None]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.shape == y.shape
            torch.testing.assert_close(x, y, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"with_whitespace": False},
        {"chars_per_chunk": 7},  # Flair cuts the characters into chunks; the direct path not
    ],
)
def test_direct_doc_embedding_equals_flair(options: dict[str, object]) -> None:
    """Running the char LMs directly gives Flair's vectors: same offsets, order, lookups."""
    torch.manual_seed(0)
    chars = sorted(set("".join(EDGE_DOCS)) - set("☃𝛼"))
    lms = [build_language_model(CharLMSpec(chars, forward, 12, 6, 1)) for forward in (True, False)]
    for glove in (False, True):
        embedder = DocEmbedder.from_flair(
            _stack(lms, glove, **options), batch_size=3, max_batch_chars=400
        )
        assert embedder.direct
        got = embedder.embed(EDGE_DOCS)
        assert got[6] is None and got[7] is None
        assert got[0] is not None and got[0].shape == (len(doc_words(EDGE_DOCS[0])), embedder.dim)
        _assert_same_vectors(got, embedder.embed_with_flair(EDGE_DOCS))


def test_an_embedder_of_stored_weights_is_flairs_without_importing_it() -> None:
    """`DocEmbedder.from_weights` (what classifying runs) gives the vectors of Flair's own
    Sentence path over the same weights rebuilt as Flair LanguageModels, GloVe included, in
    a process that never imports Flair."""
    torch.manual_seed(0)
    chars = sorted(set("".join(EDGE_DOCS)) - set("☃𝛼"))
    charlms = []
    for forward in (True, False):
        lm = build_language_model(CharLMSpec(chars, forward, 12, 6, 1))
        state = {k: v for k, v in lm.state_dict().items() if not k.startswith("decoder.")}
        charlms.append((CharLMSpec(chars, forward, 12, 6, 1), state))
    for glove in (False, True):
        ours = DocEmbedder.from_weights(charlms, glove=glove, batch_size=3, max_batch_chars=400)
        flair = DocEmbedder.from_flair(
            flair_embedder([build_language_model(s, w) for s, w in charlms], glove=glove)
        )
        assert ours.dim == flair.dim
        _assert_same_vectors(ours.embed(EDGE_DOCS), flair.embed_with_flair(EDGE_DOCS))
    code = (
        "import sys, torch\n"
        "from perfmodel.embed.charlm import CharLMSpec\n"
        "from perfmodel.embed.doc_model import DocEmbedder\n"
        "spec = CharLMSpec(list('abc '), True, 4, 3, 1)\n"
        "state = {'encoder.weight': torch.zeros(5, 3)}\n"
        "rnn = torch.nn.LSTM(3, 4, 1)\n"
        "state.update({'rnn.' + k: v for k, v in rnn.state_dict().items()})\n"
        "vectors = DocEmbedder.from_weights([(spec, state)], glove=True).embed(['a b'])\n"
        "assert vectors[0].shape == (2, 54), vectors[0].shape\n"
        "sys.exit('flair imported' if 'flair' in sys.modules else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_unsupported_stacks_fall_back_to_flair() -> None:
    torch.manual_seed(0)
    lm = build_language_model(CharLMSpec(sorted(set("abcdefghij ")), True, 8, 4, 1))
    embedder = DocEmbedder.from_flair(_stack([lm], False, is_lower=True))
    assert not embedder.direct
    _assert_same_vectors(embedder.embed(EDGE_DOCS), embedder.embed_with_flair(EDGE_DOCS))


def test_direct_doc_embedding_stacks_in_flairs_order() -> None:
    """Flair concatenates a token's embeddings sorted by name: "10-..." before "2-..."."""
    torch.manual_seed(0)
    chars = sorted(set("".join(EDGE_DOCS)))
    lms = [build_language_model(CharLMSpec(chars, i % 2 == 0, 3 + i, 4, 1)) for i in range(10)]
    embedder = DocEmbedder.from_flair(_stack(lms, True))
    assert embedder.direct
    _assert_same_vectors(embedder.embed(EDGE_DOCS), embedder.embed_with_flair(EDGE_DOCS))
