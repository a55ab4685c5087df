"""Acceptance: replaying the baseline reproduces each shared real log's observed runtime.

The target is 5%. Where this model cannot reach it, the log is listed in KNOWN_GAPS with
the reason and a looser bound that still catches regressions; the figure for every log is
printed (run with ``-s`` to see the table).
"""

from pathlib import Path

import pytest

from perfmodel.simulate.replay import replay

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
EVENTLOGS = SHARED / "data" / "eventlogs"
TARGET = 0.05

KNOWN_GAPS: dict[str, tuple[float, str]] = {
    "application_1538416563558_0014": (
        0.25,
        "executors are lost and replaced again and again under dynamic allocation; the "
        "retried tasks waited for replacement executors (request backlog, exclusion) in "
        "ways the observed executor timeline alone does not determine",
    ),
    "example_spark_event_log.txt": (
        0.12,
        "stage 1 never used more than 7 of its 9 slots although 100 tasks were pending: "
        "tasks waited for data locality (spark.locality.wait), which is not replayed",
    ),
    "spark_event_log_example": (
        0.08,
        "stage 2 took 16.8 s for 26 task-seconds on 4 slots: tasks waited for locality "
        "(spark.locality.wait), which is not replayed",
    ),
    "application_1489705648216_1600": (
        0.08,
        "dynamic allocation with 19 executors on 10 hosts; tasks waited for locality and "
        "for executors between stages beyond what the executor timeline shows",
    ),
}


def _logs() -> list[Path]:
    if not EVENTLOGS.is_dir():
        return []
    return sorted(p for p in EVENTLOGS.iterdir() if p.name != "SOURCES.md")


@pytest.mark.skipif(not EVENTLOGS.is_dir(), reason=f"shared event logs not found at {EVENTLOGS}")
@pytest.mark.parametrize("log", _logs(), ids=lambda p: p.name)
def test_baseline_replay_reproduces_observed_runtime(log: Path) -> None:
    from perfmodel.spark.load import build_profile

    profile = build_profile(log).profile
    prediction = replay(profile)
    error = prediction.model_error
    print(
        f"\n{log.name}: observed {prediction.observed_s:.1f} s, baseline replay "
        f"{prediction.baseline_replay_s:.1f} s, model error {error:+.1%}"
    )
    bound, reason = KNOWN_GAPS.get(log.name, (TARGET, ""))
    assert abs(error) <= bound, reason or f"baseline replay off by {error:+.1%}"
    if reason and abs(error) <= TARGET:
        pytest.fail(f"{log.name} now meets the 5% target: remove it from KNOWN_GAPS")


@pytest.mark.skipif(not EVENTLOGS.is_dir(), reason=f"shared event logs not found at {EVENTLOGS}")
def test_predict_cli_on_a_real_log() -> None:
    import json

    import typer
    from typer.testing import CliRunner

    from perfmodel.cli import predict as predict_cli

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """harness"""

    predict_cli.register(app)
    log = EVENTLOGS / "eventlog_v2_local-1623876083964"
    result = CliRunner().invoke(app, ["predict", str(log), "--cores", "24", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["baseline_config"]["slots"] == 12
    assert data["config"]["host_cores"] == 12  # local[*]: the machine had 12 cores
    # 24 slots on 12 busy cores: little gain (slots are not cores), never a halving.
    assert data["predicted_s"] > 0.8 * data["baseline_replay_s"]
    assert len(data["stages"]) == 4
