"""`perfmodel record` with its defaults on a real PySpark application (tests/data/record/job.py):
the plugin's JVM sampler and py-spy every 50 ms, per-thread CPU and the process monitor.

The cheaper default must still record what the code models need: stack samples of the JVM's
task threads tied to their tasks by id, Python workers' samples placed in their stages, and
per-thread CPU; and a prediction from the bundle must use both. (JFR as the sampler:
tests/e2e/test_record_spark.py; the plugin's sampler at 20 ms and beside JFR:
tests/e2e/test_plugin_sampler.py.) The recording is the suite's shared one (`job_bundle` in
tests/conftest.py: job.py at scale 0.5 under `perfmodel record` with no options), which other
files read as "some recorded bundle".
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from perfmodel.cli import build_app
from perfmodel.profile import bundle, thread_cpu
from tests.conftest import assert_long_tasks_have_jvm_samples, attribute_bundle

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def attributed(job_bundle: Path):
    return attribute_bundle(job_bundle)


def test_the_default_samples_the_task_threads_with_the_plugin_every_50ms(job_bundle: Path) -> None:
    out = job_bundle
    manifest = bundle.read_manifest(out)
    assert manifest.sampling["jvm_sampler"] == "plugin"
    assert manifest.sampling["interval_ms"] == 50
    assert manifest.sampling["pyspy"]["rate_hz"] == 20
    assert not manifest.sampling["jfr"]["enabled"]
    assert not list((out / bundle.JFR_DIR).glob("*.jfr"))  # no JVM started a flight recording
    (rec,) = [r for r in manifest.recordings if r.source == "jfr"]
    assert rec.path.endswith(".jvmsamples") and rec.error is None and rec.task_events
    # Its samples are weighted by the period they stand for.
    weights = pc.unique(bundle.load_samples(out).column("weight_ms")).to_pylist()
    assert 50.0 in weights
    cost = manifest.recording_cost
    assert cost["jvm_recording_cpu_s"] > 0  # the plugin's sampler thread, counted by name


def test_long_tasks_have_jvm_samples_by_task_id(attributed) -> None:
    """Every task thread is sampled every period while its task runs: a task of 100 ms has
    about two samples, one of 300 ms six."""
    profile, samples, _ = attributed
    assert_long_tasks_have_jvm_samples(profile, samples)


def test_python_samples_reach_workers_and_stages(attributed) -> None:
    profile, samples, sp = attributed
    workers = samples.filter(pc.equal(samples.column("process"), "python worker"))
    assert workers.num_rows > 0
    (count_stage,) = [s for s in profile.stages.values() if "reduceByKey at" in s.name]
    assert sp.stage(count_stage.key).by_kind["python"] > 0
    assert sp.attribution["plugin"] > 0


def test_predict_uses_code_vectors_and_per_thread_cpu(job_bundle: Path, tmp_path: Path) -> None:
    out = job_bundle
    manifest = bundle.read_manifest(out)
    used = manifest.thread_cpu["cpu_s_by_kind"]
    assert used[thread_cpu.PY_WORKER] > 0 and used[thread_cpu.TASK] > 0, used
    runner = CliRunner(env={"PERFMODEL_STATE_DIR": str(tmp_path / "state")})
    res = runner.invoke(build_app(), ["predict", str(out), "--cores", "1", "--json"])
    assert res.exit_code == 0, res.output
    notes = " ".join(json.loads(res.stdout)["notes"])
    assert "code-inferred resource vectors" in notes
    assert "measured per-thread CPU" in notes
