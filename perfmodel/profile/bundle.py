"""The profile bundle: one directory with everything recorded about one run (docs/bundle.md).

The bundle is the contract between recording (``perfmodel record`` on this machine,
``perfmodel profile`` for recordings collected on a cluster) and analysis: the raw files are kept
so nothing is lost, and the samples of every source are merged into one Parquet table so
analysis never needs a JDK or py-spy. Every source is optional: a recording that cannot be read
is listed with its error and the rest of the bundle is still written.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from perfmodel._version import __version__
from perfmodel.errors import PerfmodelError

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
DASK_DIR = "raw/dask"
"""A Dask run's task stream: JSON lines written by `perfmodel.dask.plugin` (docs/dask.md)."""


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
    executor_hosts: dict[str, Any] = field(default_factory=dict)
    """`record` with daemons (a namespace cluster's workers) only: the executors that ran on
    this machine, as children of the daemons it followed: ``machine_cores`` (this machine's
    usable cores, which they shared) and ``executors`` (executor id → ``cpu_limit_cores``,
    its cgroup's CPU quota in cores, null for none). Empty elsewhere."""
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
    """True for a directory with a perfmodel manifest (cheap: reads one small file), or
    with a manifest beside a bundle's own parts (`has_bundle_parts`): a damaged manifest is
    then read as a bundle's, so its reader says what is wrong with it, not that the folder
    holds no event log."""
    manifest = Path(path) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return has_bundle_parts(path)
    return (isinstance(data, dict) and data.get("format") == FORMAT) or has_bundle_parts(path)


def has_bundle_parts(path: str | Path) -> bool:
    """True where a directory holds what only a bundle writes (its sample, task-span and
    resource tables, its ``raw/`` recordings)."""
    d = Path(path)
    return any((d / part).exists() for part in (SAMPLES, TASK_SPANS, RESOURCES, "raw"))


def missing_dask_files(manifest: BundleManifest, found: int) -> list[str]:
    """A warning when fewer task-stream files are in the bundle than its recording wrote
    (``sampling.dask.files``): a lost worker file silently turns its tasks' CPU into time
    of unknown nature, so it is said (nothing when all are there, or the count is unknown)."""
    dask = manifest.sampling.get("dask")
    written = dask.get("files") if isinstance(dask, dict) else None
    if not isinstance(written, int) or isinstance(written, bool) or found >= written:
        return []
    return [
        f"{written - found} of the {written} task-stream file(s) the recording wrote are "
        f"missing from {DASK_DIR}: the tasks of a missing worker file have no CPU time or "
        "lock probes, so their time is unattributed"
    ]


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


RESOURCE_COLUMNS = (
    ("t_ms", "float64"),
    ("cpu_cores", "float64"),
    ("rss_bytes", "int64"),
    ("read_bytes", "int64"),
    ("write_bytes", "int64"),
    ("net_sent_bytes", "int64"),
    ("net_recv_bytes", "int64"),
    ("processes", "int32"),
)
RESOURCE_NAMES = [name for name, _ in RESOURCE_COLUMNS]


@dataclass(slots=True)
class ResourceSample:
    """One sample of the recorded process tree (a row of ``resources.parquet``); byte
    counters are cumulative since the monitor started."""

    t_ms: float
    """Wall clock (ms since the epoch), the time base of Spark's event log."""
    cpu_cores: float
    """Cores the tree kept busy over the interval that ends here (CPU seconds per second)."""
    rss_bytes: int
    read_bytes: int
    write_bytes: int
    net_sent_bytes: int
    net_recv_bytes: int
    processes: int


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
    missing = set(RESOURCE_NAMES) - set(table.column_names)
    if missing:
        raise BundleError(f"{path} lacks the columns {', '.join(sorted(missing))}")
    rows = table.select(RESOURCE_NAMES).to_pylist()
    return sorted((ResourceSample(**r) for r in rows), key=lambda s: s.t_ms)
