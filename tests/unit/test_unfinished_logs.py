"""A log cut off after its first stage was submitted but before any task started (a copy taken
while the job starts): nothing can be replayed, and each command says so instead of failing
on a zero-second baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from tests.cli_runner import invoke_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eventlogs" / "etl-local2.zstd"


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example up to its first task start, with the job and stage submitted."""
    with EXAMPLE.open("rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True).read()
    kept: list[bytes] = []
    for line in text.splitlines(keepends=True):
        if json.loads(line)["Event"] == "SparkListenerTaskStart":
            break
        kept.append(line)
    events = [json.loads(line)["Event"] for line in kept]
    assert "SparkListenerStageSubmitted" in events
    path = tmp_path_factory.mktemp("unfinished") / "app.log"
    path.write_bytes(b"".join(kept))
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = invoke_cli(args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_predict_says_there_is_nothing_to_replay(unfinished: Path) -> None:
    code, output = _cli("predict", str(unfinished), "--cores", "2")
    assert code == 2
    assert output.startswith("error: ") and "started a task" in output
    assert "nothing to replay" in output


def test_diagnose_and_report_still_describe_the_log(unfinished: Path, tmp_path: Path) -> None:
    code, output = _cli("diagnose", str(unfinished), "--json")
    assert code == 0
    warnings = json.loads(output)["warnings"]
    assert any("nothing to replay" in w for w in warnings), warnings
    code, output = _cli("report", str(unfinished), "-o", str(tmp_path / "r.html"))
    assert code == 0, output
    assert (tmp_path / "r.html").stat().st_size > 0
