"""Writing a profile bundle: the staged directory that becomes ``--out`` in one rename, and
`assemble`, which reads every recording into the bundle's tables (docs/bundle.md).

Reading a bundle is `perfmodel.profile.bundle`'s job; this half is only needed by
``perfmodel record`` and ``perfmodel profile``.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfmodel.atomic import describe_kind, write_atomically
from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import (
    APPS_DIR,
    EVENTLOG_DIR,
    JFR_DIR,
    MANIFEST,
    PYSPY_DIR,
    RESOURCE_COLUMNS,
    RESOURCE_NAMES,
    RESOURCES,
    SAMPLES,
    TASK_SPANS,
    BundleError,
    BundleManifest,
    RecordingEntry,
    event_logs_in,
)
from perfmodel.profile.record.monitor import ResourceSummary

if TYPE_CHECKING:
    import pyarrow as pa


def write_resources(out: Path, summary: ResourceSummary) -> dict[str, Any]:
    """Write the monitor's time series to ``resources.parquet``; returns the manifest entry."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in RESOURCE_COLUMNS])
    columns = {name: [getattr(s, name) for s in summary.samples] for name in RESOURCE_NAMES}
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


def prepare_directory(out: Path) -> None:
    """Create an empty bundle directory; refuse to mix with an existing non-empty one."""
    check_target(out)
    for sub in (EVENTLOG_DIR, JFR_DIR, PYSPY_DIR, APPS_DIR):
        (out / sub).mkdir(parents=True, exist_ok=True)


def check_target(out: Path) -> None:
    """Refuse an ``--out`` that holds something: a bundle is never mixed with other files,
    and the final rename replaces only an empty folder of the user's, never a file, a
    device, a FIFO or a symbolic link (the link would be replaced, not what it names)."""
    try:
        mode = os.lstat(out).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise BundleError(f"{out} is a symbolic link; choose a new --out (a folder to create)")
    if not stat.S_ISDIR(mode):
        raise BundleError(f"{out} is {describe_kind(mode)}; choose a new --out")
    if any(out.iterdir()):
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


MAX_RECORDING_BYTES = {"event log": 1 << 40, "JFR": 64 << 30, "py-spy": 16 << 30}
"""Largest input of each kind a bundle takes: far beyond any real one (a day of py-spy
samples of a busy worker is a few GiB; JFR files roll at 250 MiB by default); a larger
"recording" is not one, and copying it would fill the disk."""


def check_input(path: Path, kind: str) -> None:
    """Refuse, before anything is copied, an input that is no recording of its kind: a
    device (``/dev/zero`` copies forever), a FIFO or socket (it may never end), or a file far
    larger than any real recording (`MAX_RECORDING_BYTES`). Directories (a rolling event
    log, a JFR folder) are checked entry by entry."""
    try:
        st = path.stat()
    except OSError as exc:
        raise BundleError(f"{kind} input {path}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        for entry in sorted(path.iterdir()):
            check_input(entry, kind)
        return
    if not stat.S_ISREG(st.st_mode):
        what = describe_kind(st.st_mode)
        raise BundleError(
            f"{kind} input {path} is {what}, not a recording; give a file written by {kind}"
        )
    limit = MAX_RECORDING_BYTES[kind]
    if st.st_size > limit:
        raise BundleError(
            f"{kind} input {path} is {st.st_size / (1 << 30):,.1f} GiB, far larger than any "
            f"real recording of its kind (at most {limit >> 30:,} GiB is taken)"
        )


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

    for paths, kind in ((event_logs, "event log"), (jfr_files, "JFR"), (pyspy_files, "py-spy")):
        for given in paths:
            check_input(Path(given), kind)
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

    for pyspy_path in pyspy_paths:
        name = str(pyspy_path.relative_to(out.resolve()))
        py_rec = pyspy.read_pyspy(pyspy_path, name=name)
        m.recordings.append(
            RecordingEntry(
                path=name,
                source="pyspy",
                process=py_rec.meta.role if py_rec.meta else "python",
                pid=py_rec.meta.pid if py_rec.meta else None,
                executor_id=py_rec.meta.executor_id if py_rec.meta else None,
                samples=py_rec.samples.num_rows,
                error=py_rec.error,
                warnings=list(py_rec.warnings),
            )
        )
        if py_rec.error:
            m.warnings.append(py_rec.error)
        else:
            m.warnings.extend(py_rec.warnings)
            tables.append(py_rec.samples)

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


PLUGIN_VIEW_SKIPPED = ("jfr", "jfr-repository", "plugin-samples")
"""``raw/`` entries a plugin-sample view of a bundle leaves behind (its JVM samples are the
plugin's, copied in afresh)."""


def with_plugin_samples(bundle: Path, out: Path) -> BundleManifest:
    """The run of a ``--jvm-sampler both`` bundle as the plugin's sampler saw it: a copy of
    ``bundle`` at ``out`` (replaced) whose samples, task spans and JVM CPU are read from the
    plugin's sample files instead of the flight recordings; the event log, per-thread CPU and
    Python samples are the same. Why: the samplers compared on one run, without the
    run-to-run noise of two."""
    from perfmodel.profile import jfr, jvm_cpu, pyspy
    from perfmodel.profile.bundle import read_manifest

    manifest = read_manifest(bundle)
    kept = manifest.sampling.get("plugin_samples") or {}
    source = bundle / str(kept.get("dir", "")) if kept.get("dir") else None
    files = sorted(source.glob(f"*{jfr.PLUGIN_SAMPLES_SUFFIX}")) if source else []
    if not files:
        raise BundleError(
            f"{bundle}: no samples of the plugin's sampler were kept (record with "
            "--jvm-sampler both to keep them beside JFR's)"
        )
    if out.exists():
        shutil.rmtree(out)

    def skipped(directory: str, names: list[str]) -> list[str]:
        if Path(directory).resolve() == (bundle / "raw").resolve():
            return [n for n in names if n in PLUGIN_VIEW_SKIPPED]
        return []

    shutil.copytree(bundle, out, ignore=skipped)
    for table in (SAMPLES, TASK_SPANS, jvm_cpu.JVM_CPU):
        (out / table).unlink(missing_ok=True)
    # What reading the flight recordings said goes with them: warnings naming one of them, or
    # JFR (`record`'s "no JFR recording was written" among them).
    jfr_paths = [r.path for r in manifest.recordings if r.source == "jfr"]
    manifest.warnings = [
        w for w in manifest.warnings if "JFR" not in w and not any(p in w for p in jfr_paths)
    ]
    manifest.recordings = []
    manifest.sampling = {
        **manifest.sampling,
        "jvm_sampler": "plugin",
        "jvm_interval_ms": kept.get("interval_ms"),
        "view_of": str(bundle),
    }
    manifest.sampling.pop("plugin_samples", None)
    return assemble(
        out,
        jfr_files=files,
        pyspy_files=pyspy.recordings_in(out / PYSPY_DIR),
        manifest=manifest,
        host_cpus=manifest.host_cores or os.cpu_count(),
    )
