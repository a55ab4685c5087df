"""The plugin's own JVM sampler (TaskSampler.java, `perfmodel record --jvm-sampler plugin`).

Unit tests read hand-written files in the sampler's line format (what the plugin writes, ids
local to the file); the slow test reads tests/data/record/job.py recorded with the sampler on
(the suite's shared default recording) and checks that no JVM started JFR and that the
samples cover the tasks as JFR's do. Both samplers on one run (`--jvm-sampler both`):
tests/e2e/test_record_dataframe_job.py.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from perfmodel.profile import bundle, jfr
from perfmodel.profile.bundle import BundleError
from perfmodel.profile.record.bundle_write import with_plugin_samples
from perfmodel.profile.record.setup import PLUGIN_SAMPLES_DIR, RecordOptions, recording_settings
from tests.conftest import assert_long_tasks_have_jvm_samples, attribute_bundle

T0 = 1_700_000_000_000_000_000  # epoch ns
MS = 1_000_000

HEADER = [
    "R\t/x/perfmodel-41.jvmsamples",
    "I\tsampler\tplugin",
    "I\tpid\t41",
    "I\texecutor_id\t3",
    "I\thost\tworker-1",
    "I\tjava_arguments\torg.apache.spark.executor.CoarseGrainedExecutorBackend --executor-id 3",
    "I\thw_threads\t4",
    "I\tperiod.jdk.ExecutionSample\t20 ms",
    "I\tperiod.jdk.NativeMethodSample\t20 ms",
]
BODY = [
    "H\t0\t77\t0\tExecutor task launch worker for task 5.0 in stage 2.0 (TID 9)",
    f"T\t{T0}\tB\t0\t9\t2\t0\t",
    "F\t0\tjava.lang.Thread.run",
    "F\t1\tcom.example.Hash.digest",
    "F\t2\tsun.nio.ch.EPoll.wait",
    "K\t0\t0,1\t10,20\t0",
    "K\t1\t0,2\t10,0\t0",
    f"S\t{T0 + 20 * MS}\tJ\t0\t0",
    f"S\t{T0 + 40 * MS}\tJ\t0\t0",
    f"S\t{T0 + 60 * MS}\tN\t0\t1",
    f"S\t{T0 + 80 * MS}\tW\t0\t1\t{20 * MS}",
    f"C\t{T0 + 90 * MS}\t0.25\t0",
    f"T\t{T0 + 100 * MS}\tE\t0\t9\t2\t0\tSUCCESS",
    f"S\t{T0 + 120 * MS}\tJ\t0\t0",
]


def _write(tmp_path: Path, lines: list[str], name: str = "perfmodel-41.jvmsamples") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines))
    return path


def test_samples_join_their_task_and_stand_for_one_period_each(tmp_path: Path) -> None:
    path = _write(tmp_path, [*HEADER, *BODY, "D\t5\t2", ""])
    (rec,) = jfr.read_recordings([path], names=["raw/jfr/perfmodel-41.jvmsamples"])
    assert rec.error is None and not rec.warnings
    assert (rec.sampler, rec.pid, rec.executor_id, rec.host) == ("plugin", 41, "3", "worker-1")
    assert rec.process == "jvm executor 3" and rec.has_task_events
    rows = rec.samples.to_pylist()
    assert [r["kind"] for r in rows] == ["java", "java", "native", "wait", "java"]
    # Every task thread is sampled every period: no round-robin weighting for native samples.
    assert [r["weight_ms"] for r in rows] == [20.0, 20.0, 20.0, 20.0, 20.0]
    assert [r["task_id"] for r in rows] == [9, 9, 9, 9, None]  # the last came after the end
    assert rows[0]["frames"] == ["java.lang.Thread.run", "com.example.Hash.digest"]
    assert rows[0]["lines"] == [10, 20] and rows[0]["recording"].endswith(".jvmsamples")
    assert rec.cpu_load.tolist() == [0.25] and rec.hw_threads == 4
    span = rec.task_spans[0]
    assert (span.task_id, span.stage_id, span.status) == (9, 2, "SUCCESS")
    assert span.end_ms - span.start_ms == pytest.approx(100.0)


def test_killed_jvm_keeps_what_came_before_the_cut(tmp_path: Path) -> None:
    # No end line, and the last line cut mid-way, as a JVM killed between flushes leaves it.
    path = _write(tmp_path, [*HEADER, *BODY, f"S\t{T0 + 140 * MS}\tJ"])
    (rec,) = jfr.read_recordings([path])
    assert rec.error is None and rec.samples.num_rows == 5
    assert any("ends early" in w for w in rec.warnings), rec.warnings


def test_files_keep_their_own_ids_and_the_callers_order(tmp_path: Path) -> None:
    first = _write(tmp_path, [*HEADER, *BODY, "D\t5\t2", ""], "perfmodel-1.jvmsamples")
    other_body = [line.replace("com.example.Hash.digest", "com.example.Other.run") for line in BODY]
    second = _write(tmp_path, [*HEADER, *other_body, "D\t5\t2", ""], "perfmodel-2.jvmsamples")
    recs = jfr.read_recordings([second, first])
    assert [Path(r.path).name for r in recs] == [second.name, first.name]
    assert recs[0].samples.column("frames")[0].as_py()[-1] == "com.example.Other.run"
    assert recs[1].samples.column("frames")[0].as_py()[-1] == "com.example.Hash.digest"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["not a sample file", ""], "is not a perfmodel sample file"),
        ([*HEADER, "K\t5\t0\t0\t0", ""], "is damaged"),
        ([*HEADER, "S\tnot-a-time\tJ\t0\t0", ""], "is damaged"),
    ],
)
def test_damaged_files_are_reported_not_raised(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = _write(tmp_path, lines)
    good = _write(tmp_path, [*HEADER, *BODY, "D\t5\t2", ""], "perfmodel-2.jvmsamples")
    bad, fine = jfr.read_recordings([path, good])
    assert bad.error is not None and message in bad.error
    assert fine.error is None and fine.samples.num_rows == 5


def test_plugin_sampler_settings_replace_jfr(tmp_path: Path) -> None:
    out = tmp_path / "b"
    append, only_if_unset = recording_settings(
        out, RecordOptions(out=out, jvm_sampler="plugin", interval_ms=10), tmp_path / "p.jar"
    )
    assert "spark.executor.defaultJavaOptions" not in append  # no -XX:StartFlightRecording
    assert only_if_unset[jfr.SAMPLES_DIR_KEY] == str((out / bundle.JFR_DIR).resolve())
    assert only_if_unset[jfr.SAMPLES_INTERVAL_KEY] == "10"
    jfr_options = RecordOptions(out=out, jvm_sampler="jfr")
    append, only_if_unset = recording_settings(out, jfr_options, tmp_path / "p.jar")
    assert "StartFlightRecording" in append["spark.executor.defaultJavaOptions"][0]
    assert jfr.SAMPLES_DIR_KEY not in only_if_unset


def test_both_samplers_keep_the_plugins_samples_apart(tmp_path: Path) -> None:
    out = tmp_path / "b"
    options = RecordOptions(out=out, jvm_sampler="both", interval_ms=20, plugin_interval_ms=50)
    append, only_if_unset = recording_settings(out, options, tmp_path / "p.jar")
    assert "StartFlightRecording" in append["spark.executor.defaultJavaOptions"][0]
    assert only_if_unset[jfr.SAMPLES_DIR_KEY] == str((out / PLUGIN_SAMPLES_DIR).resolve())
    assert only_if_unset[jfr.SAMPLES_INTERVAL_KEY] == "50"
    assert only_if_unset[jfr.SAMPLES_WITH_JFR_KEY] == "true"
    # The plugin's own period is only for "both"; alone it samples at --interval-ms.
    alone = RecordOptions(out=out, jvm_sampler="plugin", interval_ms=20, plugin_interval_ms=50)
    _, only_if_unset = recording_settings(out, alone, tmp_path / "p.jar")
    assert only_if_unset[jfr.SAMPLES_INTERVAL_KEY] == "20"
    assert jfr.SAMPLES_WITH_JFR_KEY not in only_if_unset


def test_plugin_view_needs_kept_samples(tmp_path: Path) -> None:
    src = tmp_path / "b"
    src.mkdir()
    (src / bundle.MANIFEST).write_text(bundle.BundleManifest().to_json())
    with pytest.raises(BundleError, match="--jvm-sampler both"):
        with_plugin_samples(src, tmp_path / "view")


@pytest.mark.slow
def test_record_with_the_plugin_sampler(job_bundle: Path) -> None:
    """`perfmodel record`'s default sampler is the plugin's (test_record_default.py), so the
    suite's shared default recording is this one."""
    out = job_bundle
    manifest = bundle.read_manifest(out)
    assert manifest.sampling["jvm_sampler"] == "plugin"
    assert not manifest.sampling["jfr"]["enabled"]
    assert not list((out / bundle.JFR_DIR).glob("*.jfr"))  # no JVM started a flight recording
    (rec,) = [r for r in manifest.recordings if r.source == "jfr"]
    assert rec.path.endswith(".jvmsamples") and rec.error is None and rec.task_events
    assert rec.executor_id == "driver" and not rec.warnings
    profile, samples, _ = attribute_bundle(out)
    assert_long_tasks_have_jvm_samples(profile, samples)
    # Each task thread is sampled every period while its task runs: the samples tied to tasks
    # add up to about the tasks' run time (JFR's are a lossy subset of it).
    jvm = samples.filter(pc.is_valid(samples.column("task_id")))
    jvm = jvm.filter(pc.equal(jvm.column("source"), "jfr"))
    sampled_ms = pc.sum(jvm.column("weight_ms")).as_py()
    run_ms = sum(t.metrics.run_ms for t in profile.tasks())
    assert 0.7 * run_ms < sampled_ms < 1.2 * run_ms, (sampled_ms, run_ms)
    frames = {f for stack in jvm.column("frames").to_pylist() for f in stack}
    assert "org.apache.spark.executor.Executor$TaskRunner.run" in frames
