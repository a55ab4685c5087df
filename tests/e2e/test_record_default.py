"""`perfmodel record` with its defaults on a real PySpark application (tests/data/record/job.py),
end to end: the plugin's JVM sampler and py-spy every 50 ms, per-thread CPU and the process
monitor.

The cheaper default must still record what the code models need: stack samples of the JVM's
task threads tied to their tasks by id, Python workers' samples placed in their stages, and
per-thread CPU; and a prediction from the bundle must use both. (JFR as the sampler, and both
samplers on one run: tests/e2e/test_record_dataframe_job.py; the plugin's sampler at 20 ms:
tests/e2e/test_plugin_sampler.py.) The recording is the suite's shared one (`job_recording`
in tests/conftest.py: job.py at scale 0.5 under `perfmodel record` with no options), which
other files read as "some recorded bundle". It runs through the real CLI in a subprocess, so
the pass-through of the job's output and exit code is checked as a user would see it;
JOB_FAIL makes the job exit 3 after its work, which also checks that a failing command still
yields a complete bundle.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pytest
import typer
from typer.testing import CliRunner

from perfmodel.cli.record import register
from perfmodel.profile import bundle, thread_cpu
from tests.cli_runner import invoke_cli
from tests.conftest import JobRecording, assert_long_tasks_have_jvm_samples, attribute_bundle

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def attributed(job_bundle: Path):
    return attribute_bundle(job_bundle)


def test_output_and_exit_code_pass_through(job_recording: JobRecording) -> None:
    run = job_recording
    assert run.returncode == 3, run.stderr
    assert "distinct words: 5000" in run.stdout
    assert "join groups: 97" in run.stdout
    assert "Started recording" not in run.stdout + run.stderr  # JFR's banner is silenced
    assert "perfmodel: bundle written to" in run.stderr
    assert "perfmodel: recording cost " in run.stderr


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


def test_bundle_is_complete(job_bundle: Path) -> None:
    out = job_bundle
    manifest = bundle.read_manifest(out)
    assert manifest.exit_code == 3
    assert manifest.command is not None and manifest.command[-2].endswith("work")
    assert len(manifest.event_logs) == 1
    assert manifest.apps and manifest.apps[0]["spark.plugins.defaultList"].endswith(
        "perfmodel.spark.PerfmodelPlugin"
    )
    assert (out / bundle.SAMPLES).is_file() and (out / bundle.TASK_SPANS).is_file()
    (jvm,) = [r for r in manifest.recordings if r.source == "jfr"]
    assert jvm.executor_id == "driver"
    pyspy = [r for r in manifest.recordings if r.source == "pyspy"]
    assert {r.process for r in pyspy} >= {"python driver", "python worker"}
    assert manifest.samples["by_source"]["jfr"] > 0 and manifest.samples["by_source"]["pyspy"] > 0
    # The process tree was monitored: the JVM and Python kept at least one core busy at times.
    usage = bundle.load_resources(out)
    assert manifest.resources["samples"] == len(usage) > 10
    assert manifest.resources["cpu_s"] > 1.0 and manifest.resources["peak_rss_bytes"] > 100e6
    assert all(a.t_ms < b.t_ms for a, b in zip(usage, usage[1:], strict=False))
    assert max(s.cpu_cores for s in usage) > 0.8 and max(s.processes for s in usage) >= 2
    assert manifest.started_ms <= usage[0].t_ms and usage[-1].t_ms <= manifest.ended_ms + 1000
    # What the samplers cost, counted by the kernel: every part took some CPU, and together
    # far less than the job (which kept at least one core busy for seconds).
    cost = manifest.recording_cost
    assert cost["pyspy_cpu_s"] > 0 and cost["jvm_recording_cpu_s"] > 0, cost
    assert cost["perfmodel_cpu_s"] > 0 and cost["cores"] >= 1, cost
    assert 0 < cost["cpu_s"] < 0.5 * manifest.resources["cpu_s"], cost
    assert cost["command_s"] <= (manifest.ended_ms - manifest.started_ms) / 1000, cost
    # perfmodel's settings reach Spark through a configuration directory of the bundle's own.
    conf = (out / "raw" / "conf" / "spark-defaults.conf").read_text()
    assert "spark.plugins.defaultList perfmodel.spark.PerfmodelPlugin" in conf
    json.loads((out / bundle.MANIFEST).read_text())


def test_long_tasks_have_jvm_samples_by_task_id(attributed) -> None:
    """Every task thread is sampled every period while its task runs: a task of 100 ms has
    about two samples, one of 300 ms six."""
    profile, samples, _ = attributed
    assert_long_tasks_have_jvm_samples(profile, samples)


def _stage_named(profile, text: str) -> list:
    return [s for s in profile.stages.values() if text in s.name]


def test_cpu_stage_shows_hashing_and_file_stage_shows_reads(attributed) -> None:
    profile, _, sp = attributed
    hash_stage = next(s for s in _stage_named(profile, "first at") if s.tasks)
    hashing = sp.stage(hash_stage.key).total_samples
    assert any("SHA5" in f or "MessageDigest" in f or "DigestUtils" in f for f in hashing), (
        sp.stage(hash_stage.key).top(15, by="total")
    )
    (count_stage,) = _stage_named(profile, "reduceByKey at")
    reads = sp.stage(count_stage.key).total_samples
    assert any(
        f in reads for f in ("java.io.FileInputStream.readBytes", "java.io.FileInputStream.read")
    ), sp.stage(count_stage.key).top(15, by="total")


def test_python_samples_reach_workers_and_stages(attributed) -> None:
    profile, samples, sp = attributed
    workers = samples.filter(pc.equal(samples.column("process"), "python worker"))
    frames = {f for stack in workers.column("frames").to_pylist() for f in stack}
    # A worker's stacks reach down into PySpark's worker loop. The job's own functions there
    # (the word count's lambdas, the UDF `bucket_name`) are too small a part of a worker's
    # time to assert: 0 and 1 of about 200 worker samples in two runs of 2026-12-01 (10 of
    # 330 on a slower machine), the rest serialization and waiting for input.
    assert any(f.startswith("main (") and f.endswith("pyspark/worker.py)") for f in frames), sorted(
        frames
    )[:40]
    # The job's own code is located by file where it spends its time: the driver's main().
    driver = samples.filter(pc.equal(samples.column("process"), "python driver"))
    driver_frames = {f for stack in driver.column("frames").to_pylist() for f in stack}
    assert any(f.startswith("main (") and f.endswith("job.py)") for f in driver_frames)
    (count_stage,) = _stage_named(profile, "reduceByKey at")
    assert sp.stage(count_stage.key).by_kind["python"] > 0
    assert sp.attribution["plugin"] > 0


def test_flame_export_of_a_stage(job_bundle: Path, attributed, tmp_path: Path) -> None:
    out = job_bundle
    profile, _, _ = attributed
    (count_stage,) = _stage_named(profile, "reduceByKey at")
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(
        app, ["flame", str(out), "--stage", str(count_stage.stage_id), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    folded = (tmp_path / f"stage-{count_stage.stage_id}.collapsed").read_text()
    assert "java.io.FileInputStream" in folded
    doc = json.loads((tmp_path / f"stage-{count_stage.stage_id}.speedscope.json").read_text())
    assert doc["profiles"][0]["type"] == "sampled" and doc["shared"]["frames"]
    result = CliRunner().invoke(app, ["flame", str(out), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = [
        p["name"] for p in json.loads((tmp_path / "all.speedscope.json").read_text())["profiles"]
    ]
    assert "jvm driver" in names and "python worker" in names


def test_diagnose_a_bundle_lists_top_functions_per_stage(job_bundle: Path) -> None:
    """The bundle is a first-class input of `perfmodel diagnose` (real recording, real CLI)."""
    out = job_bundle
    result = invoke_cli(["diagnose", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["extra"]["samples"]["samples"] > 0
    assert data["extra"]["samples"]["attribution"].get("plugin", 0) > 0
    sampled = [s for s in data["stages"] if s["top_functions"]]
    assert sampled, "no stage got its top functions"
    names = {f["function"] for s in sampled for f in s["top_functions"]}
    assert any("." in n for n in names)  # real JVM/Python frame names, e.g. java.io...
    # The shipped code models turn each sampled stage into a resource vector.
    vectors = [s["code_vector"] for s in data["stages"] if s["code_vector"]]
    assert vectors, "no stage got a code-inferred resource vector"
    for v in vectors:
        # Local mode: only loopback pipes, so a network share is read as CPU (sample_evidence).
        assert "cpu" in v and set(v) <= {"cpu", "disk"}
        assert abs(sum(v.values()) - 1) < 1e-6
    assert data["extra"]["code_vectors"]["stages"] == len(vectors)
    text = invoke_cli(["diagnose", str(out)])
    assert "top functions" in text.stdout
    assert "inferred from the code" in text.stdout


def test_predict_uses_code_vectors_and_per_thread_cpu(job_bundle: Path, tmp_path: Path) -> None:
    """`predict` on a recorded bundle splits unattributed time by the code models' vectors
    and takes each task's CPU demand from the measured per-thread CPU; both are said."""
    out = job_bundle
    state = {"PERFMODEL_STATE_DIR": str(tmp_path / "state")}
    res = invoke_cli(["predict", str(out), "--cores", "1", "--json"], env=state)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    notes = " ".join(data["notes"])
    assert "code-inferred resource vectors" in notes
    assert "measured per-thread CPU" in notes
    assert data["baseline_config"]["sources"]["host_cores"] == "recorded with the profile"
    res = invoke_cli(
        ["predict", str(out), "--cores", "1", "--no-code-vectors", "--json"], env=state
    )
    assert res.exit_code == 0, res.output
    assert "not used (--no-code-vectors)" in " ".join(json.loads(res.stdout)["notes"])


def test_bundle_holds_per_thread_cpu_of_the_jvm_and_python_workers(job_bundle: Path) -> None:
    """The JVM's threads are read by kind, the Python workers' CPU is measured (>0), and the
    replay takes the stages' demand from it (tests/unit/test_thread_cpu.py checks the
    arithmetic)."""
    out = job_bundle
    manifest = bundle.read_manifest(out)
    entry = manifest.thread_cpu
    assert entry["file"] == thread_cpu.THREAD_CPU and entry["rows"] > 0, entry
    used = entry["cpu_s_by_kind"]
    assert used[thread_cpu.PY_WORKER] > 0 and used[thread_cpu.TASK] > 0, used
    # The collector's thread is read, but may have had nothing to do: a short run of a small
    # heap can end before its first collection, and its "VM Thread" then rounds to 0.000 s.
    assert used[thread_cpu.JIT] > 0 and used[thread_cpu.GC] >= 0, used
    assert entry["sampler_cpu_s"] > 0 and abs(entry["polls"] - manifest.resources["samples"]) <= 1
    measured = thread_cpu.load(out)
    assert measured is not None and measured.executors() == {"driver"}
    python = measured.series[("driver", thread_cpu.PY_WORKER)]
    assert python.cpu_ms[-1] == pytest.approx(1000 * used[thread_cpu.PY_WORKER], rel=0.01)
    if entry["counters"] == "schedstat":
        assert measured.has_wait

    from perfmodel.analysis import load

    analysis = load(out, code_vectors=False)
    by_stage = analysis.workload.thread_cpu
    assert by_stage and any(m.python_cpu_ms > 0 for m in by_stage.values())
    assert any("measured per-thread CPU" in note for note in analysis.workload.notes)
