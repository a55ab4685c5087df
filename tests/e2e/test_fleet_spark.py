"""`perfmodel fleet --engine spark` on local[2]: the same tables as the local engine, for
the shared real logs plus 24 generated ones, both from the CLI and through
`spark-submit` with Spark reading the logs itself (binaryFiles, as for hdfs:// or s3a://
URIs). The local engine's own run at fleet scale (about 200 generated logs) is
tests/e2e/test_fleet.py; here what matters is that both engines give the same rows, which
24 logs of every shape (plain, zstd, rolling, corrupt, a regressed series: the fewest of
`make_fleet`'s copies that hold every shape) show as well as two hundred."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from perfmodel.fleet.synth import write_corrupt
from tests.conftest import REPO, shared_eventlogs
from tests.fleet_helpers import WHAT_IFS, make_fleet, read_tables, run

pytestmark = pytest.mark.slow

SPARK_FLEET_COPIES = 24


def _summary(cmd: list[str], env: dict[str, str], ok: tuple[int, ...]) -> dict[str, object]:
    """Run a fleet command with the what-ifs, in a process (and a JVM) of its own as a user
    runs it; its `--json` summary, once it ended with one of the ``ok`` exit codes."""
    full = {**os.environ, "PYSPARK_PYTHON": sys.executable, **env}
    full.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    cmd = [*cmd, "--json", *(arg for w in WHAT_IFS for arg in ("--what-if", w))]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=900)
    assert proc.returncode in ok, proc.stderr[-3000:]
    summary: dict[str, object] = json.loads(proc.stdout)
    return summary


def _spark_fleet(inputs: list[str], out: Path) -> dict[str, object]:
    """`perfmodel fleet --engine spark`, the JVM started when the run starts; exit 1 when
    some logs are errors rows."""
    cmd = [sys.executable, "-m", "perfmodel", "fleet", *inputs, "--out", str(out)]
    cmd += ["--engine", "spark", "--master", "local[2]"]
    cmd += ["--spark-conf", "spark.ui.enabled=false"]
    return _summary(cmd, {}, ok=(0, 1))


def _spark_submit_fleet(inputs: list[Path], out: Path) -> dict[str, object]:
    """Through `spark-submit` (perfmodel/__main__.py as the application), with Spark reading
    the logs itself (binaryFiles, as for hdfs:// or s3a:// URIs): the files of each log (a
    rolling directory's parts) are grouped and analysed from a temporary copy in the worker.
    Errors rows do not fail the run."""
    submit = Path(sys.executable).with_name("spark-submit")
    cmd = [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false"]
    cmd += [str(REPO / "perfmodel" / "__main__.py"), "fleet", *(p.as_uri() for p in inputs)]
    cmd += ["--out", str(out), "--engine", "spark", "--spark-transfer", "binary"]
    return _summary(cmd, {"PYTHONPATH": str(REPO)}, ok=(0,))


@pytest.mark.timeout(1800)  # two Spark runs and a local one, each bounded by 900 s below
def test_both_ways_of_running_the_spark_engine_give_the_local_engine_s_tables(
    tmp_path: Path,
) -> None:
    """One output folder filled by two Spark runs, each with a JVM of its own, holds the local
    engine's tables for all the logs. `perfmodel fleet --engine spark` analyses the generated
    fleet (24 logs and its corrupt files); then `spark-submit`, with Spark reading the
    files itself, is given those and the shared real logs (rolling directories among them) and
    a few more corrupt files, and analyses only what the first run left: it resumes."""
    shared = shared_eventlogs()
    synth = make_fleet(shared, tmp_path / "logs", copies=SPARK_FLEET_COPIES)
    logs, late = tmp_path / "logs", tmp_path / "late"
    late.mkdir()
    late_corrupt = write_corrupt(late, random.Random(1))
    inputs = [logs, shared, late]
    local = run([str(p) for p in inputs], tmp_path / "local", jobs=2)
    expected = len(synth.logs) + 15 + len(synth.corrupt) + len(late_corrupt)
    assert len(local.analysed) == expected

    first = _spark_fleet([str(logs)], tmp_path / "spark")
    assert first["analysed_now"] == len(synth.logs) + len(synth.corrupt)
    assert not (tmp_path / "spark" / "_spark-staging").exists()
    second = _spark_submit_fleet(inputs, tmp_path / "spark")
    assert second["analysed_now"] == 15 + len(late_corrupt)
    a, b = read_tables(tmp_path / "local"), read_tables(tmp_path / "spark")
    for name in a:
        assert a[name].schema == b[name].schema, name
        assert a[name] == b[name], name
    reasons = b["errors"].column("reason").to_pylist()
    assert len(reasons) == len(synth.corrupt) + len(late_corrupt)
    assert all("perfmodel-fleet-" not in r for r in reasons)  # named by the log, not the copy
