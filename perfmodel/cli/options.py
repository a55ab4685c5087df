"""Options several commands share, declared once (help from the what-if grammar's settings).

Values stay text here: `perfmodel.simulate.whatif` reads them, so ``--cores 2x`` means and
fails the same in ``predict`` as ``cores=2x`` in a sweep or a fleet scenario.
"""

from __future__ import annotations

from typing import Annotated

import typer

from perfmodel.simulate.whatif import BASELINE_SETTINGS, SETTINGS


def _setting(name: str) -> typer.models.OptionInfo:
    return typer.Option(SETTINGS[name].option, help=SETTINGS[name].help, show_default=False)


def _baseline(name: str) -> typer.models.OptionInfo:
    s = BASELINE_SETTINGS[name]
    return typer.Option(s.option, help=s.help, show_default=False)


Cores = Annotated[str | None, _setting("cores")]
Executors = Annotated[str | None, _setting("executors")]
ExecutorCores = Annotated[str | None, _setting("executor-cores")]
Mem = Annotated[str | None, _setting("mem")]
CpuSpeed = Annotated[str | None, _setting("cpu-speed")]
DiskBw = Annotated[str | None, _setting("disk-bw")]
NetBw = Annotated[str | None, _setting("net-bw")]
DynamicAllocation = Annotated[str | None, _setting("dynamic-allocation")]
MinExecutors = Annotated[str | None, _setting("min-executors")]
MaxExecutors = Annotated[str | None, _setting("max-executors")]
InitialExecutors = Annotated[str | None, _setting("initial-executors")]
HostCores = Annotated[int | None, _baseline("host-cores")]
BaselineDiskBw = Annotated[str | None, _baseline("baseline-disk-bw")]
BaselineNetBw = Annotated[str | None, _baseline("baseline-net-bw")]
Conf = Annotated[
    list[str] | None,
    typer.Option(
        "--conf",
        help="A Spark setting to predict, KEY=VALUE (repeatable, as spark-submit's --conf): "
        "spark.sql.shuffle.partitions=64, spark.sql.adaptive.enabled=false "
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
    ),
]
"""None: the library's cap (`perfmodel.analysis.DEFAULT_MAX_DECOMPRESSED`), which the CLI
reads only when a command runs: the reader it lives in is not the CLI's to import."""
