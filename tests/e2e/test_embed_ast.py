"""Binarization keeps every leaf and yields a proper binary tree; batching is exact."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from perfmodel.embed.ast import NAME_LEAF, NO_SOURCE_LEAF, binarize, original_leaves, subtokens
from perfmodel.embed.code_model import CodeModelConfig, RecursiveAutoencoder
from perfmodel.embed.source.extract import Extractor, function_ast
from perfmodel.embed.tree_batch import EncodedTree, TreeEncoder, collate, encode_tree
from perfmodel.embed.vocab import Vocab
from tests.conftest import TEST_DATA

JAVA = b"""
package demo;
class Reader {
    /** Reads bytes from the socket into the buffer. */
    int readAll(java.net.Socket socket, byte[] buf) throws java.io.IOException {
        int total = 0, n;
        while ((n = socket.getInputStream().read(buf, total, buf.length - total)) > 0) {
            total += n;
        }
        return total;
    }
    static long checksum(byte[] data) {
        long h = 7; for (byte b : data) { h = h * 31 + b; } return h;
    }
}
"""


def _java_asts() -> list[list]:
    parsed = Extractor().parse(JAVA, "java", "demo")
    return [function_ast(parsed, fn)[0] for fn in parsed.functions]


def _is_binary_tree(tree) -> None:
    n_nodes = tree.n_leaves + len(tree.left)
    used = [0] * n_nodes
    for j, (a, b) in enumerate(zip(tree.left, tree.right, strict=True)):
        assert a < tree.n_leaves + j and b < tree.n_leaves + j  # children precede parents
        used[a] += 1
        used[b] += 1
    # every node except the root is the child of exactly one parent
    assert used[tree.root] == 0
    assert all(u == 1 for i, u in enumerate(used) if i != tree.root)


def _count_inner(ast: list) -> int:
    typ, payload = ast
    return 0 if isinstance(payload, str) else 1 + sum(_count_inner(c) for c in payload)


def test_binarization_keeps_every_leaf_in_order() -> None:
    for ast in _java_asts():
        leaves = original_leaves(ast)
        tree = binarize(ast, "java", ("demo", "reader"), max_nodes=None)
        _is_binary_tree(tree)
        # leaves: the name, one type leaf per original inner node, every original leaf
        assert tree.n_leaves == 1 + _count_inner(ast) + len(leaves)
        assert tree.leaf_types[0] == NAME_LEAF
        original_types = [
            t for t in tree.leaf_types[1:] if t.split(":", 1)[1] in {typ for typ, _ in leaves}
        ]
        assert len(original_types) >= len(leaves)
        # their identifier subtokens survive, in source order
        got = [toks for toks in tree.leaf_tokens[1:] if toks]
        assert got == [subtokens(text) for _, text in leaves if subtokens(text)]


def test_binarization_is_balanced() -> None:
    wide = ["block", [["identifier", f"x{i}"] for i in range(64)]]
    tree = binarize(wide, "java", ("f",), max_nodes=None)
    _is_binary_tree(tree)
    assert tree.n_leaves == 1 + 1 + 64  # name, block type, 64 identifiers
    assert int(tree.heights().max()) <= 8  # log2(65) + name level, not 65


def test_name_only_tree() -> None:
    tree = binarize(None, "java", ("java", "net", "socket", "read"))
    assert tree.leaf_types == (NAME_LEAF, NO_SOURCE_LEAF)
    assert tree.left == (0,) and tree.right == (1,)


def test_pruning_caps_nodes() -> None:
    ast = _java_asts()[0]
    small = binarize(ast, "java", ("f",), max_nodes=10)
    full = binarize(ast, "java", ("f",), max_nodes=None)
    _is_binary_tree(small)
    assert small.n_leaves < full.n_leaves


def _reference_root(model: RecursiveAutoencoder, tree, types: Vocab, words: Vocab) -> torch.Tensor:
    """Plain recursive evaluation, node by node, to check the level-batched forward."""
    enc = encode_tree(tree, types, words)
    leaves = model.leaves(collate([enc]))
    vec: dict[int, torch.Tensor] = {i: leaves[i] for i in range(tree.n_leaves)}
    for j, (a, b) in enumerate(zip(tree.left, tree.right, strict=True)):
        h = torch.cat([vec[a], vec[b]])
        vec[tree.n_leaves + j] = torch.nn.functional.normalize(torch.tanh(model.encode(h)), dim=0)
    return vec[tree.root]


def test_level_batching_matches_recursion() -> None:
    torch.manual_seed(0)
    trees = [binarize(a, "java", ("demo", "reader"), max_nodes=None) for a in _java_asts()]
    trees.append(binarize(None, "java", ("x", "y")))
    types = Vocab.build(t for tr in trees for t in tr.leaf_types)
    words = Vocab.build(w for tr in trees for toks in tr.leaf_tokens for w in toks)
    model = RecursiveAutoencoder(CodeModelConfig(len(types), len(words), 3, dim=16))
    with torch.no_grad():
        batched = model(collate([encode_tree(t, types, words) for t in trees])).embedding
        for i, tree in enumerate(trees):
            ref = _reference_root(model, tree, types, words)
            np.testing.assert_allclose(batched[i].numpy(), ref.numpy(), atol=1e-5)


def test_vocab_unknown_is_zero() -> None:
    v = Vocab.build(["a", "b", "a"], min_count=2)
    assert v.tokens == ("<unk>", "a")
    assert v.ids(["a", "zzz"]) == [1, 0]


def _assert_same_encoding(fast: EncodedTree, ref: EncodedTree) -> None:
    for f in ("leaf_type", "sub_ids", "sub_len", "left", "right", "height"):
        a, b = getattr(fast, f), getattr(ref, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), f


@pytest.mark.parametrize("max_nodes", [None, 0, 1, 3, 10, 37, 400])
def test_tree_encoder_equals_binarize_then_encode(max_nodes: int | None) -> None:
    """The fused inference encoder yields exactly the arrays of the two-step form."""
    reference = json.loads((TEST_DATA / "classifier_reference.json").read_text())["functions"]
    cases = [(a, "java", ("demo", "reader")) for a in _java_asts()]
    cases.append((["block", [["identifier", f"x{i}"] for i in range(64)]], "java", ("f",)))
    cases.append((["identifier", "readAll"], "java", ("solo",)))  # a leaf as the whole AST
    cases.append((["block", []], "python", ()))
    cases += [(f["ast"], f["language"], tuple(f["name_tokens"])) for f in reference]
    cases += [(None, lang, toks) for _, lang, toks in cases[:3]]
    trees = [binarize(a, lang, toks, max_nodes) for a, lang, toks in cases]
    types = Vocab.build(t for tr in trees[::2] for t in tr.leaf_types)  # some unknown
    words = Vocab.build(w for tr in trees[::2] for toks in tr.leaf_tokens for w in toks)
    encoder = TreeEncoder(types, words, max_nodes, cache_size=50)  # cache refills too
    for _ in range(2):  # cold, then warm caches
        for (ast, lang, toks), tree in zip(cases, trees, strict=True):
            _assert_same_encoding(encoder.encode(ast, lang, toks), encode_tree(tree, types, words))
