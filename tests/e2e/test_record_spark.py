"""`perfmodel record` on a real PySpark application (tests/data/record/job.py), end to end.

With both JVM samplers (`--jvm-sampler both`, every 20 ms): the bundle is read from JFR's
recording, which covers every JVM thread, exactly as with `--jvm-sampler jfr`
(tests/e2e/test_record_dataframe_job.py records with that alone), and the plugin's samples of
the same run are kept beside it and read as a bundle of their own. `perfmodel record`'s
default, the plugin's sampler every 50 ms, is tests/e2e/test_record_default.py. One
recording serves all assertions (the job takes tens of seconds on two cores). It runs
through the real CLI in a subprocess, so the pass-through of the job's output and exit code is
checked as a user would see it; JOB_FAIL makes the job exit 3 after its work, which also checks
that a failing command still yields a complete bundle.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow.compute as pc
import pytest
import typer
from typer.testing import CliRunner

from perfmodel.cli.record import register
from perfmodel.profile import bundle, jvm_cpu, thread_cpu
from perfmodel.profile.record.bundle_write import with_plugin_samples
from tests.conftest import assert_long_tasks_have_jvm_samples, attribute_bundle, record_job

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    return record_job(
        tmp_path_factory.mktemp("record"),
        "job.py",
        "0.5",
        record_args=["--jvm-sampler", "both"],
        JOB_FAIL="1",
    )


@pytest.fixture(scope="module")
def attributed(recorded):
    return attribute_bundle(recorded[1])


def test_output_and_exit_code_pass_through(recorded) -> None:
    proc, _ = recorded
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "distinct words: 5000" in proc.stdout
    assert "join groups: 97" in proc.stdout
    assert "Started recording" not in proc.stdout + proc.stderr  # JFR's banner is silenced
    assert "perfmodel: bundle written to" in proc.stderr
    assert "perfmodel: recording cost " in proc.stderr


def test_bundle_is_complete(recorded) -> None:
    _, out = recorded
    manifest = bundle.read_manifest(out)
    assert manifest.exit_code == 3
    assert manifest.command is not None and manifest.command[-2].endswith("work")
    assert len(manifest.event_logs) == 1
    assert manifest.apps and manifest.apps[0]["spark.plugins.defaultList"].endswith(
        "perfmodel.spark.PerfmodelPlugin"
    )
    assert (out / bundle.SAMPLES).is_file() and (out / bundle.TASK_SPANS).is_file()
    jfr = [r for r in manifest.recordings if r.source == "jfr"]
    assert len(jfr) == 1 and jfr[0].error is None and jfr[0].task_events
    # The plugin took the threads that only wait out of sampling (IdleThreadExcluder.java).
    excluded = set(jfr[0].excluded_threads)
    assert "main" in excluded, excluded
    assert any("-boss-" in name for name in excluded), excluded
    assert any(name.startswith("stdout reader for ") for name in excluded), excluded
    assert jfr[0].executor_id == "driver"
    pyspy = [r for r in manifest.recordings if r.source == "pyspy"]
    assert {r.process for r in pyspy} >= {"python driver", "python worker"}
    assert manifest.samples["by_source"]["jfr"] > 0 and manifest.samples["by_source"]["pyspy"] > 0
    assert manifest.sampling["jfr"]["stack_depth"] == 2048
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
    # The user's configuration stays in force, perfmodel's is appended to it.
    conf = (out / "raw" / "conf" / "spark-defaults.conf").read_text()
    assert "spark.driver.defaultJavaOptions" in conf
    json.loads((out / bundle.MANIFEST).read_text())


def test_every_task_of_100ms_has_jvm_samples_by_task_id(recorded, attributed) -> None:
    """Tasks of ≥ 300 ms carry samples (all but one, `assert_long_tasks_have_jvm_samples` says
    why); of ≥ 100 ms, nearly all.

    A PySpark task thread waiting on its Python worker sits in native code (an NIO
    select), and JFR takes one native sample per period across all threads in native
    code (after the plugin's exclusion of those that only wait, py4j's threads still share
    them), so a 100-300 ms task is covered only with high probability at the 5 ms native
    period, not certainty.
    """
    profile, samples, _ = attributed
    assert_long_tasks_have_jvm_samples(profile, samples, long_may_miss=1)


def test_both_samplers_read_either(recorded, tmp_path: Path) -> None:
    """JFR's recording makes the bundle, with the plugin's task events in it as without
    "both"; the plugin's samples of the same run, kept apart, make a plugin-only view of it
    whose samples cover the tasks as well."""
    _, out = recorded
    manifest = bundle.read_manifest(out)
    assert manifest.sampling["jvm_sampler"] == "both"
    assert manifest.sampling["jfr"]["enabled"]
    assert manifest.sampling["plugin_samples"]["files"] >= 1
    (rec,) = [r for r in manifest.recordings if r.source == "jfr"]
    assert rec.path.endswith(".jfr") and rec.task_events and rec.error is None

    view = tmp_path / "view"
    seen = with_plugin_samples(out, view)
    assert seen.sampling["jvm_sampler"] == "plugin" and "plugin_samples" not in seen.sampling
    (rec,) = [r for r in seen.recordings if r.source == "jfr"]
    assert rec.path.endswith(".jvmsamples") and rec.task_events and rec.error is None
    assert not list((view / bundle.JFR_DIR).glob("*.jfr"))
    assert (view / "thread_cpu.parquet").is_file()  # the same run's other measurements
    assert bundle.find_event_log(view).name == bundle.find_event_log(out).name
    profile, samples, _ = attribute_bundle(view)
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
    # The job's own Python functions (the word count's lambdas, the UDF `bucket_name`) are a
    # small part of a worker's time, serialization the rest: ~9 of ~700 worker samples a run,
    # `bucket_name` alone 1-5 in eight runs, so a run without it can happen; any is asserted.
    user_code = [f for f in frames if f.endswith("job.py)")]
    assert any(f.startswith(("bucket_name (", "main.<locals>.<lambda> (")) for f in user_code)
    (count_stage,) = _stage_named(profile, "reduceByKey at")
    assert sp.stage(count_stage.key).by_kind["python"] > 0
    assert sp.attribution["plugin"] > 0


def test_flame_export_of_a_stage(recorded, attributed, tmp_path: Path) -> None:
    _, out = recorded
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


def test_profile_builds_a_bundle_from_collected_files_despite_bad_ones(
    recorded, tmp_path: Path
) -> None:
    _, out = recorded
    (eventlog,) = bundle.event_logs_in(out)
    jfr_file = next((out / bundle.JFR_DIR).glob("*.jfr"))
    pyspy_file = next((out / bundle.PYSPY_DIR).glob("pyspy-*[0-9].json"))
    bogus = tmp_path / "bogus.jfr"
    bogus.write_text("not a recording")
    wrong = tmp_path / "speedscope.json"
    wrong.write_text(json.dumps({"profiles": []}))
    target = tmp_path / "collected"
    app = typer.Typer()
    register(app)
    args = ["profile", str(eventlog), "--jfr", str(jfr_file), "--jfr", str(bogus)]
    args += ["--pyspy", str(pyspy_file), "--pyspy", str(wrong), "--out", str(target)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = bundle.read_manifest(target)
    errors = {Path(r.path).name: r.error for r in manifest.recordings}
    assert errors[jfr_file.name] is None and errors[pyspy_file.name] is None
    assert "not a readable JFR file" in errors["bogus.jfr"]
    assert "chrometrace" in errors["speedscope.json"]
    assert manifest.samples["with_task_id"] > 0  # the plugin events travel with the file
    # The recording says how many CPUs its host had, so its JVM CPU is kept without `record`.
    measured = jvm_cpu.load(target)
    assert measured is not None and measured.series["driver"].core_seconds() > 0
    assert bundle.find_event_log(target).name == eventlog.name


def test_diagnose_a_bundle_lists_top_functions_per_stage(recorded) -> None:
    """The bundle is a first-class input of `perfmodel diagnose` (real recording, real CLI)."""
    _, out = recorded
    from typer.testing import CliRunner

    from perfmodel.cli import build_app

    result = CliRunner().invoke(build_app(), ["diagnose", str(out), "--json"])
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
    text = CliRunner().invoke(build_app(), ["diagnose", str(out)])
    assert "top functions" in text.stdout
    assert "inferred from the code" in text.stdout


def test_predict_on_a_bundle_uses_code_vectors_and_measured_cpu(recorded, tmp_path) -> None:
    """`predict` on a recorded bundle splits unattributed time by the code models' vectors
    and takes each task's CPU demand from the measured per-thread CPU; both are said."""
    _, out = recorded
    from typer.testing import CliRunner

    from perfmodel.cli import build_app

    env = {"PERFMODEL_STATE_DIR": str(tmp_path / "state")}
    runner = CliRunner(env=env)
    res = runner.invoke(build_app(), ["predict", str(out), "--cores", "2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    notes = " ".join(data["notes"])
    assert "code-inferred resource vectors" in notes
    assert "measured per-thread CPU" in notes
    assert data["baseline_config"]["sources"]["host_cores"] == "recorded with the profile"
    res = runner.invoke(
        build_app(), ["predict", str(out), "--cores", "2", "--no-code-vectors", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert "not used (--no-code-vectors)" in " ".join(json.loads(res.stdout)["notes"])


def test_bundle_holds_per_thread_cpu_of_the_jvm_and_python_workers(recorded) -> None:
    """The JVM's threads are read by kind, the Python workers' CPU is measured (>0), and the
    replay takes the stages' demand from it (tests/unit/test_thread_cpu.py checks the
    arithmetic)."""
    _, out = recorded
    manifest = bundle.read_manifest(out)
    entry = manifest.thread_cpu
    assert entry["file"] == thread_cpu.THREAD_CPU and entry["rows"] > 0, entry
    used = entry["cpu_s_by_kind"]
    assert used[thread_cpu.PY_WORKER] > 0 and used[thread_cpu.TASK] > 0, used
    assert used[thread_cpu.JIT] > 0 and used[thread_cpu.GC] > 0, used
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
