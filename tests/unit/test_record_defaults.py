"""`perfmodel record`'s default recorder: the plugin's JVM sampler every 50 ms, JFR every 20
ms when asked for (alone or with the plugin's, "both"); a spec's [record] takes the same
periods. The recordings are real (`true` as the command: no JVM, so no samples), the
manifest says how they were made."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.experiment.spec import parse_spec
from perfmodel.profile import bundle, jfr
from perfmodel.profile.record.defaults import default_interval_ms
from perfmodel.profile.record.setup import RecordOptions, recording_settings
from tests.cli_runner import invoke_cli


def test_the_default_recorder_starts_no_flight_recording(tmp_path: Path) -> None:
    options = RecordOptions(out=tmp_path / "b")
    assert (options.jvm_sampler, options.interval_ms) == ("plugin", 50)
    append, only_if_unset = recording_settings(options.out, options, tmp_path / "p.jar")
    assert "spark.driver.defaultJavaOptions" not in append  # no -XX:StartFlightRecording
    assert only_if_unset[jfr.SAMPLES_INTERVAL_KEY] == "50"


@pytest.mark.parametrize(
    ("args", "sampler", "interval", "python_hz"),
    [
        ([], "plugin", 50, 20),
        (["--jvm-sampler", "jfr"], "jfr", 20, 50),
        (["--jvm-sampler", "both"], "both", 20, 50),
        (["--interval-ms", "100"], "plugin", 100, 10),
        (["--jvm-sampler", "jfr", "--interval-ms", "50"], "jfr", 50, 20),
        (["--python-interval-ms", "20"], "plugin", 50, 50),
    ],
)
def test_each_sampler_has_its_own_default_period(
    tmp_path: Path, args: list[str], sampler: str, interval: int, python_hz: int
) -> None:
    out = tmp_path / "b"
    result = invoke_cli(["record", "--out", str(out), *args, "--", "true"])
    assert result.exit_code == 0, result.output
    sampling = bundle.read_manifest(out).sampling
    assert sampling["jvm_sampler"] == sampler
    assert sampling["interval_ms"] == interval
    assert sampling["pyspy"]["rate_hz"] == python_hz
    assert sampling["jfr"]["enabled"] == (sampler != "plugin")


def test_thread_cpu_and_monitor_can_be_left_out(tmp_path: Path) -> None:
    out = tmp_path / "b"
    args = ["record", "--out", str(out), "--no-thread-cpu", "--no-monitor", "--", "true"]
    result = invoke_cli(args)
    assert result.exit_code == 0, result.output
    manifest = bundle.read_manifest(out)
    assert not manifest.thread_cpu and not manifest.resources
    assert not (out / "thread_cpu.parquet").exists() and not (out / bundle.RESOURCES).exists()


@pytest.mark.parametrize(
    ("record", "interval"),
    [
        ({}, 20),
        ({"jvm_sampler": "plugin"}, 50),
        ({"jvm_sampler": "both"}, 20),
        ({"jvm_sampler": "plugin", "interval_ms": 30}, 30),
    ],
)
def test_a_specs_recording_takes_its_samplers_period(
    tmp_path: Path, record: dict[str, object], interval: int
) -> None:
    data = {"name": "x", "command": ["true"], "record": record}
    spec = parse_spec(data, tmp_path / "x.toml")
    assert spec.record.interval_ms == interval
    assert default_interval_ms(spec.record.jvm_sampler) == (
        50 if spec.record.jvm_sampler == "plugin" else 20
    )
