"""The Spark engine: the same per-log analysis as a PySpark job, for a cluster.

The driver lists the logs (local paths with the OS, Hadoop URIs such as ``hdfs://`` and
``s3a://`` with Hadoop's FileSystem API through the JVM gateway, which only the driver
has), skips those the manifest says are done, and parallelises the rest. Each is analysed
inside a Python worker by `perfmodel.fleet.analyse.analyse_log`, the function the local
engine runs, and the rows are written as Parquet by Spark to a staging location, then read
back by the driver and merged into the fleet's tables.

How a worker gets a log's bytes (``transfer``):

* ``direct``: the worker opens the path itself: local paths, which on a cluster must be on
  a file system every node mounts at the same place (NFS, a shared volume);
* ``binary``: Spark reads the files (``SparkContext.binaryFiles``: any Hadoop-compatible
  URI, with the cluster's credentials and configuration), the files of one log (a rolling
  directory's parts) are grouped by log, and the worker writes them to a local temporary
  directory under their own names before analysing it there. A log travels whole through
  the worker's memory, so this suits event logs up to a few GiB;
* ``auto`` (default): ``binary`` for Hadoop URIs, ``direct`` for local paths.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from perfmodel.errors import PerfmodelError
from perfmodel.fleet.analyse import Rows, analyse_log
from perfmodel.fleet.discover import ROLLING_PREFIX, LogRef, is_remote, local_path
from perfmodel.fleet.schema import RESULT_TABLES, Table, spark_schema
from perfmodel.fleet.store import conform
from perfmodel.simulate.whatif import Change

TRANSFERS = ("auto", "direct", "binary")


class SparkEngineError(PerfmodelError):
    """The Spark engine cannot run as asked (a missing option, an unlistable URI)."""


def spark_session(master: str | None, conf: Sequence[tuple[str, str]] = ()) -> Any:
    """The session of `spark-submit` if there is one, else a new one on ``master``."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("perfmodel fleet")
    if master:
        builder = builder.master(master)
    if master is None or master.startswith("local"):
        # Local workers run this interpreter, which has perfmodel importable.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in conf:
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _norm(uri: str) -> str:
    """``file:/x`` and ``file:///x`` → ``/x``: how a local path and Spark's name for it meet."""
    if uri.startswith("file:"):
        return "/" + local_path(uri).lstrip("/")
    return uri


def list_remote(spark: Any, uris: Sequence[str], since_ns: int | None = None) -> list[LogRef]:
    """The logs a Hadoop URI (or glob) names: a log, or a directory of logs, one level."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    refs: list[LogRef] = []
    for uri in uris:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path)
        if not statuses:
            raise SparkEngineError(f"{uri}: no such file, directory or glob match")
        for status in statuses:
            if status.isDirectory() and not _is_log_dir_status(fs, status):
                children = [
                    c for c in fs.listStatus(status.getPath()) if not _hidden(c.getPath().getName())
                ]
                for child in children:
                    if not child.isDirectory() or _is_log_dir_status(fs, child):
                        refs.append(_ref_of(fs, child))
            else:
                refs.append(_ref_of(fs, status))
    if since_ns is not None:
        refs = [r for r in refs if r.mtime_ns >= since_ns]
    return sorted(set(refs))


def _hidden(name: str) -> bool:
    return name.startswith((".", "_")) or name.endswith(".crc")


def _is_log_dir_status(fs: Any, status: Any) -> bool:
    name = status.getPath().getName()
    if name.startswith(ROLLING_PREFIX):
        return True
    return any(
        c.getPath().getName().startswith("EVENT_LOG_") for c in fs.listStatus(status.getPath())
    )


def _ref_of(fs: Any, status: Any) -> LogRef:
    path = status.getPath().toString()
    if not status.isDirectory():
        return LogRef(path, int(status.getLen()), int(status.getModificationTime()) * 1_000_000)
    size, mtime = 0, int(status.getModificationTime())
    for child in fs.listStatus(status.getPath()):
        if not child.isDirectory() and not _hidden(child.getPath().getName()):
            size += int(child.getLen())
            mtime = max(mtime, int(child.getModificationTime()))
    return LogRef(path, size, mtime * 1_000_000)


def _tagged(rows: Rows) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for name, values in rows.items():
        names = RESULT_TABLES[name].names
        for row in values:
            yield name, tuple(row.get(n) for n in names)


def _analyse_direct(
    refs: Iterable[LogRef], scenarios: Sequence[Change], cap: int | None
) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for ref in refs:
        yield from _tagged(analyse_log(ref, scenarios, memory_cap_bytes=cap))


def _analyse_binary(
    groups: Iterable[tuple[str, Iterable[tuple[str, bytes]]]],
    refs: dict[str, LogRef],
    scenarios: Sequence[Change],
    cap: int | None,
) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """Write each log's files to a temporary directory under their names; analyse there."""
    for key, files in groups:
        ref = refs[key]
        name = key.rstrip("/").rsplit("/", 1)[-1]
        with tempfile.TemporaryDirectory(prefix="perfmodel-fleet-") as tmp:
            files = list(files)
            single = len(files) == 1 and files[0][0] == name
            target = Path(tmp) / name
            if not single:
                target.mkdir()
            for file_name, data in files:
                (target if single else target / file_name).write_bytes(data)
            del files
            rows = analyse_log(ref, scenarios, memory_cap_bytes=cap, read_path=str(target))
            for err in rows["errors"]:
                err["reason"] = err["reason"].replace(str(target), ref.path)
        yield from _tagged(rows)


def _group_key(refs: dict[str, LogRef]) -> Any:
    def key(item: tuple[str, bytes]) -> tuple[str, tuple[str, bytes]]:
        uri = _norm(item[0])
        parent, _, name = uri.rstrip("/").rpartition("/")
        owner = uri if uri in refs else parent
        return owner, (name, item[1])

    return key


def analyse_spark(
    spark: Any,
    refs: Sequence[LogRef],
    scenarios: Sequence[Change],
    *,
    memory_cap_bytes: int | None,
    staging: str,
    transfer: str = "auto",
) -> dict[str, Table]:
    """Every log's rows, analysed on the cluster and written by Spark (read back here)."""
    if transfer not in TRANSFERS:
        raise SparkEngineError(f"--spark-transfer must be one of {', '.join(TRANSFERS)}")
    sc = spark.sparkContext
    binary = [r for r in refs if transfer == "binary" or is_remote(r.path)]
    through_spark = set(binary)
    direct = [r for r in refs if r not in through_spark]
    parts: list[Any] = []
    cap = memory_cap_bytes
    if direct:
        slices = max(1, min(len(direct), sc.defaultParallelism * 4))
        rdd = sc.parallelize(list(direct), slices)
        parts.append(rdd.mapPartitions(lambda it: _analyse_direct(it, scenarios, cap)))
    if binary:
        by_key = {_norm(r.path): r for r in binary}
        files = sc.binaryFiles(",".join(r.path for r in binary))
        slices = max(1, min(len(binary), sc.defaultParallelism * 4))
        grouped = files.map(_group_key(by_key)).groupByKey(slices)
        parts.append(grouped.mapPartitions(lambda it: _analyse_binary(it, by_key, scenarios, cap)))
    if not parts:
        return {name: schema.empty_table() for name, schema in RESULT_TABLES.items()}
    tagged = parts[0] if len(parts) == 1 else sc.union(parts)
    tagged = tagged.persist()
    tables: dict[str, Table] = {}
    try:
        for name, schema in RESULT_TABLES.items():
            values = tagged.filter(lambda kv, n=name: kv[0] == n).map(lambda kv: kv[1])
            frame = spark.createDataFrame(values, spark_schema(schema))
            where = f"{staging.rstrip('/')}/{name}"
            frame.write.mode("overwrite").parquet(where)
            tables[name] = conform(spark.read.parquet(where).toArrow(), schema)
    finally:
        tagged.unpersist()
        remove_staging(spark, staging)
    return tables


def remove_staging(spark: Any, staging: str) -> None:
    """Delete the staging location (any Hadoop URI)."""
    if not is_remote(staging):
        shutil.rmtree(local_path(staging), ignore_errors=True)
        return
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(staging)
    path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)


def default_staging(spark: Any, out: Path) -> str:
    """Where Spark writes its Parquet when ``--spark-staging`` is not given: beside the
    tables when every executor shares the driver's file system (a local master)."""
    master = spark.sparkContext.master
    if master.startswith("local"):
        return f"file://{out}/_spark-staging"
    raise SparkEngineError(
        f"on a cluster (master {master}) the Spark engine needs --spark-staging: a URI every "
        "executor can write and the driver can read, e.g. hdfs:///tmp/perfmodel-fleet"
    )
