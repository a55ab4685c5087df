"""Whole-JVM CPU of each recorded JVM, from JFR's ``jdk.CPULoad``, once a second.

Why: an executor JVM spends CPU its tasks do not: compiling the code they run (JIT), the
collector's own threads, serving its shuffle files to other executors. Spark's task metrics
time only the task threads, and on a cluster `perfmodel record` sees only the driver's
process tree, so without this the executors' other CPU is invisible. Much of it is paid
once per JVM, so a cluster of more executors pays it more times: the namespace cluster
study measured it (docs/cluster.md). The what-if replay reads it through
`perfmodel.simulate.executor_background`.

JFR writes the JVM's user and system CPU as a fraction of *all* the host's CPUs (it divides
by ``/proc/stat``'s total, not by a container's share); ``jdk.CPUInformation`` says how
many there are. Stored as ``jvm_cpu.parquet`` (docs/bundle.md): one row per recording and
second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

    from perfmodel.profile.jfr import JfrRecording

JVM_CPU = "jvm_cpu.parquet"
_COLUMNS = ("recording", "executor_id", "pid", "t_ms", "cores")


@dataclass(slots=True)
class JvmCpuSeries:
    """One JVM's CPU over time: ``cores[i]`` cores on average over the second before
    ``t_ms[i]`` (epoch ms)."""

    executor_id: str
    t_ms: np.ndarray
    cores: np.ndarray

    def periods(
        self, start_ms: float = -np.inf, end_ms: float = np.inf
    ) -> tuple[np.ndarray, np.ndarray]:
        """(cores, seconds) of each period ending in [start_ms, end_ms] (empty periods left
        out)."""
        if self.t_ms.size < 2:
            return np.zeros(0), np.zeros(0)
        dt = np.diff(self.t_ms) / 1000.0
        inside = (self.t_ms[1:] >= start_ms) & (self.t_ms[1:] <= end_ms) & (dt > 0)
        return self.cores[1:][inside], dt[inside]

    def core_seconds(self, start_ms: float = -np.inf, end_ms: float = np.inf) -> float:
        """CPU-seconds the JVM used in the periods ending in [start_ms, end_ms]."""
        cores, seconds = self.periods(start_ms, end_ms)
        return float((cores * seconds).sum())


@dataclass(slots=True)
class JvmCpu:
    """Every recorded JVM's CPU series, by executor id (``driver`` for the driver)."""

    series: dict[str, JvmCpuSeries]


def unscaled(recordings: Sequence[JfrRecording], fallback_cpus: int | None = None) -> list[str]:
    """Recordings with CPU load but no host CPU count to scale it by (`table` leaves them
    out; the bundle's manifest says so)."""
    return [
        rec.path
        for rec in recordings
        if rec.error is None and rec.cpu_load_ms.size and not (rec.hw_threads or fallback_cpus)
    ]


def table(recordings: Sequence[JfrRecording], fallback_cpus: int | None = None) -> pa.Table:
    """The ``jvm_cpu.parquet`` rows of these recordings: cores = JFR's share × host CPUs.

    ``fallback_cpus``: the host's CPUs where a recording does not say (made before
    ``jdk.CPUInformation`` was recorded); its rows are left out where that is unknown too
    (`unscaled` names them).
    """
    import pyarrow as pa

    cols: dict[str, list[object]] = {name: [] for name in _COLUMNS}
    for rec in recordings:
        cpus = rec.hw_threads or fallback_cpus
        if rec.error is not None or not cpus or rec.cpu_load_ms.size == 0:
            continue
        ok = np.isfinite(rec.cpu_load) & (rec.cpu_load >= 0)  # JFR writes NaN when it cannot tell
        n = int(ok.sum())
        cols["recording"] += [rec.path] * n
        cols["executor_id"] += [rec.executor_id or "driver"] * n
        cols["pid"] += [rec.pid if rec.pid is not None else -1] * n
        cols["t_ms"] += rec.cpu_load_ms[ok].tolist()
        cols["cores"] += (rec.cpu_load[ok] * cpus).tolist()
    return pa.table(
        {
            "recording": pa.array(cols["recording"], pa.string()),
            "executor_id": pa.array(cols["executor_id"], pa.string()),
            "pid": pa.array(cols["pid"], pa.int64()),
            "t_ms": pa.array(cols["t_ms"], pa.float64()),
            "cores": pa.array(cols["cores"], pa.float64()),
        }
    )


def from_table(data: pa.Table) -> JvmCpu | None:
    """The series in a ``jvm_cpu.parquet`` table (None when it has no rows)."""
    if data.num_rows == 0:
        return None
    executors = np.asarray(data.column("executor_id").to_pylist(), dtype=object)
    t_ms = data.column("t_ms").to_numpy()
    cores = data.column("cores").to_numpy()
    series: dict[str, JvmCpuSeries] = {}
    for executor in sorted(set(executors.tolist())):
        rows = np.nonzero(executors == executor)[0]
        order = rows[np.argsort(t_ms[rows], kind="stable")]
        series[executor] = JvmCpuSeries(executor, t_ms[order], cores[order])
    return JvmCpu(series)


def load(bundle: str | Path) -> JvmCpu | None:
    """The bundle's JVM CPU series, or None where it has none (recorded before it existed,
    or without JFR)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from perfmodel.profile.bundle import BundleError

    path = Path(bundle) / JVM_CPU
    if not path.is_file():
        return None
    try:
        data = pq.read_table(path)
        missing = [n for n in _COLUMNS if n not in data.column_names]
        if missing:
            raise BundleError(f"{path} is damaged: it lacks the columns {', '.join(missing)}")
        return from_table(data)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise BundleError(f"{path} is damaged or not a Parquet table: {str(exc)[:300]}") from None
