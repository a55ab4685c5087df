"""`perfmodel record` on a PySpark application with no Python on the executors.

tests/data/record/dataframe_job.py runs DataFrame operations only (Parquet write and read, an
aggregation, a broadcast join, a sort, SHA-512): what most SQL jobs look like, and the second
job of `benchmarks/record_overhead.py --job dataframe`. Its task threads run Java rather than
wait on Python workers, so the checks here are the JVM side on its own: tasks tied to samples
by id, and the frames of writing and reading Parquet and of hashing where they belong.

It is recorded with both JVM samplers (`--jvm-sampler both`, every 20 ms): the bundle is read
from JFR's recording, which covers every JVM thread, exactly as with `--jvm-sampler jfr`, and
the plugin's samples of the same run are kept beside it and read as a bundle of their own.
`perfmodel record`'s default, the plugin's sampler every 50 ms, on a job with Python workers is
tests/e2e/test_record_default.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from perfmodel.cli.record import register
from perfmodel.dag.model import StageNode
from perfmodel.dag.samples import CallProfile
from perfmodel.profile import bundle, jvm_cpu
from perfmodel.profile.record.bundle_write import with_plugin_samples
from tests.conftest import assert_long_tasks_have_jvm_samples, attribute_bundle, record_job

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    # JFR, whose coverage of Java-running task threads the checks below were measured with,
    # and the plugin's samples beside it.
    return record_job(
        tmp_path_factory.mktemp("record-df"),
        "dataframe_job.py",
        "1",
        record_args=["--jvm-sampler", "both"],
    )


@pytest.fixture(scope="module")
def attributed(recorded):
    return attribute_bundle(recorded[1])


def test_job_runs_and_no_python_worker_starts(recorded, attributed) -> None:
    proc, out = recorded
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "keys: 997" in proc.stdout and "first hash: " in proc.stdout
    _, samples, _ = attributed
    processes = set(samples.column("process").to_pylist())
    assert processes == {"jvm driver", "python driver"}, processes
    roles = {r.process for r in bundle.read_manifest(out).recordings if r.source == "pyspy"}
    assert roles == {"python driver"}, roles


def test_tasks_of_100ms_have_jvm_samples_by_task_id(attributed) -> None:
    """Tasks of ≥ 500 ms carry JVM samples (all but one, `assert_long_tasks_have_jvm_samples`
    says why); of ≥ 100 ms, all but a quarter.

    Looser than the default bound, because here a task thread runs Java rather than wait in
    native code, and JFR samples a thread running Java only when it can walk its stack: 0.4 to
    0.8 Java samples per 20 ms of a task's CPU time, by stage. In 16 recordings of this job at
    this scale (2026-11-24) 1 of 32 tasks of 100-200 ms had no JVM sample, and every longer
    task at least one (every task of ≥ 500 ms at least two, 98 tasks). At scale 0.5, 6 of 48
    tasks of 100-200 ms had none; a CI run there had 2 of its 13 tasks of ≥ 100 ms without,
    of 166 and 247 ms, which the default bound does not allow.
    """
    profile, samples, _ = attributed
    assert_long_tasks_have_jvm_samples(
        profile, samples, always_ms=500, may_miss=0.25, long_may_miss=1
    )


def _sum(stage: StageNode, metric: str) -> float:
    return sum(getattr(t.metrics, metric) for t in stage.tasks)


def _samples_with(profile: CallProfile, names: tuple[str, ...]) -> int:
    """Samples whose stack has a frame containing one of ``names``."""
    return sum(
        n for stack, n in profile.stacks.items() if any(k in f for f in stack for k in names)
    )


def test_parquet_write_read_and_hashing_frames_in_their_stages(attributed) -> None:
    """Parquet's writer in the write stage, the file scan in the stages that read the files back
    (pooled: reading is a small part of them) and the digest in a hashing stage.

    In 16 recordings at this scale (2026-11-24) the write stage had 24-43 samples in Parquet's
    writer, the read stages together 7-16 in the scan and the hashing stage 6-40 in the digest.
    At scale 0.5 (25 recordings) they had as few as 1 in Parquet's code, and 3 recordings had
    none in the two reader classes an earlier form of this check named.
    """
    profile, _, sp = attributed
    stages = [s for s in profile.stages.values() if s.tasks]
    (write,) = [s for s in stages if _sum(s, "output_bytes") > 0]
    written = sp.stage(write.key)
    assert _samples_with(written, ("ParquetOutputWriter.write",)), written.top(15, by="total")
    # Parquet's code (parquet-mr's org.apache.parquet, Spark's datasources.parquet), the file
    # scan, and the columnar batches the vectorized reader fills, which only a scan's stage reads.
    reads = [sp.stage(s.key) for s in stages if _sum(s, "input_bytes") > 0]
    assert reads
    scanning = (".parquet.", "FileScanRDD", "ColumnVector", "ColumnarBatch")
    assert sum(_samples_with(r, scanning) for r in reads), [r.top(15, by="total") for r in reads]
    hashing = ("SHA5", "MessageDigest", "DigestUtils")
    assert any(_samples_with(sp.stage(s.key), hashing) for s in stages)


def test_the_bundle_is_read_from_jfr(recorded) -> None:
    _, out = recorded
    manifest = bundle.read_manifest(out)
    (jfr,) = [r for r in manifest.recordings if r.source == "jfr"]
    assert jfr.path.endswith(".jfr") and jfr.error is None and jfr.task_events
    assert jfr.executor_id == "driver"
    # The plugin took the threads that only wait out of sampling (IdleThreadExcluder.java).
    excluded = set(jfr.excluded_threads)
    assert "main" in excluded, excluded
    assert any("-boss-" in name for name in excluded), excluded
    assert manifest.samples["by_source"]["jfr"] > 0
    assert manifest.sampling["jfr"]["stack_depth"] == 2048
    assert manifest.recording_cost["jvm_recording_cpu_s"] > 0
    # JFR starts in each JVM from the Java options perfmodel adds to Spark's configuration.
    conf = (out / "raw" / "conf" / "spark-defaults.conf").read_text()
    assert "spark.driver.defaultJavaOptions" in conf


def test_both_samplers_read_either(recorded, tmp_path: Path) -> None:
    """JFR's recording makes the bundle, with the plugin's task events in it as without
    "both"; the plugin's samples of the same run, kept apart, make a plugin-only view of it
    whose samples cover the tasks as well."""
    _, out = recorded
    manifest = bundle.read_manifest(out)
    assert manifest.sampling["jvm_sampler"] == "both"
    assert manifest.sampling["jfr"]["enabled"]
    assert manifest.sampling["plugin_samples"]["files"] >= 1

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
