"""`perfmodel corpus build|locate` through typer's test runner."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import invoke_cli

DATA = Path(__file__).parents[1] / "data" / "corpus"
ROOT_ARGS = [
    "--root",
    f"test-java={DATA / 'java'}",
    "--root",
    f"test-scala={DATA / 'scala'}",
    "--root",
    f"test-python={DATA / 'python'}",
]


def test_build_json(tmp_path: Path) -> None:
    res = invoke_cli(
        [
            "corpus",
            "build",
            "--manifest",
            str(DATA / "manifests"),
            *ROOT_ARGS,
            "--out",
            str(tmp_path / "out"),
            "--split",
            str(tmp_path / "split.json"),
            "-j",
            "1",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    stats = json.loads(res.stdout)
    assert stats["functions"] >= 10
    assert set(stats["by_label"]) == {"cpu", "disk", "network"}
    assert (tmp_path / "out" / "functions.parquet").is_file()
    assert (tmp_path / "split.json").is_file()


def test_build_bad_manifest_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "labels.toml").write_text(
        '[labels.cpu]\ndescription="c"\n[labels.disk]\ndescription="d"\n'
    )
    (tmp_path / "bad.toml").write_text(
        '[source]\nlanguage="java"\nroots=["x"]\n'
        '[[rule]]\npattern="a..b"\nlabel="cpu"\nreason="r"\n'
    )
    res = invoke_cli(["corpus", "build", "--manifest", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "bad.toml: rule #1 (a..b)" in res.output
    assert "Traceback" not in res.output


def test_build_missing_root_and_bad_root_spec(tmp_path: Path) -> None:
    res = invoke_cli(
        ["corpus", "build", "--manifest", str(DATA / "manifests"), "--out", str(tmp_path / "o")],
    )
    assert res.exit_code == 2 and "source root 'test-" in res.output
    res = invoke_cli(
        [
            "corpus",
            "build",
            "--manifest",
            str(DATA / "manifests"),
            "--root",
            "test-java=/no/such/dir",
        ],
    )
    assert res.exit_code == 2 and "does not exist" in res.output
    res = invoke_cli(["corpus", "build", "--root", "justapath"])
    assert res.exit_code == 2 and "NAME=PATH" in res.output


def test_locate_json_and_text() -> None:
    frames = [
        "com.example.io.BlockReader.readBlock(byte[]) line: 32",
        "org.apache.spark.rdd.RDD.iterator(Partition, TaskContext) line: 329",
    ]
    res = invoke_cli(
        ["corpus", "locate", "--no-default-roots", "--root", str(DATA / "java"), "--json", *frames],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [o["source_found"] for o in out] == [True, False]
    assert out[0]["doc"].startswith("Reads the next block") and "ast" not in out[0]
    assert out[1]["name_tokens"] == ["org", "apache", "spark", "rdd", "rdd", "iterator"]
    res = invoke_cli(
        ["corpus", "locate", "--no-default-roots", "--root", str(DATA / "java"), frames[0]],
    )
    assert res.exit_code == 0 and "BlockReader.java" in res.stdout and "found" in res.stdout
