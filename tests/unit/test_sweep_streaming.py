"""`predict --sweep --json` writes its points as they are replayed (`Analysis.iter_sweep`,
`jsonout.dump_items`): the same document `analysis.sweep` gives, one prediction in memory
at a time, and a bad point refused before anything is written."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

import perfmodel
from perfmodel.jsonout import dump_items, dumps
from perfmodel.simulate.config import ConfigError
from tests.cli_runner import invoke_cli

LOG = Path(__file__).resolve().parents[1] / "data" / "eventlogs" / "wordcount.zstd"
AXES = ["cores=1,2,4", "mem=512m,2g"]


@pytest.mark.parametrize(
    "items",
    [
        [],
        [{}],
        [1, "two", None],
        [{"a": [1, 2, {"b": []}], "c": 1.5}, {"d": {"e": "f"}}],
        [[], [[1], []], {"x": [{"y": 2}]}],
    ],
)
def test_dump_items_lays_out_as_dumps(items: list[Any]) -> None:
    out = io.StringIO()
    dump_items(iter(items), out)
    assert out.getvalue() == dumps(items) + "\n"


def test_dump_items_is_strict_json_and_keeps_text() -> None:
    out = io.StringIO()
    dump_items(iter([{"nan": math.nan, "inf": -math.inf, "text": "widened ×1.1"}]), out)
    assert json.loads(out.getvalue()) == [{"nan": None, "inf": None, "text": "widened ×1.1"}]


def test_dump_items_writes_each_item_as_it_comes() -> None:
    out = io.StringIO()
    seen: list[str] = []

    def items() -> Any:
        for i in range(3):
            seen.append(out.getvalue())
            yield {"i": i}

    dump_items(items(), out)
    assert seen[0] == "" and '"i": 0' in seen[1] and '"i": 1' in seen[2]


def test_iter_sweep_is_lazy_and_equals_sweep() -> None:
    analysis = perfmodel.load(LOG)
    points = analysis.iter_sweep(AXES)
    assert not isinstance(points, list)
    lazy = [(p.settings, p.prediction.as_dict()) for p in points]
    eager = [(p.settings, p.prediction.as_dict()) for p in analysis.sweep(AXES)]
    assert lazy == eager and len(lazy) == 6


def test_a_bad_point_is_refused_before_any_replay() -> None:
    analysis = perfmodel.load(LOG)  # local mode: executors cannot change
    with pytest.raises(ConfigError):
        analysis.iter_sweep(["cores=1,2", "executors=1,2"])


def test_summary_keeps_all_but_the_stages() -> None:
    point = perfmodel.load(LOG).sweep(["cores=1"])[0]
    summary = point.summary()
    assert point.prediction.stages and summary.prediction.stages == []
    full, short = point.prediction.as_dict(), summary.prediction.as_dict()
    assert {k: v for k, v in full.items() if k != "stages"} == {
        k: v for k, v in short.items() if k != "stages"
    }


def test_cli_sweep_json_is_the_facades_sweep() -> None:
    result = invoke_cli(["predict", str(LOG), "--sweep", *AXES, "--json"])
    assert result.exit_code == 0, result.output
    want = [
        {"settings": p.settings, **p.prediction.as_dict()} for p in perfmodel.load(LOG).sweep(AXES)
    ]
    assert json.loads(result.output) == json.loads(dumps(want))


def test_cli_bad_point_writes_no_json() -> None:
    args = ["predict", str(LOG), "--sweep", "cores=1,2", "executors=1,2", "--json"]
    result = invoke_cli(args)
    assert result.exit_code == 2
    assert "[" not in result.stdout and "error:" in result.output
