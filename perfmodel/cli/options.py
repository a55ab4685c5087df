"""Options several commands share, declared once (help from the what-if grammar's settings),
and the ranges every numeric option is checked against.

Values of the what-if settings stay text here: `perfmodel.simulate.whatif` reads them, so
``--cores 2x`` means and fails the same in ``predict`` as ``cores=2x`` in a sweep or a fleet
scenario.

Every option or argument typed as a number carries a finite ``min`` and ``max``
(``tests/unit/test_hostile_options.py`` walks the whole command tree to hold every one to
it): a value outside them, ``nan``, ``inf`` or a 21-digit integer is refused while the command
line is parsed, with a message naming the option, instead of reaching the library as a value
no real input has (a decompression cap of 0, a speed of infinity, a run id SQLite cannot
hold). The limits are generous: each is far beyond any real use, and only there to keep
arithmetic finite.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfmodel.simulate.whatif import BASELINE_SETTINGS, SETTINGS, setting_key

EXIT_INTERRUPTED = 130
"""Exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""

COUNT_MAX = 1_000_000
"""Most of anything counted (repetitions, rows, functions, epochs)."""
WORKERS_MAX = 4096
"""Most processes or threads a command starts at once (far beyond any one machine)."""
INTERVAL_MS_MAX = 3_600_000
"""Longest sampling interval: an hour."""
ID_MAX = 2**63 - 1
"""Largest id a run store (SQLite INTEGER) or a Spark stage id holds."""
SEED_MAX = 2**32 - 1
"""Largest random seed (numpy's)."""
DECOMPRESSED_MAX = 1 << 50
"""Largest decompression cap: 1 PiB."""
HOST_CORES_MAX = 65_536
"""Most cores a host is taken to have."""
if TYPE_CHECKING:
    from perfmodel.analysis import SourceOptions


def _setting(name: str) -> typer.models.OptionInfo:
    return typer.Option(SETTINGS[name].option, help=SETTINGS[name].help, show_default=False)


def _alias(alias: str) -> typer.models.OptionInfo:
    """A setting's other name (Dask's ``--workers``) as an option of its own, so a message
    about its value names the option the user wrote."""
    s = SETTINGS[setting_key(alias)]
    return typer.Option("--" + alias, help=f"Dask's name for {s.option}.", show_default=False)


def _baseline(
    name: str, *, low: int | None = None, high: int | None = None
) -> typer.models.OptionInfo:
    s = BASELINE_SETTINGS[name]
    return typer.Option(s.option, help=s.help, show_default=False, min=low, max=high)


Cores = Annotated[str | None, _setting("cores")]
Executors = Annotated[str | None, _setting("executors")]
ExecutorCores = Annotated[str | None, _setting("executor-cores")]
Workers = Annotated[str | None, _alias("workers")]
Threads = Annotated[str | None, _alias("threads")]
Mem = Annotated[str | None, _setting("mem")]
CpuSpeed = Annotated[str | None, _setting("cpu-speed")]
DiskBw = Annotated[str | None, _setting("disk-bw")]
NetBw = Annotated[str | None, _setting("net-bw")]
DynamicAllocation = Annotated[str | None, _setting("dynamic-allocation")]
MinExecutors = Annotated[str | None, _setting("min-executors")]
MaxExecutors = Annotated[str | None, _setting("max-executors")]
InitialExecutors = Annotated[str | None, _setting("initial-executors")]
HostCores = Annotated[int | None, _baseline("host-cores", low=1, high=HOST_CORES_MAX)]
BaselineDiskBw = Annotated[str | None, _baseline("baseline-disk-bw")]
BaselineNetBw = Annotated[str | None, _baseline("baseline-net-bw")]
Conf = Annotated[
    list[str] | None,
    typer.Option(
        "--conf",
        help="A Spark setting to predict, KEY=VALUE (repeatable, as spark-submit's --conf): "
        "spark.sql.shuffle.partitions=64, spark.sql.adaptive.enabled=false; or a code edit, "
        "stage.ID.partitions=N: stage ID run with N tasks, as repartition(N) would "
        "(keys: docs/settings.md).",
        show_default=False,
    ),
]
Attempt = Annotated[
    str | None, typer.Option(help="Application attempt, when the log holds several.")
]
CodeVectors = Annotated[
    bool,
    typer.Option(
        "--code-vectors/--no-code-vectors",
        help="With a bundle: split each stage's unattributed task time by the resource vector "
        "the code models infer from its stack samples (else by bytes moved).",
    ),
]
MaxDecompressed = Annotated[
    int | None,
    typer.Option(
        "--max-decompressed-bytes",
        help="Refuse logs that decompress to more than this many bytes (guards against "
        "bombs; default 20 GiB).",
        show_default=False,
        min=1,
        max=DECOMPRESSED_MAX,
    ),
]
"""None: the library's cap (`perfmodel.analysis.DEFAULT_MAX_DECOMPRESSED`), which the CLI
reads only when a command runs: the reader it lives in is not the CLI's to import."""
RunId = Annotated[
    int, typer.Argument(help="Run id (see `perfmodel runs list`).", min=1, max=ID_MAX)
]
RunIds = Annotated[list[int], typer.Argument(help="Two or more run ids.", min=1, max=ID_MAX)]


def output_path(value: str | Path) -> Path:
    """A path the user named for output: an empty one is refused while parsing (``Path("")``
    is ``.``, so ``-o ""`` would otherwise mean the current folder)."""
    if isinstance(value, str) and not value.strip():
        raise typer.BadParameter("is empty; name a file or folder to write")
    return Path(value)


# Where remote logs come from (docs/sources.md). A log argument may be a local path, an
# s3:// (s3a://), gs://, abfs[s]:// or hdfs:// URI, or a History Server application address;
# these say how to reach them. Credentials are never an option: each platform's standard
# chain supplies them.

EndpointUrl = Annotated[
    str | None,
    typer.Option(
        "--endpoint-url",
        help="S3 endpoint for s3:// logs (MinIO, Ceph…); default $AWS_ENDPOINT_URL_S3 or "
        "$AWS_ENDPOINT_URL, else AWS.",
        show_default=False,
    ),
]
CaBundle = Annotated[
    str | None,
    typer.Option(
        "--ca-bundle",
        help="PEM file of CA certificates to verify HTTPS History Servers and S3 endpoints with.",
        show_default=False,
    ),
]


def finite(value: float | None) -> float | None:
    """A float option's value, refused when not a number or infinite: the float ranges of
    the click typer 0.28 carries let ``nan`` through (it compares false with both bounds)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


TimeoutS = Annotated[
    float | None,
    typer.Option(
        "--timeout-s",
        help="Seconds a remote request may take before it is retried (default 60); "
        "connecting may take at most 10 s, or this if less, and is not retried.",
        show_default=False,
        min=0.001,
        max=86_400.0,
        callback=finite,
    ),
]
"""None: the library's (`perfmodel.profile.sources.stores.DEFAULT_REQUEST_TIMEOUT_S`)."""
HistoryServer = Annotated[
    str | None,
    typer.Option(
        "--history-server",
        help="Spark History Server URL (http://shs:18080); the log argument is then an "
        "application id on it.",
        show_default=False,
    ),
]


def source_options(
    endpoint_url: str | None, ca_bundle: str | None, timeout_s: float | None
) -> SourceOptions:
    """The options a command was given, for the library (imported when a command runs)."""
    from perfmodel.analysis import SourceOptions
    from perfmodel.simulate.config import ConfigError

    if timeout_s is not None and not timeout_s > 0:
        raise ConfigError(f"--timeout-s must be positive (got {timeout_s:g})")
    given = SourceOptions(endpoint_url=endpoint_url, ca_bundle=ca_bundle)
    if timeout_s is not None:
        given = replace(given, request_timeout_s=timeout_s)
    return given.resolved()
