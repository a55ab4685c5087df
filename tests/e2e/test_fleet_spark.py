"""`perfmodel fleet --engine spark` on local[2]: the same tables as the local engine, for
the shared real logs plus about 200 generated ones, and through `spark-submit` with Spark
reading the logs itself (binaryFiles, as for hdfs:// or s3a:// URIs)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfmodel.fleet.synth import write_corrupt
from tests.conftest import REPO, shared_eventlogs
from tests.fleet_helpers import WHAT_IFS, make_fleet, read_tables, run

pytestmark = pytest.mark.slow


def _spark_fleet(inputs: list[str], out: Path, *options: str) -> dict[str, object]:
    """`perfmodel fleet --engine spark` as a user runs it: a process (and a JVM) of its own,
    started when the run starts."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    cmd = [sys.executable, "-m", "perfmodel", "fleet", *inputs, "--out", str(out)]
    cmd += ["--engine", "spark", "--master", "local[2]", "--json", *options]
    cmd += ["--spark-conf", "spark.ui.enabled=false"]
    cmd += [arg for w in WHAT_IFS for arg in ("--what-if", w)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # 1: some logs are errors rows
    summary: dict[str, object] = json.loads(proc.stdout)
    return summary


def test_spark_engine_gives_the_local_engine_s_tables(tmp_path: Path) -> None:
    shared = shared_eventlogs()
    synth = make_fleet(shared, tmp_path / "logs")
    inputs = [str(tmp_path / "logs"), str(shared)]
    local = run(inputs, tmp_path / "local", jobs=2)
    remote = _spark_fleet(inputs, tmp_path / "spark")
    expected = len(synth.logs) + 15 + len(synth.corrupt)
    assert remote["analysed_now"] == len(local.analysed) == expected
    a, b = read_tables(tmp_path / "local"), read_tables(tmp_path / "spark")
    for name in a:
        assert a[name].schema == b[name].schema, name
        assert a[name] == b[name], name
    assert b["errors"].num_rows == len(synth.corrupt)
    assert not (tmp_path / "spark" / "_spark-staging").exists()
    again = _spark_fleet(inputs, tmp_path / "spark")  # resumable as well
    assert again["analysed_now"] == 0 and read_tables(tmp_path / "spark") == b


def _small_fleet(tmp_path: Path) -> Path:
    shared = shared_eventlogs()
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("local-1422981780767", "eventlog_v2_local-1623876083964", "spark2-eventlog.zstd"):
        src = shared / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, logs / name)
    write_corrupt(logs, random.Random(1))
    return logs


def test_spark_submit_reading_the_logs_itself_gives_the_same_tables(tmp_path: Path) -> None:
    """Through `spark-submit` (perfmodel/__main__.py as the application), with Spark reading
    the logs itself (binaryFiles, as for hdfs:// or s3a:// URIs): the files of each log (a
    rolling directory's parts) are grouped and analysed from a temporary copy in the worker.
    One run checks both: each starts a JVM of its own, and neither changes the other."""
    logs = _small_fleet(tmp_path)
    local = run([str(logs)], tmp_path / "local", jobs=1)
    assert local.summary.errors == 4
    submit = Path(sys.executable).with_name("spark-submit")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    cmd = [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false"]
    cmd += [str(REPO / "perfmodel" / "__main__.py"), "fleet", logs.as_uri(), "--out"]
    cmd += [str(tmp_path / "spark"), "--engine", "spark", "--spark-transfer", "binary", "--json"]
    cmd += [arg for w in WHAT_IFS for arg in ("--what-if", w)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]  # errors rows do not fail the run
    assert json.loads(proc.stdout)["applications"] == 3
    a, b = read_tables(tmp_path / "local"), read_tables(tmp_path / "spark")
    for name in a:
        assert a[name] == b[name], name
    reasons = b["errors"].column("reason").to_pylist()
    assert len(reasons) == 4
    assert all("perfmodel-fleet-" not in r for r in reasons)  # named by the log, not the copy
