"""The run store's schema, as the forward migrations that build it (`perfmodel.runs.store`).

Step ``n`` takes a store from ``PRAGMA user_version`` ``n`` to ``n + 1``, in one
transaction; a step is never edited once released (stores in the field were built by it),
only followed by another.
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: experiments, configurations, runs and their resource time series.
    """
    CREATE TABLE experiments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        workload TEXT NOT NULL,
        spec_path TEXT NOT NULL,
        spec_text TEXT NOT NULL,
        params_json TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE configs (
        id INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        name TEXT NOT NULL,
        master TEXT NOT NULL,
        cores INTEGER,
        memory_bytes INTEGER,
        settings_json TEXT NOT NULL,
        UNIQUE (experiment_id, name)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        config_id INTEGER NOT NULL REFERENCES configs(id),
        workload TEXT NOT NULL,
        repetition INTEGER NOT NULL,
        warmup INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
        command_json TEXT NOT NULL,
        bundle_path TEXT,
        host TEXT NOT NULL,
        runner_pid INTEGER NOT NULL,
        runner_started REAL NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL,
        exit_code INTEGER,
        wall_s REAL,
        app_s REAL,
        cpu_s REAL,
        peak_rss_bytes INTEGER,
        read_bytes INTEGER,
        write_bytes INTEGER,
        net_sent_bytes INTEGER,
        net_recv_bytes INTEGER,
        load_avg REAL,
        error TEXT
    );
    CREATE INDEX runs_by_experiment ON runs (experiment_id, config_id);
    CREATE TABLE samples (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        t_s REAL NOT NULL,
        cpu_percent REAL NOT NULL,
        rss_bytes INTEGER NOT NULL,
        read_bytes INTEGER NOT NULL,
        write_bytes INTEGER NOT NULL,
        net_sent_bytes INTEGER NOT NULL,
        net_recv_bytes INTEGER NOT NULL,
        processes INTEGER NOT NULL
    );
    CREATE INDEX samples_by_run ON samples (run_id, t_s);
    """,
    # 2: per-stage summaries (for runs show/compare) and predictions with model versions.
    """
    CREATE TABLE stages (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        stage_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        name TEXT NOT NULL,
        tasks INTEGER NOT NULL,
        duration_s REAL NOT NULL,
        task_s REAL NOT NULL,
        cpu_s REAL NOT NULL,
        gc_s REAL NOT NULL,
        input_bytes INTEGER NOT NULL,
        output_bytes INTEGER NOT NULL,
        shuffle_read_bytes INTEGER NOT NULL,
        shuffle_write_bytes INTEGER NOT NULL,
        spill_bytes INTEGER NOT NULL,
        PRIMARY KEY (run_id, stage_id, attempt)
    );
    CREATE TABLE model_versions (
        id INTEGER PRIMARY KEY,
        method TEXT NOT NULL,
        version TEXT NOT NULL,
        UNIQUE (method, version)
    );
    CREATE TABLE predictions (
        id INTEGER PRIMARY KEY,
        baseline_run_id INTEGER NOT NULL REFERENCES runs(id),
        target_config_id INTEGER NOT NULL REFERENCES configs(id),
        model_version_id INTEGER NOT NULL REFERENCES model_versions(id),
        predicted_s REAL NOT NULL,
        baseline_replay_s REAL NOT NULL,
        observed_s REAL NOT NULL,
        bottleneck TEXT NOT NULL,
        detail_json TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (baseline_run_id, target_config_id, model_version_id)
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def statements(script: str) -> list[str]:
    """A migration script split into its statements (none of them holds a semicolon)."""
    return [s.strip() for s in script.split(";") if s.strip()]
