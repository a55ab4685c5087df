"""Collapsed-stack and speedscope exports (formats read by flamegraph.pl and speedscope)."""

from __future__ import annotations

import json
from pathlib import Path

from perfmodel.report import render_to_file, renderer
from perfmodel.report.flame import collapsed, speedscope

STACKS = {
    ("main", "Executor.run", "SHA5.implCompress"): 7,
    ("main", "Executor.run", "FileInputStream.readBytes"): 3,
    ("main", "odd;name"): 1,
}


def test_collapsed_is_root_first_heaviest_first() -> None:
    lines = collapsed(STACKS).splitlines()
    assert lines[0] == "main;Executor.run;SHA5.implCompress 7"
    assert lines[1] == "main;Executor.run;FileInputStream.readBytes 3"
    assert lines[2] == "main;odd:name 1"  # a ';' inside a frame would split it


def test_speedscope_shares_frames_and_weights_counts(tmp_path: Path) -> None:
    doc = speedscope({"jvm": STACKS, "python": {("main", "f (app.py)"): 2}}, "run")
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert names.count("main") == 1
    jvm, py = doc["profiles"]
    assert jvm["type"] == "sampled" and jvm["endValue"] == 11 and sum(jvm["weights"]) == 11
    assert [names[i] for i in jvm["samples"][0]] == ["main", "Executor.run", "SHA5.implCompress"]
    assert py["weights"] == [2]
    profiles = {"jvm": STACKS, "python": {("main", "f (app.py)"): 2}}
    folded = render_to_file(
        tmp_path / "all.collapsed", lambda f: renderer("text").stacks(profiles, f, name="all")
    )
    scope = render_to_file(
        tmp_path / "all.speedscope.json",
        lambda f: renderer("speedscope").stacks(profiles, f, name="all"),
    )
    assert folded.read_text() == collapsed(
        {**STACKS, ("main", "f (app.py)"): 2}
    )  # the text form merges every profile
    assert json.loads(scope.read_text()) == speedscope(profiles, "all")
