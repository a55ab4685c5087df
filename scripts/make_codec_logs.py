"""Regenerate the real Spark event logs in tests/data/eventlogs/.

Public event logs are almost all plain or zstd; no lz4, snappy or lzf log could be found. So this
script runs one tiny local PySpark job per codec and lets Spark itself write the logs, which is the
only way to be sure the reader handles the formats Spark really produces (lz4-java block streams,
snappy-java streams, compress-lzf chunks, zstd-jni frames closed on every flush).

It also asks Spark to read each log back (``EventLogFileReader.openEventLog``, the code path the
history server uses) and records the line count, byte count, SHA-256 and event-type counts of the
decompressed text in ``tests/data/eventlogs_manifest.json``. The tests compare perfmodel's
decompression against that, so they check byte-for-byte agreement with Spark's own decoders
without needing Spark at test time.

Usage (from the repository root)::

    .venv/bin/python scripts/make_codec_logs.py            # writes tests/data/eventlogs/
    .venv/bin/python scripts/make_codec_logs.py --out DIR --manifest FILE  # elsewhere

Names are made stable (``wordcount.lz4`` instead of ``local-1763822400000.lz4``) so regenerating
does not churn file names; the original names are recorded in the manifest.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from operator import add
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "tests" / "data" / "eventlogs"
# Beside, not inside, the log directory: that directory holds only logs (and SOURCES.md), so
# code that loops over it needs no exceptions.
DEFAULT_MANIFEST = REPO / "tests" / "data" / "eventlogs_manifest.json"
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"

WORDS = (
    "spark shuffle stage task executor driver partition block memory disk network cpu "
    "record row column join aggregate sort scan filter project exchange broadcast"
).split()

# (output name, codec, rolling?). No plain run: a plain log of this job is ~320 KB, over the size
# budget for test data; tests get plain text by decompressing these (checked against Spark).
RUNS: list[tuple[str, str, bool]] = [
    ("wordcount.lz4", "lz4", False),
    ("wordcount.snappy", "snappy", False),
    ("wordcount.lzf", "lzf", False),
    ("wordcount.zstd", "zstd", False),
    ("eventlog_v2_wordcount-rolling", "zstd", True),
]

# Spark 4.3 refuses spark.eventLog.rolling.maxFileSize below 2 MiB (3.x: 10 MiB). The rolling
# writer counts *uncompressed* bytes, so the small job alone (~0.3 MB of JSON) never rolls. Real
# SQL workloads carry the query text in the spark.job.description local property, which Spark
# copies into every JobStart and StageSubmitted event; a long, repetitive description reproduces
# that and pushes the log past 2 MiB while zstd shrinks it to a few kilobytes.
ROLLING_MAX_FILE_SIZE = "2m"
ROLLING_DESCRIPTION_BYTES = 96 * 1024
ROLLING_EXTRA_JOBS = 24


def _job(spark: Any, rolling: bool) -> None:
    """A word count (2 stages) plus a DataFrame groupBy (a SQL execution with a shuffle)."""
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    lines = [
        f"line {i} " + " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(8))
        for i in range(400)
    ]
    counts = (
        sc.parallelize(lines, 4)
        .flatMap(str.split)
        .map(lambda w: (w, 1))
        .reduceByKey(add, 2)
        .collect()
    )
    df = spark.createDataFrame(counts, "word string, n long")
    df.groupBy(F.length("word").alias("len")).agg(F.sum("n").alias("n")).orderBy("len").collect()
    if rolling:
        clause = "SELECT word, count(*) FROM words WHERE length(word) > 3 GROUP BY word UNION ALL "
        text = (clause * (ROLLING_DESCRIPTION_BYTES // len(clause) + 1))[:ROLLING_DESCRIPTION_BYTES]
        for i in range(ROLLING_EXTRA_JOBS):
            sc.setJobDescription(f"/* query {i} */ {text}")
            sc.parallelize(range(100), 2).map(lambda x: x * x).sum()
        sc.setJobDescription(None)


# A copy of the lz4 log taken while the application is still running (before SparkContext.stop):
# a real in-progress log. lz4-java only writes whole blocks (Spark does not sync-flush it), so the
# copy ends at a block boundary with no end mark, usually in the middle of a line.
INPROGRESS_COPY = ("wordcount.lz4", "wordcount-running.lz4.inprogress")


def _run(name: str, codec: str, rolling: bool, log_dir: Path, snapshot: Path | None) -> str:
    """Run the job once with the given event-log settings; return the application id.

    With ``snapshot``, the in-progress log file is copied there before Spark is stopped.
    """
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(f"perfmodel-codec-{name}")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", log_dir.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", codec)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
    )
    # Spark 4 rolls event logs by default; the single-file runs must switch it off explicitly.
    builder = builder.config("spark.eventLog.rolling.enabled", "true" if rolling else "false")
    if rolling:
        builder = builder.config("spark.eventLog.rolling.maxFileSize", ROLLING_MAX_FILE_SIZE)
    spark = builder.getOrCreate()
    try:
        app_id = spark.sparkContext.applicationId
        _job(spark, rolling)
        if snapshot is not None:
            time.sleep(2)  # let the listener bus write the last events of the job
            (running,) = log_dir.glob("*.inprogress")
            shutil.copyfile(running, snapshot)
    finally:
        spark.stop()
    return app_id


def _spark_decompress(path: Path) -> bytes:
    """Decompress one log file with Spark's own reader (history-server code path)."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None
    hconf = jvm.org.apache.hadoop.conf.Configuration()
    fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(hconf)
    hpath = jvm.org.apache.hadoop.fs.Path(path.as_uri())
    stream = jvm.org.apache.spark.deploy.history.EventLogFileReader.openEventLog(hpath, fs)
    try:
        return bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


def _describe(data: bytes) -> dict[str, Any]:
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    events: collections.Counter[str] = collections.Counter()
    bad = 0
    for ln in lines:
        try:
            events[json.loads(ln)["Event"]] += 1
        except ValueError:
            bad += 1  # only expected for the cut-off last line of an in-progress copy
    return {
        "lines": len(lines),
        "bad_lines": bad,
        "decompressed_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "event_counts": dict(sorted(events.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory for the logs")
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST, help="JSON to write")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "JAVA_HOME" not in os.environ and Path(JAVA_HOME).is_dir():
        os.environ["JAVA_HOME"] = JAVA_HOME

    import pyspark

    manifest: dict[str, Any] = {
        "generated": dt.date.today().isoformat(),
        "spark_version": pyspark.__version__,
        "python": sys.version.split()[0],
        "script": "scripts/make_codec_logs.py",
        "logs": {},
    }
    with tempfile.TemporaryDirectory(prefix="perfmodel-codec-logs-") as tmp:
        for name, codec, rolling in RUNS:
            log_dir = Path(tmp) / name
            log_dir.mkdir()
            snapshot = Path(tmp) / INPROGRESS_COPY[1] if name == INPROGRESS_COPY[0] else None
            app_id = _run(name, codec, rolling, log_dir, snapshot)
            if snapshot is not None:
                shutil.copyfile(snapshot, out / snapshot.name)
                manifest["logs"][snapshot.name] = {
                    "codec": codec,
                    "app_id": app_id,
                    "spark_name": f"{app_id}.{codec}.inprogress",
                    "rolling": False,
                    "note": "copied while the application was running",
                    "size": snapshot.stat().st_size,
                }
                try:
                    manifest["logs"][snapshot.name].update(_describe(_spark_decompress(snapshot)))
                except Exception as e:  # Spark's reader may refuse a copy cut mid-block
                    manifest["logs"][snapshot.name]["spark_error"] = str(e).splitlines()[0]
            produced = list(log_dir.iterdir())
            if len(produced) != 1:
                raise RuntimeError(f"{name}: expected one log, Spark wrote {produced}")
            src = produced[0]
            entry: dict[str, Any] = {
                "codec": codec,
                "app_id": app_id,
                "spark_name": src.name,
                "rolling": rolling,
            }
            dest = out / name
            if dest.is_dir():
                shutil.rmtree(dest)
            elif dest.exists():
                dest.unlink()
            if rolling:
                # Rename the directory and every file in it consistently (app id -> stable name).
                new_key = name.removeprefix("eventlog_v2_")
                dest.mkdir()
                parts: dict[str, Any] = {}
                for f in sorted(src.iterdir()):
                    new_name = f.name.replace(app_id, new_key)
                    shutil.copyfile(f, dest / new_name)
                    if f.name.startswith("events_"):
                        parts[new_name] = {
                            "size": f.stat().st_size,
                            **_describe(_spark_decompress(f)),
                        }
                    else:
                        parts[new_name] = {"size": f.stat().st_size}
                if sum(1 for p in parts if p.startswith("events_")) < 2:
                    raise RuntimeError(f"{name}: rolling produced fewer than 2 parts: {parts}")
                entry["files"] = parts
                entry["lines"] = sum(p.get("lines", 0) for p in parts.values())
            else:
                shutil.copyfile(src, dest)
                entry["size"] = src.stat().st_size
                entry.update(_describe(_spark_decompress(src)))
            manifest["logs"][name] = entry
            print(f"{name}: {json.dumps({k: v for k, v in entry.items() if k != 'files'})}")

    args.manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
