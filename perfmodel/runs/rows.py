"""The run store's row types: what a run, its stages, samples and outcome look like in Python.

Split from `perfmodel.runs.store` so that module holds only the database (connection,
migration, crash recovery, the SQL of each read and write) while these plain dataclasses,
which the runner, accuracy, plots and recommend code pass around, stand on their own.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class RunRow:
    """One run as stored (plain values; `config` is the config's settings)."""

    id: int
    experiment: str
    workload: str
    config: str
    config_settings: dict[str, Any]
    cores: int | None
    memory_bytes: int | None
    repetition: int
    warmup: bool
    status: str
    command: list[str]
    bundle_path: str | None
    host: str
    started_at: float
    ended_at: float | None
    exit_code: int | None
    wall_s: float | None
    app_s: float | None
    cpu_s: float | None
    peak_rss_bytes: int | None
    read_bytes: int | None
    write_bytes: int | None
    net_sent_bytes: int | None
    net_recv_bytes: int | None
    load_avg: float | None
    error: str | None
    experiment_id: int = 0
    config_id: int = 0
    params: dict[str, str] = field(default_factory=dict)
    """The experiment's parameters (data size...): runs are comparable only when equal."""

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class StageRow:
    stage_id: int
    attempt: int
    name: str
    tasks: int
    duration_s: float
    task_s: float
    cpu_s: float
    gc_s: float
    input_bytes: int
    output_bytes: int
    shuffle_read_bytes: int
    shuffle_write_bytes: int
    spill_bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class Sample:
    """One monitoring sample of a run's process tree (cumulative byte counters)."""

    t_s: float
    cpu_percent: float
    rss_bytes: int
    read_bytes: int
    write_bytes: int
    net_sent_bytes: int
    net_recv_bytes: int
    processes: int


@dataclass(slots=True)
class RunOutcome:
    """What a finished run measured; written by `RunStore.finish_run`."""

    status: str
    exit_code: int | None = None
    wall_s: float | None = None
    app_s: float | None = None
    cpu_s: float | None = None
    peak_rss_bytes: int | None = None
    read_bytes: int | None = None
    write_bytes: int | None = None
    net_sent_bytes: int | None = None
    net_recv_bytes: int | None = None
    error: str | None = None
    samples: list[Sample] = field(default_factory=list)
    stages: list[StageRow] = field(default_factory=list)


def run_row(r: sqlite3.Row) -> RunRow:
    """A `RunRow` from a row of `RunStore`'s runs query (runs joined to experiment and config)."""
    return RunRow(
        id=r["id"],
        experiment=r["experiment"],
        workload=r["workload"],
        config=r["config"],
        config_settings=json.loads(r["settings_json"]),
        cores=r["cores"],
        memory_bytes=r["memory_bytes"],
        repetition=r["repetition"],
        warmup=bool(r["warmup"]),
        status=r["status"],
        command=json.loads(r["command_json"]),
        bundle_path=r["bundle_path"],
        host=r["host"],
        started_at=r["started_at"],
        ended_at=r["ended_at"],
        exit_code=r["exit_code"],
        wall_s=r["wall_s"],
        app_s=r["app_s"],
        cpu_s=r["cpu_s"],
        peak_rss_bytes=r["peak_rss_bytes"],
        read_bytes=r["read_bytes"],
        write_bytes=r["write_bytes"],
        net_sent_bytes=r["net_sent_bytes"],
        net_recv_bytes=r["net_recv_bytes"],
        load_avg=r["load_avg"],
        error=r["error"],
        experiment_id=r["experiment_id"],
        config_id=r["config_id"],
        params=json.loads(r["params_json"]),
    )
