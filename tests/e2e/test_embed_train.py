"""End to end on a tiny corpus written in the corpus schema: train, save, load, classify, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfmodel.embed.classifier import FunctionInput, load_classifier
from perfmodel.embed.corpus.dataset import CorpusRecord, write_corpus
from perfmodel.embed.source.extract import Extractor, function_ast
from perfmodel.embed.source.names import name_tokens
from perfmodel.embed.weights import ModelLoadError, load_bundle
from tests.cli_runner import invoke_cli

# (package, label, split, verbs/nouns the methods use, doc sentence)
PACKAGES = [
    ("demo.zip", "cpu", "train", ["inflate", "deflate", "checksum", "crc"], "Compresses data"),
    ("demo.hash", "cpu", "train", ["digest", "hash", "update", "mix"], "Computes the hash"),
    ("demo.math", "cpu", "test", ["multiply", "digest", "checksum", "sort"], "Computes the sum"),
    ("demo.files", "disk", "train", ["file", "fsync", "path", "directory"], "Writes the file"),
    ("demo.store", "disk", "train", ["file", "path", "flush", "disk"], "Reads from disk"),
    ("demo.fs", "disk", "test", ["directory", "file", "fsync", "path"], "Syncs the file"),
    ("demo.net", "network", "train", ["socket", "recv", "send", "connect"], "Reads the socket"),
    ("demo.http", "network", "train", ["http", "request", "socket", "port"], "Sends the request"),
    ("demo.rpc", "network", "test", ["socket", "connect", "recv", "port"], "Receives a reply"),
]


def _java_source(pkg: str, words: list[str], doc: str) -> bytes:
    methods = []
    for i in range(8):
        a, b = words[i % len(words)], words[(i + 1) % len(words)]
        methods.append(
            f"""    /** {doc} with {a} and {b}, step {i}. */
    int {a}{b.capitalize()}{i}(byte[] buf, int {b}Len) {{
        int {a}Count = 0;
        for (int k = 0; k < {b}Len; k++) {{ {a}Count += {b}Helper(buf[k], {a}Count); }}
        return {a}Count + {b}Len;
    }}"""
        )
    body = "\n".join(methods)
    cls = pkg.split(".")[-1].capitalize() + "Impl"
    return f"package {pkg};\nclass {cls} {{\n{body}\n}}\n".encode()


def _python_source(words: list[str], doc: str) -> bytes:
    funcs = []
    for i in range(6):
        a, b = words[i % len(words)], words[(i + 2) % len(words)]
        funcs.append(
            f'''def {a}_{b}_{i}(obj, size):
    """{doc} using {a}; {b} step {i}."""
    total = 0
    for part in obj.{a}_parts(size):
        total += obj.{b}(part)
    return total
'''
        )
    return "\n\n".join(funcs).encode()


def write_tiny_corpus(out: Path) -> Path:
    extractor = Extractor()
    records: list[CorpusRecord] = []
    for pkg, label, split, words, doc in PACKAGES:
        for language, data in (
            ("java", _java_source(pkg, words, doc)),
            ("python", _python_source(words, doc)),
        ):
            module = pkg if language == "java" else pkg + ".impl"
            parsed = extractor.parse(data, language, module)
            for fn in parsed.functions:
                ast, nodes = function_ast(parsed, fn)
                records.append(
                    CorpusRecord(
                        id=f"{language}:{fn.qualified_name}",
                        qualified_name=fn.qualified_name,
                        name=fn.name,
                        class_name=fn.class_name or "",
                        package=pkg,
                        language=language,
                        label=label,
                        signature=fn.signature,
                        body=fn.body,
                        doc=fn.doc,
                        ast=json.dumps(ast),
                        ast_nodes=nodes,
                        name_tokens=list(name_tokens(fn.qualified_name)),
                        root="tests",
                        path=f"{pkg}.{language}",
                        line_start=fn.line_start,
                        line_end=fn.line_end,
                        manifest="test",
                        rule=pkg,
                        split=split,
                    )
                )
    write_corpus(records, out, {"built_at": "test"})
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """`perfmodel train --tiny` on the tiny corpus, once for the module (a training is the
    module's slowest step): the corpus, the model directory and the metrics it saved."""
    root = tmp_path_factory.mktemp("embed")
    corpus = write_tiny_corpus(root / "corpus")
    out = root / "model"
    result = invoke_cli(["train", str(corpus), "--out", str(out), "--tiny"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "config.json").read_text())["metrics"]
    return corpus, out, metrics


def test_training_reports_every_model_on_held_out_packages(
    trained: tuple[Path, Path, dict],
) -> None:
    _, out, metrics = trained
    test = metrics["test"]
    for name in (
        "ensemble (code + doc + tokens, weighted)",
        "ensemble, name only (code + tokens)",
        "average (code + doc + tokens)",
        "average (code + doc)",
        "code model",
        "baseline TF-IDF + LR",
        "doc model (functions with docs)",
        "code model, name only",
    ):
        assert 0.0 <= test[name]["macro_f1"] <= 1.0
        assert test[name]["n"] > 0
    assert test["code model"]["n"] == 3 * (8 + 6)  # the three test packages
    assert sum(map(sum, test["code model"]["confusion"])) == test["code model"]["n"]
    assert set(metrics["aggregation"]) and metrics["timings_s"]["total"] > 0
    files = {p.name for p in out.iterdir()}
    assert {
        "config.json",
        "code_model.safetensors",
        "doc_model.safetensors",
        "charlm_0.safetensors",
        "charlm_1.safetensors",
        "token_model.safetensors",
    } <= files
    assert all("ensemble" in r for r in metrics["test_by_language"].values())
    # epochs and weights are chosen out of fold on the training packages
    config = json.loads((out / "config.json").read_text())
    epochs = config["train_config"]["epochs"]
    assert epochs > 1  # --tiny's 3
    assert {e["epoch"] for e in metrics["training_log"]["code"]} == set(range(1, epochs + 1))
    weights = config["ensemble"]["weights"]
    assert set(weights) == {"*", "java", "python"}
    for w in weights.values():
        assert len(w) == 3 and sum(w) == pytest.approx(1.0) and min(w) >= 0
    assert "test packages were not used" in config["ensemble"]["chosen_on"]
    assert not any(p.suffix in (".pt", ".pkl", ".bin") for p in out.iterdir())


def test_saved_model_reloads_and_predicts_the_same(trained: tuple[Path, Path, dict]) -> None:
    _, out, _ = trained
    clf = load_classifier(out, roots=[])
    items = [
        FunctionInput(
            "demo.net.NetImpl.socketRecv0",
            ("demo", "net", "socket", "recv"),
            "java",
            None,
            "Reads the socket with recv.",
        ),
        FunctionInput("x.y", ("x", "y"), "python"),
    ]
    a = clf.classify(items)
    b = load_classifier(out, roots=[]).classify(items)
    assert [r.vector for r in a] == [r.vector for r in b]
    for r in a:
        assert set(r.vector) == {"cpu", "disk", "network"}
        assert sum(r.vector.values()) == pytest.approx(1.0, abs=1e-5)
        assert r.label == max(r.vector, key=r.vector.get)
    assert a[0].doc_vector is not None and a[1].doc_vector is None
    assert all(r.token_vector is not None for r in a)  # the identifier-token head shipped
    for item, r in zip(items, a, strict=True):  # the shipped weights combine the heads
        w = clf.head_weights(item.language)
        heads = [(r.code_vector, w[0]), (r.doc_vector, w[1]), (r.token_vector, w[2])]
        present = [(h, x) for h, x in heads if h is not None and x > 0]
        for c in r.vector:
            expected = sum(h[c] * x for h, x in present) / sum(x for _, x in present)
            assert r.vector[c] == pytest.approx(expected, abs=1e-5)


def test_frames_without_source_use_their_names(trained: tuple[Path, Path, dict]) -> None:
    _, out, _ = trained
    clf = load_classifier(out, roots=[])
    frames = ["org.apache.spark.rdd.RDD.iterator", "org.apache.spark.rdd.RDD.iterator"]
    res = clf.classify_frames(frames)
    assert len(res) == 2 and res[0] is res[1]  # cached per frame
    assert not res[0].source_found
    assert res[0].explain["note"]


def test_load_errors_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="perfmodel train"):
        load_bundle(tmp_path)
    (tmp_path / "config.json").write_text('{"format_version": 99}')
    with pytest.raises(ModelLoadError, match="format"):
        load_bundle(tmp_path)


def test_cli_classify_json_and_source_file(
    trained: tuple[Path, Path, dict], tmp_path: Path
) -> None:
    _, out, _ = trained
    src = tmp_path / "mod.py"
    src.write_text(_python_source(["socket", "recv", "send"], "Reads the socket").decode())
    result = invoke_cli(
        ["classify", "org.apache.spark.rdd.RDD.iterator", str(src), "--json", "--models", str(out)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data) == 1 + 6
    assert data[0]["frame"] == "org.apache.spark.rdd.RDD.iterator"
    assert data[0]["source_found"] is False
    assert all(d["source_found"] for d in data[1:])
    for d in data:
        assert set(d) == {"frame", "vector", "label", "source_found"}
        assert d["label"] in d["vector"]


def test_cli_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    r = invoke_cli(["classify", "java.net.Socket.connect", "--models", str(tmp_path)])
    assert r.exit_code == 2
    assert "perfmodel train" in r.output and "Traceback" not in r.output
    r = invoke_cli(["train", str(tmp_path / "nope"), "--out", str(tmp_path / "m")])
    assert r.exit_code == 2
    assert "does not exist" in r.output and "Traceback" not in r.output


def test_cli_train_writes_model_and_card(trained: tuple[Path, Path, dict]) -> None:
    _, out, _ = trained
    card = (out / "README.md").read_text()
    assert "macro-F1" in card and "--tiny" in card and "baseline" in card
    assert "out-of-fold" in card and "| python |" in card  # the heads' weights and their origin
    assert (out / "config.json").is_file()
