"""The run store: an SQLite database of experiments, runs, measurements and predictions.

Measurements are expensive (minutes of machine time each), so the store is built not to lose
them: a run's row is written *before* the run starts, with the runner's pid and process start
time, and is completed when it ends. If the runner dies (killed, machine reboot), the row stays
``running`` until the store is next opened, which marks every ``running`` row whose runner is
gone as ``failed`` with the reason. Several runners may share one store: WAL journaling lets
readers proceed during writes, and a busy timeout makes concurrent writers wait for each other
instead of failing. The schema is versioned (``PRAGMA user_version``) and migrated forward in
steps, each in one transaction; a store written by a newer perfmodel is refused, not guessed at.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs
import psutil

from perfmodel.atomic import make_output_dir
from perfmodel.errors import PerfmodelError
from perfmodel.runs.rows import RunOutcome, RunRow, Sample, StageRow, run_row
from perfmodel.runs.schema import MIGRATIONS, SCHEMA_VERSION, statements

STORE_ENV = "PERFMODEL_STORE"
BUSY_TIMEOUT_MS = 60_000


class StoreError(PerfmodelError):
    """The store cannot be opened or used; the message says which file and why."""


def default_store_path() -> Path:
    """``$PERFMODEL_STORE``, else ``runs.sqlite`` in the user's data directory."""
    override = os.environ.get(STORE_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("perfmodel")) / "runs.sqlite"


def _check_store_path(path: Path, *, create: bool) -> None:
    if str(path) in ("", "."):
        raise StoreError("the run store path is empty; give the store's file path (--store)")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise StoreError(f"{path} is a link to nothing; give the store's file path") from None
        if not create:
            raise StoreError(
                f"no run store at {path}; `perfmodel experiment run` makes one, or name an "
                "existing store with --store"
            ) from None
        return
    except OSError as exc:
        raise StoreError(f"cannot open the run store {path}: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise StoreError(f"{path} is a directory; give the store's file path")
    if not stat.S_ISREG(mode):
        raise StoreError(f"{path} is not a regular file (a device or FIFO); give a store file")
    if not create and path.stat().st_size == 0:
        # SQLite would make an empty file a new database on first use: a command that only
        # reads must leave the user's file as it found it (a wrong --store, a truncated copy).
        raise StoreError(f"{path} is empty, not a run store; name an existing store with --store")


def _process_started(pid: int) -> float:
    return psutil.Process(pid).create_time()


class RunStore:
    """An open store. Use as a context manager, or call `close`."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        """Open the store at ``path``; with ``create`` (a command that records runs) a
        missing store and its folder are made, without it (a command that only reads) a
        missing store is an error and nothing is created. Anything at ``path`` that is not
        a regular file (a folder, device, FIFO, a link to nothing) is refused: SQLite would
        write into it in place."""
        self.path = Path(path) if path is not None else default_store_path()
        _check_store_path(self.path, create=create)
        try:
            if create:
                make_output_dir(self.path.parent)
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the run store {self.path}: {exc}") from None
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self.migrate()
            self.reap_dead_runs()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"{self.path} is not a usable run store: {exc}") from None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken eagerly so concurrent writers queue on the lock."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @property
    def version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> int:
        """Bring the schema to `SCHEMA_VERSION`; returns the number of steps applied."""
        with self._write() as db:
            current = int(db.execute("PRAGMA user_version").fetchone()[0])
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {current}, newer than this perfmodel "
                    f"understands ({SCHEMA_VERSION}); upgrade perfmodel or use another --store"
                )
            for step in range(current, SCHEMA_VERSION):
                for statement in statements(MIGRATIONS[step]):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {step + 1}")
        return SCHEMA_VERSION - current

    def reap_dead_runs(self) -> list[int]:
        """Mark ``running`` rows of this host whose runner process is gone as failed."""
        host = socket.gethostname()
        rows = self._db.execute(
            "SELECT id, runner_pid, runner_started FROM runs WHERE status = 'running' AND host = ?",
            (host,),
        ).fetchall()
        dead = []
        for row in rows:
            try:
                alive = abs(_process_started(row["runner_pid"]) - row["runner_started"]) < 1.0
            except (psutil.Error, OSError):
                alive = False
            if not alive:
                dead.append(int(row["id"]))
        if dead:
            with self._write() as db:
                for run_id in dead:
                    db.execute(
                        "UPDATE runs SET status = 'failed', error = ?, ended_at = "
                        "COALESCE(ended_at, ?) WHERE id = ? AND status = 'running'",
                        ("the runner process died before the run finished", time.time(), run_id),
                    )
        return dead

    # -- writing --------------------------------------------------------------------------

    def add_experiment(
        self, name: str, workload: str, spec_path: str, spec_text: str, params: dict[str, str]
    ) -> int:
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO experiments (name, workload, spec_path, spec_text, params_json, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (name, workload, spec_path, spec_text, json.dumps(params), time.time()),
            )
            return int(cur.lastrowid or 0)

    def add_config(
        self,
        experiment_id: int,
        name: str,
        master: str,
        cores: int | None,
        memory_bytes: int | None,
        settings: dict[str, Any],
    ) -> int:
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO configs (experiment_id, name, master, cores, memory_bytes, "
                "settings_json) VALUES (?, ?, ?, ?, ?, ?)",
                (experiment_id, name, master, cores, memory_bytes, json.dumps(settings)),
            )
            return int(cur.lastrowid or 0)

    def start_run(
        self,
        experiment_id: int,
        config_id: int,
        workload: str,
        repetition: int,
        warmup: bool,
        command: Sequence[str],
        bundle_path: str | None,
    ) -> int:
        """Write the run's row before it starts, so it cannot be lost."""
        pid = os.getpid()
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO runs (experiment_id, config_id, workload, repetition, warmup, "
                "status, command_json, bundle_path, host, runner_pid, runner_started, "
                "started_at, load_avg) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (
                    experiment_id,
                    config_id,
                    workload,
                    repetition,
                    int(warmup),
                    json.dumps(list(command)),
                    bundle_path,
                    socket.gethostname(),
                    pid,
                    _process_started(pid),
                    time.time(),
                    load,
                ),
            )
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, outcome: RunOutcome) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, wall_s = ?, app_s = ?, "
                "cpu_s = ?, peak_rss_bytes = ?, read_bytes = ?, write_bytes = ?, "
                "net_sent_bytes = ?, net_recv_bytes = ?, error = ? WHERE id = ?",
                (
                    outcome.status,
                    time.time(),
                    outcome.exit_code,
                    outcome.wall_s,
                    outcome.app_s,
                    outcome.cpu_s,
                    outcome.peak_rss_bytes,
                    outcome.read_bytes,
                    outcome.write_bytes,
                    outcome.net_sent_bytes,
                    outcome.net_recv_bytes,
                    outcome.error,
                    run_id,
                ),
            )
            db.executemany(
                "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        s.t_s,
                        s.cpu_percent,
                        s.rss_bytes,
                        s.read_bytes,
                        s.write_bytes,
                        s.net_sent_bytes,
                        s.net_recv_bytes,
                        s.processes,
                    )
                    for s in outcome.samples
                ],
            )
            db.executemany(
                "INSERT OR REPLACE INTO stages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        s.stage_id,
                        s.attempt,
                        s.name,
                        s.tasks,
                        s.duration_s,
                        s.task_s,
                        s.cpu_s,
                        s.gc_s,
                        s.input_bytes,
                        s.output_bytes,
                        s.shuffle_read_bytes,
                        s.shuffle_write_bytes,
                        s.spill_bytes,
                    )
                    for s in outcome.stages
                ],
            )

    def model_version_id(self, method: str, version: str) -> int:
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO model_versions (method, version) VALUES (?, ?)",
                (method, version),
            )
            row = db.execute(
                "SELECT id FROM model_versions WHERE method = ? AND version = ?",
                (method, version),
            ).fetchone()
            return int(row["id"])

    def save_prediction(
        self,
        baseline_run_id: int,
        target_config_id: int,
        model_version_id: int,
        predicted_s: float,
        baseline_replay_s: float,
        observed_s: float,
        bottleneck: str,
        detail: dict[str, Any],
    ) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO predictions (baseline_run_id, target_config_id, "
                "model_version_id, predicted_s, baseline_replay_s, observed_s, bottleneck, "
                "detail_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    baseline_run_id,
                    target_config_id,
                    model_version_id,
                    predicted_s,
                    baseline_replay_s,
                    observed_s,
                    bottleneck,
                    json.dumps(detail),
                    time.time(),
                ),
            )

    # -- reading --------------------------------------------------------------------------

    _RUN_SELECT = (
        "SELECT r.*, e.name AS experiment, e.params_json, c.name AS config, c.settings_json, "
        "c.cores, c.memory_bytes FROM runs r JOIN experiments e ON e.id = r.experiment_id "
        "JOIN configs c ON c.id = r.config_id"
    )

    def runs(
        self,
        ids: Sequence[int] | None = None,
        experiment: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        *,
        id_range: tuple[int, int] | None = None,
    ) -> list[RunRow]:
        """Runs, newest last; filtered by ids, an inclusive id range (bounds, so a wide range
        costs no more than a narrow one), experiment name and status."""
        sql = self._RUN_SELECT
        where: list[str] = []
        args: list[Any] = []
        if ids is not None:
            where.append(f"r.id IN ({','.join('?' * len(ids))})")
            args += list(ids)
        if id_range is not None:
            where.append("r.id BETWEEN ? AND ?")
            args += list(id_range)
        if experiment is not None:
            where.append("e.name = ?")
            args.append(experiment)
        if status is not None:
            where.append("r.status = ?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.id"
        rows = [run_row(r) for r in self._db.execute(sql, args).fetchall()]
        return rows[-limit:] if limit else rows

    def run(self, run_id: int) -> RunRow:
        rows = self.runs(ids=[run_id])
        if not rows:
            raise StoreError(f"no run {run_id} in {self.path} (see `perfmodel runs list`)")
        return rows[0]

    def samples(self, run_id: int) -> list[Sample]:
        rows = self._db.execute(
            "SELECT * FROM samples WHERE run_id = ? ORDER BY t_s", (run_id,)
        ).fetchall()
        return [
            Sample(
                t_s=r["t_s"],
                cpu_percent=r["cpu_percent"],
                rss_bytes=r["rss_bytes"],
                read_bytes=r["read_bytes"],
                write_bytes=r["write_bytes"],
                net_sent_bytes=r["net_sent_bytes"],
                net_recv_bytes=r["net_recv_bytes"],
                processes=r["processes"],
            )
            for r in rows
        ]

    def stages(self, run_id: int) -> list[StageRow]:
        rows = self._db.execute(
            "SELECT * FROM stages WHERE run_id = ? ORDER BY stage_id, attempt", (run_id,)
        ).fetchall()
        return [StageRow(**{k: r[k] for k in r.keys() if k != "run_id"}) for r in rows]

    def experiment_names(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT name FROM experiments ORDER BY name").fetchall()
        return [r["name"] for r in rows]

    def configs(self, experiment: str) -> list[dict[str, Any]]:
        """Every config ever stored for an experiment name (one per name: the latest)."""
        rows = self._db.execute(
            "SELECT c.* FROM configs c JOIN experiments e ON e.id = c.experiment_id "
            "WHERE e.name = ? ORDER BY c.id",
            (experiment,),
        ).fetchall()
        return [dict(r) for r in rows]
