"""`perfmodel fleet`'s terminal summary says what it leaves out (rows past `MAX_ROWS`, the
tail of a long reason) and never prints a non-zero core-hour figure as 0.0; options the
chosen engine would ignore, and a glob that matches nothing, are one error line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from perfmodel.fleet.discover import FleetInputError, walk_inputs
from perfmodel.fleet.summary import FleetSummary
from perfmodel.report.text.fleet import MAX_ROWS, amount, clip, render_summary
from tests.cli_runner import invoke_cli


def _summary(**fields: Any) -> str:
    summary = FleetSummary(logs=1, analysed_now=1, skipped=0, applications=1, errors=0, **fields)
    out = io.StringIO()
    render_summary(summary, Console(file=out, width=400, highlight=False), "/tmp/fleet-out")
    return out.getvalue()


def test_rows_past_max_rows_are_counted_and_located() -> None:
    errors = [{"log_path": f"/l/{i}", "kind": "x", "reason": "bad"} for i in range(MAX_ROWS + 3)]
    failed = [
        {"app_name": "a", "app_id": f"app-{i}", "why": "failed", "failed_tasks": 1}
        for i in range(MAX_ROWS + 1)
    ]
    text = _summary(held_core_hours=1.0, wasted_core_hours=0.5, error_list=errors, failed=failed)
    assert "… and 3 more (see /tmp/fleet-out/errors.parquet or --json)" in text
    assert "… and 1 more (see /tmp/fleet-out/summary.html or --json)" in text
    assert "/l/12" not in text


def test_no_more_line_when_nothing_is_left_out() -> None:
    errors = [{"log_path": f"/l/{i}", "kind": "x", "reason": "bad"} for i in range(MAX_ROWS)]
    assert "more (see" not in _summary(
        held_core_hours=1.0, wasted_core_hours=0.5, error_list=errors
    )


def test_small_core_hours_are_not_printed_as_zero() -> None:
    text = _summary(held_core_hours=0.0421, wasted_core_hours=0.0187)
    assert "0.042 core-hours held, 0.019 wasted." in text
    assert (amount(0.0), amount(2.345), amount(1234.5), amount(0.5)) == (
        "0.0",
        "2.3",
        "1,234.5",
        "0.50",
    )
    assert amount(0.0004, 2) == "0.00040"


def test_a_long_reason_is_cut_at_a_word_with_an_ellipsis() -> None:
    reason = "word " * 60 + "tail"
    cut = clip(reason)
    assert cut.endswith("word…") and len(cut) <= 160
    assert clip("short\nsecond line") == "short …"
    assert clip("") == ""
    assert clip("x" * 300) == "x" * 159 + "…"  # one long word: cut inside it


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--spark-transfer", "weird"], "--spark-transfer 'weird': must be one of"),
        (["--engine", "spark", "--spark-transfer", "weird"], "--spark-transfer 'weird'"),
        (["--master", "yarn"], "--master applies to --engine spark only"),
        (["--spark-staging", "hdfs:///x"], "--spark-staging applies to --engine spark only"),
        (["--spark-conf", "a=b"], "--spark-conf applies to --engine spark only"),
        (["--engine", "sprak", "--master", "x"], "--engine must be one of local, spark"),
    ],
)
def test_an_option_the_engine_ignores_is_refused(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    log = tmp_path / "app-1"
    log.write_text("{}\n")
    args = ["fleet", str(log), "--out", str(tmp_path / "out"), *extra]
    result = invoke_cli(args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and message in result.output
    assert result.output.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_glob_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    pattern = str(tmp_path / "nomatch*")
    with pytest.raises(FleetInputError, match="this glob matches no file or directory"):
        walk_inputs([pattern])
    (tmp_path / "x.crc").touch()
    with pytest.raises(FleetInputError, match="only names that are never logs"):
        walk_inputs([str(tmp_path / "*.crc")])
    result = invoke_cli(["fleet", pattern, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {pattern}: this glob matches no file or directory\n"


def test_a_glob_in_a_listing_that_matches_nothing_is_refused_not_fatal(tmp_path: Path) -> None:
    log = tmp_path / "app-1"
    log.write_text("{}\n")
    listing = tmp_path / "logs.txt"
    listing.write_text(f"{log}\n{tmp_path / 'nomatch*'}\n")
    paths, unusable = walk_inputs([str(listing)])
    assert paths == [str(log.resolve())]
    assert [(u.kind, "no file or directory" in u.reason) for u in unusable] == [("missing", True)]
