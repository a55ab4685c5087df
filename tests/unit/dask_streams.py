"""Hand-built Dask task streams and bundles with known answers, in the exact record format
`perfmodel.dask.plugin` writes (its tests check that format against a real cluster)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfmodel.profile.bundle import DASK_DIR, MANIFEST, BundleManifest

T0 = 1_000.0
"""Seconds since the epoch of every stream's start (times below are offsets from it)."""
WORKER_A = "tcp://127.0.0.1:40001"
WORKER_B = "tcp://127.0.0.1:40002"


def key(group: str, i: int) -> str:
    """A tuple key as the plugin writes it: ``('a-0123456789abcdef', 0)``."""
    return str((group, i))


@dataclass
class StreamBuilder:
    """Records of one recording, by file; times in seconds from `T0`."""

    scheduler: list[dict[str, Any]] = field(default_factory=list)
    workers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    client: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scheduler.append({"e": "open", "kind": "scheduler", "pid": 10, "v": 1, "t": T0})
        self.scheduler.append(
            {"e": "scheduler", "address": "tcp://127.0.0.1:9000", "version": "2026.8.0", "t": T0}
        )
        self.client.append({"e": "open", "kind": "client", "pid": 10, "v": 1, "t": T0})
        self.client.append({"e": "client", "id": "Client-1", "t": T0})

    def worker(self, address: str, pid: int, nthreads: int, memory: int = 1 << 30) -> None:
        self.scheduler.append(
            {
                "e": "worker-added",
                "worker": address,
                "name": str(pid),
                "host": "127.0.0.1",
                "pid": pid,
                "nthreads": nthreads,
                "memory_limit": memory,
                "t": T0 + 0.1,
            }
        )
        self.workers[address] = [
            {"e": "open", "kind": "worker", "pid": pid, "v": 1, "t": T0},
            {"e": "worker", "worker": address, "nthreads": nthreads, "t": T0},
        ]

    def submit(self, at: float, keys: list[str], tasks: list[str]) -> None:
        self.client.append({"e": "submit", "t": T0 + at, "keys": keys})
        self.scheduler.append(
            {"e": "graph", "client": "Client-1", "keys": keys, "tasks": tasks, "t": T0 + at + 0.01}
        )

    def task(
        self,
        name: str,
        worker: str,
        thread: int,
        compute: tuple[float, float],
        *,
        cpu: float | None = None,
        deps: list[str] = (),  # type: ignore[assignment]
        nbytes: int = 1000,
        transfer: tuple[float, float] | None = None,
        disk_write: tuple[float, float] | None = None,
        status: str = "memory",
        spilled: tuple[int, int] | None = None,
        began: float | None = None,
        stored: float | None = None,
        ready: float | None = None,
    ) -> None:
        stops = []
        if transfer is not None:
            stops.append(
                {"action": "transfer", "start": T0 + transfer[0], "stop": T0 + transfer[1]}
            )
        stops.append({"action": "compute", "start": T0 + compute[0], "stop": T0 + compute[1]})
        if disk_write is not None:
            stops.append(
                {"action": "disk-write", "start": T0 + disk_write[0], "stop": T0 + disk_write[1]}
            )
        group = name[2:].split("'", 1)[0]
        self.scheduler.append(
            {
                "e": "task",
                "key": name,
                "prefix": group.rsplit("-", 1)[0],
                "group": group,
                "status": status,
                "worker": worker,
                "thread": thread,
                "startstops": stops,
                "nbytes": nbytes,
                "deps": list(deps),
                "t": T0 + compute[1] + 0.001,
            }
        )
        done: dict[str, Any] = {"e": "done", "key": name, "t": T0 + (stored or compute[1])}
        if began is not None:
            done["began"] = T0 + began
        if ready is not None:
            done["ready"] = T0 + ready
        if spilled is not None:
            done["spilled"] = list(spilled)
        self.workers[worker].append(done)
        if cpu is not None:
            self.workers[worker].append({"e": "thread-cpu", "key": name, "s": cpu, "t": done["t"]})

    def probes(self, worker: str, start: float, stop: float, lag_us: int) -> None:
        """The worker's interpreter-lock probes every 10 ms from ``start`` to ``stop`` (s),
        each ``lag_us`` late, as one record (the plugin writes one a second)."""
        at = list(range(0, round((stop - start) * 1000), 10))
        self.workers[worker].append(
            {"e": "lock", "t0": T0 + start, "at": at, "lag_us": [lag_us] * len(at), "t": T0 + stop}
        )

    def gathered(self, at: float, keys: list[str]) -> None:
        self.client.append({"e": "gathered", "keys": keys, "t": T0 + at})

    def close(self, at: float) -> None:
        self.scheduler.append({"e": "worker-removed", "worker": WORKER_A, "t": T0 + at})
        self.scheduler.append({"e": "close", "t": T0 + at})

    def write(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        _lines(directory / "scheduler-10-1.jsonl", self.scheduler)
        _lines(directory / "client-10-2.jsonl", self.client)
        for n, records in enumerate(self.workers.values()):
            _lines(directory / f"worker-{20 + n}-3.jsonl", records)

    def bundle(self, path: Path, host_cores: int = 2) -> Path:
        """A profile bundle holding this stream (no samples, no resources)."""
        path.mkdir(parents=True, exist_ok=True)
        manifest = BundleManifest(host_cores=host_cores, command=["python", "app.py"])
        (path / MANIFEST).write_text(manifest.to_json())
        self.write(path / DASK_DIR)
        return path


def _lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


A = "a-0123456789abcdef"
B = "b-fedcba9876543210"


def two_stage(cpu_share: float = 1.0) -> StreamBuilder:
    """One worker, two threads, two cores: two 200 ms tasks of group ``a`` side by side,
    then task ``b`` reading both (10 ms after they end; 100 ms compute + 10 ms spill
    write). Submitted at 0.5 s, first task at 0.6 s, result received at 1.0 s.
    ``cpu_share``: of each compute, the share its thread spent on CPU."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=2)
    a0, a1, b0 = key(A, 0), key(A, 1), key(B, 0)
    s.submit(0.5, [b0], [a0, a1, b0])
    s.task(a0, WORKER_A, 1, (0.6, 0.8), cpu=0.2 * cpu_share, nbytes=4000)
    s.task(a1, WORKER_A, 2, (0.6, 0.8), cpu=0.2 * cpu_share, nbytes=6000)
    s.task(
        b0,
        WORKER_A,
        1,
        (0.81, 0.91),
        cpu=0.1 * cpu_share,
        deps=[a0, a1],
        disk_write=(0.91, 0.92),
        spilled=(5000, 3000),
    )
    s.gathered(1.0, [b0])
    s.close(1.5)
    return s
