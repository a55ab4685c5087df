"""The run store: migrations from an empty database, crash recovery, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from perfmodel.runs.rows import RunOutcome, Sample, StageRow
from perfmodel.runs.store import SCHEMA_VERSION, RunStore, StoreError


def _seed(store: RunStore) -> tuple[int, int]:
    exp = store.add_experiment("exp", "wl", "/spec.toml", "name='exp'", {"n": "1"})
    cfg = store.add_config(exp, "local[1]", "local[1]", 1, 512 << 20, {"master": "local[1]"})
    return exp, cfg


def test_migrates_an_empty_database_to_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    sqlite3.connect(path).close()  # an existing, empty database file
    with RunStore(path) as store:
        assert store.version == SCHEMA_VERSION
        assert store.migrate() == 0  # idempotent
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"experiments", "configs", "runs", "samples", "stages", "predictions"} <= tables
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_migrates_a_version_1_store_forward_keeping_its_runs(tmp_path: Path) -> None:
    from perfmodel.runs import store as store_mod

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(store_mod.MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO experiments VALUES (1, 'old', 'wl', '/s', '', '{}', 0)")
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.version == SCHEMA_VERSION
        assert store.experiment_names() == ["old"]
        assert store.stages(1) == []


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer than this perfmodel"):
        RunStore(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable run store"):
        RunStore(path)


def test_run_round_trip(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        exp, cfg = _seed(store)
        run = store.start_run(exp, cfg, "wl", 0, False, ["spark-submit", "x.py"], "/b")
        assert store.run(run).status == "running"
        outcome = RunOutcome(
            status="ok",
            exit_code=0,
            wall_s=3.0,
            app_s=2.5,
            cpu_s=4.0,
            peak_rss_bytes=10,
            samples=[Sample(0.5, 90.0, 10, 1, 2, 3, 4, 2)],
            stages=[StageRow(0, 0, "count", 2, 1.0, 1.5, 1.2, 0.1, 5, 6, 7, 8, 9)],
        )
        store.finish_run(run, outcome)
        row = store.run(run)
        assert (row.status, row.app_s, row.config, row.cores) == ("ok", 2.5, "local[1]", 1)
        assert row.command == ["spark-submit", "x.py"]
        assert store.samples(run)[0].cpu_percent == 90.0
        assert store.stages(run)[0].spill_bytes == 9
        with pytest.raises(StoreError, match="no run 99"):
            store.run(99)


CRASHER = """
import sys, time
from perfmodel.runs.store import RunStore
store = RunStore(sys.argv[1])
exp = store.add_experiment("exp", "wl", "/s", "", {})
cfg = store.add_config(exp, "c", "local[1]", 1, None, {})
store.start_run(exp, cfg, "wl", 0, False, ["sleep"], None)
print("started", flush=True)
time.sleep(120)
"""


def test_a_killed_runner_leaves_its_run_failed_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    with RunStore(path) as store:  # the runner is alive: its run stays running
        assert [r.status for r in store.runs()] == ["running"]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with RunStore(path) as store:
        (run,) = store.runs()
        assert run.status == "failed"
        assert "runner process died" in (run.error or "")
        assert run.ended_at is not None


def _writer(path: str, n: int, tag: int) -> None:
    with RunStore(path) as store:
        exp = store.add_experiment(f"exp{tag}", "wl", "/s", "", {})
        cfg = store.add_config(exp, "c", "local[1]", 1, None, {})
        for i in range(n):
            run = store.start_run(exp, cfg, "wl", i, False, ["x"], None)
            store.finish_run(
                run,
                RunOutcome(status="ok", wall_s=1.0, samples=[Sample(0.1, 1, 1, 1, 1, 1, 1, 1)]),
            )


def test_concurrent_writers_do_not_corrupt_the_store(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    RunStore(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 25, k)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with RunStore(path) as store:
        runs = store.runs()
        assert len(runs) == 100 and {r.status for r in runs} == {"ok"}
        assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
