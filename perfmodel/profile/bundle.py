"""The profile bundle: one directory with everything recorded about one run (docs/bundle.md).

The bundle is the contract between recording (``perfmodel record`` on this machine,
``perfmodel profile`` for recordings collected on a cluster) and analysis: the raw files are kept
so nothing is lost, and the samples of every source are merged into one Parquet table so
analysis never needs a JDK or py-spy. Every source is optional: a recording that cannot be read
is listed with its error and the rest of the bundle is still written.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from perfmodel import __version__
from perfmodel.atomic import write_atomically
from perfmodel.errors import PerfmodelError
from perfmodel.profile.monitor import ResourceSample, ResourceSummary

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow and the sample readers are imported where they are used: reading a plain event
# log (every `diagnose` of one) finds out here whether it is a bundle, and pyarrow alone
# costs ~0.25 s of start-up.

FORMAT = "perfmodel-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SAMPLES = "samples.parquet"
TASK_SPANS = "task_spans.parquet"
RESOURCES = "resources.parquet"
EVENTLOG_DIR = "eventlog"
JFR_DIR = "raw/jfr"
PYSPY_DIR = "raw/pyspy"
APPS_DIR = "raw/apps"


class BundleError(PerfmodelError):
    """A directory is not a usable bundle, or a bundle cannot be written where asked."""


@dataclass(slots=True)
class RecordingEntry:
    """One raw recording in the bundle and what came of reading it."""

    path: str
    source: str
    process: str = ""
    pid: int | None = None
    executor_id: str | None = None
    samples: int = 0
    task_events: bool = False
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    excluded_threads: list[str] = field(default_factory=list)
    """JFR: threads the plugin took out of sampling because they only ever wait."""


@dataclass(slots=True)
class BundleManifest:
    """``manifest.json``: what was recorded, how, and what came of it."""

    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    created: str = ""
    perfmodel_version: str = __version__
    host: str = ""
    host_cores: Annotated[int, msgspec.Meta(ge=1, le=100_000)] | None = None
    """Logical cores of the host `record` ran on (None for recordings made elsewhere)."""
    platform: str = ""
    python: str = ""
    java: str = ""
    spark_version: str = ""
    py_spy: str = ""
    command: list[str] | None = None
    cwd: str = ""
    exit_code: int | None = None
    started_ms: float | None = None
    ended_ms: float | None = None
    command_ended_ms: float | None = None
    """When the command itself exited, before `record` waited for its JVMs' recordings."""
    sampling: dict[str, Any] = field(default_factory=dict)
    event_logs: list[str] = field(default_factory=list)
    apps: list[dict[str, str]] = field(default_factory=list)
    recordings: list[RecordingEntry] = field(default_factory=list)
    samples: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    """Process-tree monitoring (``resources.parquet``): interval and totals; empty if none."""
    thread_cpu: dict[str, Any] = field(default_factory=dict)
    """`record` only: per-thread CPU of the JVMs and Python workers (``thread_cpu.parquet``,
    `perfmodel.profile.thread_cpu`); empty in bundles recorded without it."""
    recording_cost: dict[str, Any] = field(default_factory=dict)
    """`record` only: the samplers' CPU time while the command ran (`recording_cost`)."""
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, where: str = MANIFEST) -> BundleManifest:
        """The manifest in ``data``, every field's type checked (msgspec, against this class);
        unknown fields are ignored, so newer minor versions still read."""
        try:
            return msgspec.convert(data, cls, strict=True)
        except msgspec.ValidationError as exc:
            raise BundleError(f"{where} is damaged: {_field_error(exc)}") from None


def _field_error(exc: msgspec.ValidationError) -> str:
    """msgspec's "Expected `array`, got `int` - at `$.event_logs`" as "field event_logs: …"."""
    text = str(exc)
    problem, sep, at = text.rpartition(" - at ")
    if not sep:
        return text
    field_path = at.strip("`").removeprefix("$").lstrip(".") or "(the top level)"
    return f"field {field_path}: {problem[:1].lower()}{problem[1:]}".replace("`", "")


def is_bundle(path: str | Path) -> bool:
    """True for a directory with a perfmodel manifest (cheap: reads one small file)."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def read_manifest(bundle: str | Path) -> BundleManifest:
    path = Path(bundle) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BundleError(f"{bundle} is not a perfmodel bundle (no {MANIFEST})") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BundleError(f"{path} is unreadable: {str(exc)[:300]}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(f"{path} is not a perfmodel bundle manifest")
    version = data.get("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise BundleError(f"{path} is damaged: field format_version: expected int")
    if version > FORMAT_VERSION:
        raise BundleError(
            f"{bundle} was written by a newer perfmodel (bundle format "
            f"{version}); upgrade perfmodel to read it"
        )
    return BundleManifest.from_dict(data, str(path))


def event_logs_in(bundle: str | Path) -> list[Path]:
    """Event logs (files, or rolling ``eventlog_v2_*`` directories) stored in a bundle."""
    directory = Path(bundle) / EVENTLOG_DIR
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if not p.name.startswith("."))


def find_event_log(bundle: str | Path, app_id: str | None = None) -> Path:
    """The event log inside a bundle, for ``build_profile``.

    A bundle normally holds one application; when a command ran several, ``app_id`` picks one.
    """
    logs = event_logs_in(bundle)
    if app_id is not None:
        logs = [p for p in logs if app_id in p.name]
    if not logs:
        which = f" for application {app_id}" if app_id else ""
        raise BundleError(
            f"the bundle {bundle} holds no event log{which} (the application did not start, or "
            "its event log was disabled); see warnings in its manifest.json"
        )
    if len(logs) > 1:
        names = ", ".join(p.name for p in logs)
        raise BundleError(
            f"the bundle {bundle} holds several applications' logs ({names}); pick one"
        )
    return logs[0]


def load_samples(bundle: str | Path) -> pa.Table:
    """The bundle's samples table (an empty one when nothing was sampled)."""
    from perfmodel.profile import sampletable

    path = Path(bundle) / SAMPLES
    if not path.is_file():
        return sampletable.empty_table()
    return _read_table(path, sampletable.SAMPLE_SCHEMA)


def load_task_spans(bundle: str | Path) -> pa.Table:
    from perfmodel.profile import jfr

    path = Path(bundle) / TASK_SPANS
    empty = jfr.spans_table([])
    if not path.is_file():
        return empty
    return _read_table(path, empty.schema)


def _read_table(path: Path, schema: pa.Schema) -> pa.Table:
    """A bundle's Parquet table with exactly ``schema``; a damaged file is a `BundleError`.

    Checked where it enters, so no reader further on meets a missing column or a column of
    another type (Parquet's own checksums catch most damage to the data itself).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
        missing = [name for name in schema.names if name not in table.column_names]
        if missing:
            raise BundleError(f"{path} is damaged: it lacks the columns {', '.join(missing)}")
        return table.select(schema.names).cast(schema)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise BundleError(f"{path} is damaged or not a Parquet table: {str(exc)[:300]}") from None


_RESOURCE_COLUMNS = (
    ("t_ms", "float64"),
    ("cpu_cores", "float64"),
    ("rss_bytes", "int64"),
    ("read_bytes", "int64"),
    ("write_bytes", "int64"),
    ("net_sent_bytes", "int64"),
    ("net_recv_bytes", "int64"),
    ("processes", "int32"),
)
_RESOURCE_NAMES = [name for name, _ in _RESOURCE_COLUMNS]


def write_resources(out: Path, summary: ResourceSummary) -> dict[str, Any]:
    """Write the monitor's time series to ``resources.parquet``; returns the manifest entry."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in _RESOURCE_COLUMNS])
    columns = {name: [getattr(s, name) for s in summary.samples] for name in _RESOURCE_NAMES}
    pq.write_table(pa.table(columns, schema=schema), out / RESOURCES, compression="zstd")
    return {
        "file": RESOURCES,
        "interval_s": summary.interval_s,
        "samples": len(summary.samples),
        "cpu_s": round(summary.cpu_s, 3),
        "peak_rss_bytes": summary.peak_rss_bytes,
        "read_bytes": summary.read_bytes,
        "write_bytes": summary.write_bytes,
        "net_sent_bytes": summary.net_sent_bytes,
        "net_recv_bytes": summary.net_recv_bytes,
    }


def load_resources(bundle: str | Path) -> list[ResourceSample]:
    """The bundle's process-tree samples, oldest first (empty when it has none)."""
    path = Path(bundle) / RESOURCES
    if not path.is_file():
        return []
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise BundleError(f"{path} is unreadable: {exc}") from None
    missing = set(_RESOURCE_NAMES) - set(table.column_names)
    if missing:
        raise BundleError(f"{path} lacks the columns {', '.join(sorted(missing))}")
    rows = table.select(_RESOURCE_NAMES).to_pylist()
    return sorted((ResourceSample(**r) for r in rows), key=lambda s: s.t_ms)


def prepare_directory(out: Path) -> None:
    """Create an empty bundle directory; refuse to mix with an existing non-empty one."""
    check_target(out)
    for sub in (EVENTLOG_DIR, JFR_DIR, PYSPY_DIR, APPS_DIR):
        (out / sub).mkdir(parents=True, exist_ok=True)


def check_target(out: Path) -> None:
    """Refuse an ``--out`` that holds something: a bundle is never mixed with other files."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BundleError(f"{out} already exists and is not empty; choose a new --out")


_STAGE_MARK = ".partial-"


def _stage_path(out: Path, pid: int) -> Path:
    return out.parent / f".{out.name}{_STAGE_MARK}{pid}"


@contextmanager
def staged_directory(out: Path) -> Iterator[Path]:
    """A fresh bundle directory beside ``out`` that becomes ``out`` only when the block ends
    without an exception (one rename), so a failure leaves no half-written bundle behind and a
    retry with the same ``--out`` works.

    The stage is a hidden sibling named after this process; stages of processes that no longer
    run (killed with ``kill -9``) are removed first.
    """
    out = Path(out).absolute()
    check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_stages(out)
    stage = _stage_path(out, os.getpid())
    if stage.exists():
        shutil.rmtree(stage)
    prepare_directory(stage)
    try:
        yield stage
        _name_final_place(stage, out)
        check_target(out)
        if out.is_dir():
            out.rmdir()  # an empty directory the user made for the bundle
        os.rename(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _name_final_place(stage: Path, out: Path) -> None:
    """Messages in the manifest that name files by the stage's path name them by the final one."""
    manifest = stage / MANIFEST
    if manifest.is_file():
        text = manifest.read_text(encoding="utf-8")
        if str(stage) in text:
            write_atomically(manifest, text.replace(str(stage), str(out)))


def _remove_dead_stages(out: Path) -> None:
    prefix = f".{out.name}{_STAGE_MARK}"
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        pid_text = entry.name.removeprefix(prefix)
        if entry.name.startswith(prefix) and pid_text.isdigit() and not _pid_alive(int(pid_text)):
            shutil.rmtree(entry, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _copy_into(src: Path, directory: Path) -> Path:
    """Copy a file or directory into ``directory`` unless it already lives there."""
    src = src.resolve()
    if src.parent == directory.resolve():
        return src
    dest = directory / src.name
    n = 1
    while dest.exists():
        dest = directory / f"{src.stem}-{n}{src.suffix}"
        n += 1
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        shutil.copy2(src, dest)
    return dest


def _java_version() -> str:
    from perfmodel.profile import jfr

    try:
        import subprocess

        proc = subprocess.run(
            [jfr.java_executable(), "-version"], capture_output=True, text=True, timeout=30
        )
    except (PerfmodelError, OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stderr.splitlines()[0] if proc.stderr else ""


def _spark_version() -> str:
    try:
        import pyspark

        return str(pyspark.__version__)
    except ImportError:
        return ""


def assemble(
    out: Path,
    *,
    event_logs: Sequence[Path] = (),
    jfr_files: Sequence[Path] = (),
    pyspy_files: Sequence[Path] = (),
    manifest: BundleManifest | None = None,
    host_cpus: int | None = None,
) -> BundleManifest:
    """Copy the inputs into ``out`` (if not already there), read them, write the bundle.

    Sources that fail to read are recorded in the manifest (``recordings[].error`` and
    ``warnings``) instead of aborting, so a bundle always comes out. ``host_cpus``: the
    CPUs of the host the JVMs ran on, for recordings that do not say (`jvm_cpu.table`).
    """
    import pyarrow.parquet as pq

    from perfmodel.profile import jfr, jvm_cpu, pyspy, sampletable

    out.mkdir(parents=True, exist_ok=True)
    for sub in (EVENTLOG_DIR, JFR_DIR, PYSPY_DIR):
        (out / sub).mkdir(parents=True, exist_ok=True)
    m = manifest or BundleManifest()
    m.created = datetime.now(UTC).isoformat(timespec="seconds")
    m.host = m.host or socket.gethostname()
    m.platform = m.platform or platform.platform()
    m.python = m.python or sys.version.split()[0]
    m.java = m.java or _java_version()
    m.spark_version = m.spark_version or _spark_version()
    for log in event_logs:
        _copy_into(Path(log), out / EVENTLOG_DIR)
    m.event_logs = [str(p.relative_to(out)) for p in event_logs_in(out)]

    jfr_paths = [_copy_into(Path(p), out / JFR_DIR) for p in jfr_files]
    pyspy_paths = []
    for p in pyspy_files:
        copied = _copy_into(Path(p), out / PYSPY_DIR)
        sidecar = pyspy.meta_path(Path(p))
        if sidecar.is_file() and not pyspy.meta_path(copied).is_file():
            shutil.copy2(sidecar, pyspy.meta_path(copied))
        pyspy_paths.append(copied)

    tables: list[pa.Table] = []
    jfr_recordings: list[jfr.JfrRecording] = []
    if jfr_paths:
        names = [str(p.relative_to(out.resolve())) for p in jfr_paths]
        try:
            jfr_recordings = jfr.read_recordings(jfr_paths, names=names)
        except jfr.JfrError as exc:
            m.warnings.append(f"JFR recordings kept but not read: {exc}")
            for name in names:
                m.recordings.append(RecordingEntry(path=name, source="jfr", error=str(exc)))
    # Beside executors in their own JVMs (a cluster), the driver runs no tasks: no task events
    # are expected of it.
    own_executors = any(r.process != "jvm driver" for r in jfr_recordings if r.error is None)
    idle_driver = "jvm driver" if own_executors else None
    for rec in jfr_recordings:
        m.recordings.append(
            RecordingEntry(
                path=rec.path,
                source="jfr",
                process=rec.process,
                pid=rec.pid,
                executor_id=rec.executor_id,
                samples=rec.samples.num_rows,
                task_events=rec.has_task_events,
                error=rec.error,
                warnings=list(rec.warnings),
                excluded_threads=list(rec.excluded_threads),
            )
        )
        if rec.error:
            m.warnings.append(rec.error)
        else:
            m.warnings.extend(rec.warnings)
            if not rec.has_task_events and rec.samples.num_rows and rec.process != idle_driver:
                m.warnings.append(
                    f"{rec.path}: no perfmodel plugin events; its samples are attributed to "
                    "tasks by time window per executor, not exactly"
                )
            tables.append(rec.samples)
    pq.write_table(jfr.spans_table(jfr_recordings), out / TASK_SPANS, compression="zstd")
    cpu = jvm_cpu.table(jfr_recordings, fallback_cpus=host_cpus)
    if cpu.num_rows:
        pq.write_table(cpu, out / jvm_cpu.JVM_CPU, compression="zstd")
    for path in jvm_cpu.unscaled(jfr_recordings, fallback_cpus=host_cpus):
        m.warnings.append(
            f"{path}: no host CPU count in the recording (jdk.CPUInformation), so the JVM's CPU "
            "is left out of jvm_cpu.parquet (a change of executor count then scales as slots)"
        )

    for path in pyspy_paths:
        name = str(path.relative_to(out.resolve()))
        rec = pyspy.read_pyspy(path, name=name)
        m.recordings.append(
            RecordingEntry(
                path=name,
                source="pyspy",
                process=rec.meta.role if rec.meta else "python",
                pid=rec.meta.pid if rec.meta else None,
                executor_id=rec.meta.executor_id if rec.meta else None,
                samples=rec.samples.num_rows,
                error=rec.error,
                warnings=list(rec.warnings),
            )
        )
        if rec.error:
            m.warnings.append(rec.error)
        else:
            m.warnings.extend(rec.warnings)
            tables.append(rec.samples)

    samples = sampletable.concat(tables)
    pq.write_table(samples, out / SAMPLES, compression="zstd")
    m.samples = _summary(samples)
    _write_manifest(out, m)
    return m


def _summary(samples: pa.Table) -> dict[str, Any]:
    import pyarrow.compute as pc

    def counts(column: str) -> dict[str, int]:
        if samples.num_rows == 0:
            return {}
        vc = pc.value_counts(samples.column(column).combine_chunks())
        return {str(v["values"]): int(v["counts"]) for v in vc.to_pylist()}

    with_task = int(pc.sum(pc.is_valid(samples.column("task_id"))).as_py() or 0)
    return {
        "path": SAMPLES,
        "rows": samples.num_rows,
        "by_source": counts("source"),
        "by_kind": counts("kind"),
        "with_task_id": with_task,
    }


def _write_manifest(out: Path, manifest: BundleManifest) -> None:
    write_atomically(out / MANIFEST, manifest.to_json())


def now_ms() -> float:
    return time.time() * 1000.0
