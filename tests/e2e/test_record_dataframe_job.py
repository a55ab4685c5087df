"""`perfmodel record` on a PySpark application with no Python on the executors.

tests/data/record/dataframe_job.py runs DataFrame operations only (Parquet write and read, an
aggregation, a broadcast join, a sort, SHA-512): what most SQL jobs look like, and the second
job of `benchmarks/record_overhead.py --job dataframe`. Its task threads run Java rather than
wait on Python workers, so the checks here are the JVM side on its own: tasks tied to samples
by id, and the frames of writing and reading Parquet and of hashing where they belong.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from perfmodel.dag.model import StageNode
from perfmodel.dag.samples import CallProfile
from perfmodel.profile import bundle
from tests.conftest import assert_long_tasks_have_jvm_samples, attribute_bundle, record_job

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    # JFR, whose coverage of Java-running task threads the checks below were measured with.
    return record_job(
        tmp_path_factory.mktemp("record-df"),
        "dataframe_job.py",
        "1",
        record_args=["--jvm-sampler", "jfr"],
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

    Looser than the mixed job's check, because here a task thread runs Java rather than wait in
    native code, and JFR samples a thread running Java only when it can walk its stack: 0.4 to
    0.8 Java samples per 20 ms of a task's CPU time, by stage. In 16 recordings of this job at
    this scale (2026-11-24) 1 of 32 tasks of 100-200 ms had no JVM sample, and every longer
    task at least one (every task of ≥ 500 ms at least two, 98 tasks). At scale 0.5, 6 of 48
    tasks of 100-200 ms had none; a CI run there had 2 of its 13 tasks of ≥ 100 ms without,
    of 166 and 247 ms, which the mixed job's bound does not allow.
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
