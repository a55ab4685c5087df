"""The Dask front end's one entry point: a recorded Dask bundle → a `LoadedProfile` and its
stack samples tied to tasks, for the facade (`perfmodel.load`) to analyse like any other.

A bundle is a Dask recording when its ``raw/dask`` directory holds task-stream files
(`perfmodel.dask.plugin` writes them); anything else is left to the Spark front end.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perfmodel.dag.loaded import LoadedProfile
from perfmodel.dag.model import LOCK_HELD_MS, HostUsage
from perfmodel.dask.stream import stream_files
from perfmodel.extras import require_extra
from perfmodel.profile.bundle import (
    DASK_DIR,
    is_bundle,
    load_resources,
    load_samples,
    missing_dask_files,
    read_manifest,
)
from perfmodel.profile.eventlog import EventLogSource
from perfmodel.profile.sources.stores import RemotePath

WORKER_PROCESS = "dask worker"
"""The process name of a worker's stack samples."""


def is_dask_bundle(path: str | Path) -> bool:
    """True for a profile bundle with a Dask task stream in it."""
    return is_bundle(path) and bool(stream_files(Path(path) / DASK_DIR))


def read_dask_bundle(path: str | Path) -> LoadedProfile:
    """The Dask recording at ``path`` (`is_dask_bundle`), its stack samples tied to tasks."""
    require_extra("bundles", f"reading the recorded bundle {path}")
    # Here, not at the top: every analysis imports this module, and reading a Spark log
    # never needs the Dask reader, builder and sample tables (~40 ms of start-up).
    from perfmodel.dag.thread_spans import LockProbes, lock_held_ms, tie_samples
    from perfmodel.dask.build import build
    from perfmodel.dask.stream import read_stream
    from perfmodel.dask.threads import worker_thread_cpu

    bundle = Path(path)
    manifest = read_manifest(bundle)
    stream = read_stream(bundle / DASK_DIR, bundle)
    local_pids = frozenset(r.pid for r in manifest.recordings if r.pid)
    command = manifest.command or []
    built = build(
        stream,
        app_name=_script_name(command),
        host_cores=manifest.host_cores,
        local_pids=local_pids,
    )
    profile = built.profile
    profile.source = str(bundle)
    profile.host_usage = _host_usage(bundle)
    profile.thread_cpu = worker_thread_cpu(bundle, stream, built.spans.executor_of_pid)
    probes = {
        w.pid: LockProbes(
            np.concatenate([r.t0 * 1000.0 + np.asarray(r.at, np.float64) for r in w.probes]),
            np.concatenate([np.asarray(r.lag_us, np.int64) for r in w.probes]),
        )
        for w in stream.workers
        if w.pid is not None and w.probes
    }
    held = lock_held_ms(built.spans, probes)
    if held:
        profile.extra[LOCK_HELD_MS] = held
    if bad := sum(1 for p in stream.problems if p.line is not None):
        profile.warnings.append(
            f"{bad} task-stream line(s) could not be read and were skipped (see problems)"
        )
    parts: list[Path | RemotePath] = list(stream_files(bundle / DASK_DIR))
    profile.warnings += missing_dask_files(manifest, len(parts))
    return LoadedProfile(
        profile=profile,
        source=EventLogSource(
            path=bundle,
            app_key=profile.app_id,
            parts=parts,
            attempt=None,
        ),
        problems=stream.problems,
        bundle=bundle,
        task_end_events=built.tasks,
        task_end_reasons=built.task_end_reasons,
        quality=stream.quality,
        samples=tie_samples(load_samples(bundle), built.spans, WORKER_PROCESS),
    )


def _script_name(command: list[str]) -> str:
    """The recorded command's script (``app.py``), else its program's name."""
    scripts = [Path(part).name for part in command if part.endswith(".py")]
    return scripts[0] if scripts else (Path(command[0]).name if command else "")


def _host_usage(bundle: Path) -> HostUsage | None:
    """The process tree's measured CPU over time (`record`'s monitor), as for Spark."""
    samples = load_resources(bundle)
    if len(samples) < 2:
        return None
    return HostUsage(t_ms=[s.t_ms for s in samples], cores=[s.cpu_cores for s in samples])
