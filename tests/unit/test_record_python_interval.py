"""py-spy's own sampling interval (`--python-interval-ms`), apart from JFR's."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from perfmodel.profile.record.setup import RecordOptions, python_interval


def test_python_interval_defaults_to_the_sampling_interval(tmp_path: Path) -> None:
    assert python_interval(RecordOptions(out=tmp_path, interval_ms=20)) == 20
    options = RecordOptions(out=tmp_path, interval_ms=20, python_interval_ms=50)
    assert python_interval(options) == 50
    assert options.interval_ms == 20  # JFR keeps its own interval


def test_the_record_commands_take_the_python_interval() -> None:
    from perfmodel.cli import build_app
    from perfmodel.cli.cluster import cluster_app

    runner = CliRunner()
    for command in (build_app(), cluster_app):
        refused = runner.invoke(
            command, ["record", "-o", "x", "--python-interval-ms", "0", "--", "true"]
        )
        # Known and range-checked (an unknown option would say "no such option"); the
        # perfmodel app says it on one `error:` line, the bare cluster app in click's words.
        assert refused.exit_code == 2 and "invalid value for" in refused.output.lower()
        assert "--python-interval-ms" in refused.output
