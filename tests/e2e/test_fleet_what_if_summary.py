"""`perfmodel fleet`'s what-if table says, per scenario, how many applications it could not
predict and why: a scenario that applies to none reads as such, not as zeros."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli_runner import invoke_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd"


def test_a_scenario_that_applies_to_no_application_says_why(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(EXAMPLE, logs / "a.zstd")
    args = ["fleet", str(logs), "--out", str(tmp_path / "out"), "--what-if", "cores=2x"]
    args += ["--what-if", "max-executors=2x"]  # a local-mode run has no executors to cap
    result = invoke_cli([*args, "--json"])
    assert result.exit_code == 0, result.output
    rows = {p["what_if"]: p for p in json.loads(result.stdout)["predictions"]}
    assert rows["cores=2x"]["apps"] == 1 and rows["cores=2x"]["not_predicted"] == 0
    capped = rows["max-executors=2x"]
    assert (capped["apps"], capped["not_predicted"]) == (0, 1)
    assert capped["observed_s"] is None and capped["predicted_s"] is None
    assert capped["why_not"]
    text = invoke_cli(args).stdout
    line = next(t for t in text.splitlines() if t.lstrip().startswith("max-executors=2x"))
    assert "1: " in line
