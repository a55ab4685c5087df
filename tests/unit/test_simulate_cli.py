"""`perfmodel predict` through Typer's test runner: output, JSON schema, sweeps, errors."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfmodel.analysis import facade as analysis
from perfmodel.simulate.laws import CO_RUNNING_CPU
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.state import remember_profile
from tests.cli_runner import invoke_cli

PREDICTION_KEYS = {
    "observed_s",
    "baseline_replay_s",
    "model_error",
    "predicted_s",
    "config",
    "baseline_config",
    "bottleneck",
    "stages",
}
STAGE_KEYS = {"stage_id", "observed_s", "predicted_s", "bottleneck", "vector"}


@pytest.fixture
def synthetic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fake log path whose loading yields 8 one-second CPU tasks on local[2]."""
    profile = build_synthetic([[StageSpec(0, [TaskSpec(1000, cpu_ms=1000)] * 8)]], 2)
    log = tmp_path / "app.log"
    log.write_text("{}\n")
    loaded: list[str] = []

    def fake_build(source: str, attempt: str | None, **_: object) -> SimpleNamespace:
        loaded.append(str(source))
        # A LoadedProfile of a bare log, as far as the facade reads one.
        return SimpleNamespace(profile=profile, bundle=None, source=SimpleNamespace(path=source))

    monkeypatch.setattr(analysis, "build_profile", fake_build)
    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    return log


def test_json_schema_and_values(synthetic: Path) -> None:
    result = invoke_cli(["predict", str(synthetic), "--cores", "4", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert PREDICTION_KEYS <= set(data)
    assert data["observed_s"] == pytest.approx(4.0)
    assert data["baseline_replay_s"] == pytest.approx(4.0)
    assert data["model_error"] == pytest.approx(0.0)
    assert data["predicted_s"] == pytest.approx(2.0)
    assert data["config"]["slots"] == 4 and data["baseline_config"]["slots"] == 2
    assert data["bottleneck"] == "cpu"
    assert STAGE_KEYS <= set(data["stages"][0])
    assert data["stages"][0]["vector"]["cpu"] == pytest.approx(1.0)


def test_text_output_states_model_error_and_assumptions(synthetic: Path) -> None:
    result = invoke_cli(["predict", str(synthetic), "--cores", "4"])
    assert result.exit_code == 0, result.output
    assert "model error +0.0%" in result.output
    assert "predicted 2.0 s (2.00× faster)" in result.output
    assert "--host-cores" in result.output  # the assumed host size is stated


def test_sweep_table_and_json(synthetic: Path) -> None:
    args = ["predict", str(synthetic), "--sweep", "cores=1,2,4,8", "mem=1g,2g", "--json"]
    result = invoke_cli(args)
    assert result.exit_code == 0, result.output
    points = json.loads(result.output)
    assert len(points) == 8
    by_cores = {p["settings"]["cores"]: p["predicted_s"] for p in points}
    # On one core no task runs beside another: the CPU time the baseline's tasks gained side
    # by side (`laws.CO_RUNNING_CPU`, which a bare log cannot show) is taken back out.
    alone = 8.0 / (1.0 + CO_RUNNING_CPU)
    assert by_cores == pytest.approx({"1": alone, "2": 4.0, "4": 2.0, "8": 1.0})
    text = invoke_cli(["predict", str(synthetic), "--sweep", "cores=1,2"])
    assert text.exit_code == 0
    assert "bottleneck" in text.output and "cpu" in text.output


def test_uses_the_last_analysed_profile(synthetic: Path) -> None:
    remember_profile(synthetic)
    result = invoke_cli(["predict", "--cores", "4"])
    assert result.exit_code == 0, result.output
    assert str(synthetic.resolve()) in result.output
    assert "last analysed" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mem", "lots"], "cannot read memory size"),
        (["--disk-bw", "fast"], "cannot read bandwidth"),
        (["--cores", "0"], "from 1 to 1,000,000"),
        (["--cores", "100000000000"], "--cores must be a whole number from 1"),
        (["--cpu-speed", "nan"], "--cpu-speed must be a finite number"),
        (["--cpu-speed", "inf"], "--cpu-speed must be a finite number"),
        # Dask's names for executors and their cores are named as written.
        (["--threads", "0"], "--threads must be a whole number from 1"),
        (["--sweep", "workers=1,0"], "--sweep workers must be a whole number from 1"),
        (["--workers", "2", "--executors", "2"], "--executors and --workers set the same"),
        (["--mem", "9" * 400 + "g"], "memory size"),
        (["--sweep", "cores=" + ",".join(map(str, range(1, 10_002)))], "at most 10,000"),
        (["--sweep", "colour=red"], "cannot read sweep axis"),
        (["--sweep", "cores=x"], "not a whole number"),
        (["--executors", "3"], "local mode"),
    ],
)
def test_bad_input_exits_2_without_traceback(
    synthetic: Path, args: list[str], message: str
) -> None:
    result = invoke_cli(["predict", str(synthetic), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path / "state"))
    result = invoke_cli(["predict"])
    assert result.exit_code == 2
    assert "perfmodel diagnose" in result.output
    result = invoke_cli(["predict", str(tmp_path / "nope.log")])
    assert result.exit_code == 2
    assert "no such file" in result.output
