"""Regenerate the real Spark event logs in tests/data/alerts/ (the alerts' tests).

Each log is one small local PySpark application written by Spark itself (zstd, not rolling),
made to trip some alerts (docs/alerts.md) and not others:

* ``tasks.zstd`` — local[4], AQE off, 2 shuffle partitions for the session: an aggregation
  whose 2 reduce tasks hash every row (too few tasks, set by spark.sql.shuffle.partitions), a
  heavy stage after the code's ``repartition(1)`` (too few tasks, set by the code), and a
  broadcast join of 1,000 rows (a test scales its size past the large-broadcast threshold).
* ``tiny.zstd`` — local[4], AQE off, 600 shuffle partitions for the session: an aggregation of
  little data into 600 tiny tasks.
* ``files.zstd`` — local[2]: 300 small Parquet files written by an aggregation with 300
  shuffle partitions (small files written, set by spark.sql.shuffle.partitions), then read
  back (small files read).
* ``joins.zstd`` — local[2], broadcasts, AQE's skew join and coalescing off for the
  session, 16 shuffle partitions: a sort-merge join of 2M rows with 1,000 (its small side
  could broadcast), a join whose key is hot in half the rows (skew), and a cross join of
  12,000 × 12,000 rows with a non-equal condition (nested loop).
* ``memory.zstd`` — local[2] with a 512 MiB heap, AQE off, 2 shuffle partitions: a sort of
  long strings (spill, set by spark.sql.shuffle.partitions).
* ``files_read.zstd`` — local[2]: a read of the 300 small files ``files``' application wrote
  (small files read), hashing each row.
* ``two_shuffles.zstd`` — local[2], AQE off, 600 shuffle partitions: a ``dropDuplicates``
  and then a count of four groups, two shuffles under the one setting, each stage of tiny
  tasks (their alerts get one value of it).

Usage (from the repository root)::

    .venv/bin/python tests/data/alerts/make_logs.py [--out DIR] [--only NAME ...]

The Spark version and what each log holds are in ``tests/data/alerts/MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _session(log_dir: Path, master: str, conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName("alerts-test")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", str(log_dir))
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    conf = {"spark.driver.memory": "1g"} | conf
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _frame(spark: Any, rows: int, keys: int, hot: float = 0.0, parts: int = 4) -> Any:
    """Rows with a key column (``hot``: share of rows on key 0) and a string payload."""
    from pyspark.sql import functions as F

    key = F.col("id") % keys
    if hot > 0:
        key = F.when(F.rand(7) < hot, F.lit(0)).otherwise(key)
    return (
        spark.range(0, rows, 1, parts)
        .withColumn("k", key)
        .withColumn("v", F.rand(11))
        .withColumn("s", F.sha2(F.col("id").cast("string"), 256))
    )


def tasks(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark, 1_500_000, 300_000, parts=8)
    heavy = F.sha2(F.sha2(F.concat(F.col("s"), F.col("s")), 512), 512)
    df.groupBy("k", "s").agg(F.sum("v").alias("t")).select(F.sum(F.crc32(heavy))).collect()
    df.repartition(1).select(F.sum(F.crc32(heavy))).collect()
    small = spark.range(0, 1_000).withColumnRenamed("id", "k2")
    df.join(small, df.k == small.k2).select(F.sum(F.crc32(heavy))).collect()
    return [
        "groupBy on 2 shuffle partitions, then hashing",
        "repartition(1) then hashing",
        "broadcast join then hashing",
    ]


def tiny(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    _frame(spark, 60_000, 5_000).groupBy("k").agg(F.sum("v")).collect()
    return ["groupBy into 600 partitions"]


def files(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark, 300_000, 30_000)
    df.groupBy("k").agg(F.sum("v").alias("v"), F.max("s").alias("s")).write.mode(
        "overwrite"
    ).parquet(str(data / "small"))
    spark.read.parquet(str(data / "small")).selectExpr("sum(v)", "max(s)").collect()
    return ["write 300 files (300 shuffle partitions)", "read the 300 files"]


def joins(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    big = _frame(spark, 2_000_000, 1_000)
    small = spark.range(0, 1_000).withColumnRenamed("id", "k2").withColumn("w", F.col("k2") * 2)
    big.join(small, big.k == small.k2).selectExpr(
        "count(*)", "max(sha2(concat(s, s, cast(w as string)), 512))"
    ).collect()
    hot = _frame(spark, 1_500_000, 50_000, hot=0.5)
    other = _frame(spark, 200_000, 50_000).select("k", F.col("s").alias("t"))
    hot.join(other, "k").selectExpr("count(*)", "max(sha2(concat(s, t), 512))").collect()
    a = spark.range(0, 12_000).withColumnRenamed("id", "a")
    b = spark.range(0, 12_000).withColumnRenamed("id", "b")
    a.join(b, (a.a * 7 + b.b) % 1_000_003 < 3).count()
    return ["sort-merge join with a small side", "join on a hot key", "cross join 12k x 12k"]


def memory(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark, 1_500_000, 1_000_000, parts=2)
    long = df.withColumn("s", F.concat(F.col("s"), F.col("s"), F.col("s"), F.col("s")))
    long.sort("s").write.format("noop").mode("overwrite").save()
    return ["sort of long strings into 2 partitions"]


def files_read(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = spark.read.parquet(str(data / "small"))
    df.select(F.max(F.sha2(F.concat(F.col("s"), F.col("s")), 512))).collect()
    return ["read the 300 files written by files.zstd's application"]


def two_shuffles(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark, 600_000, 200_000)
    df.dropDuplicates(["k", "s"]).groupBy((F.col("k") % 4).alias("g")).count().collect()
    return ["dropDuplicates, then a count of 4 groups: both shuffles on 600 partitions"]


APPS: dict[str, tuple[Callable[[Any, Path], list[str]], str, dict[str, str]]] = {
    "tasks": (
        tasks,
        "local[4]",
        {"spark.sql.shuffle.partitions": "2", "spark.sql.adaptive.enabled": "false"},
    ),
    "tiny": (
        tiny,
        "local[4]",
        {"spark.sql.shuffle.partitions": "600", "spark.sql.adaptive.enabled": "false"},
    ),
    "files": (
        files,
        "local[2]",
        {"spark.sql.shuffle.partitions": "300", "spark.sql.adaptive.enabled": "false"},
    ),
    "joins": (
        joins,
        "local[2]",
        {
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.adaptive.skewJoin.enabled": "false",
            "spark.sql.adaptive.coalescePartitions.enabled": "false",
            "spark.sql.shuffle.partitions": "16",
            "spark.sql.crossJoin.enabled": "true",
        },
    ),
    "memory": (
        memory,
        "local[2]",
        {
            "spark.driver.memory": "512m",
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
        },
    ),
    "files_read": (files_read, "local[2]", {}),
    "two_shuffles": (
        two_shuffles,
        "local[2]",
        {"spark.sql.shuffle.partitions": "600", "spark.sql.adaptive.enabled": "false"},
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--only", nargs="*", default=None, help="apps to regenerate")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import pyspark

    manifest_path = args.out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest["spark_version"] = pyspark.__version__
    manifest["script"] = "tests/data/alerts/make_logs.py"
    logs = manifest.setdefault("logs", {})
    data = Path(tempfile.mkdtemp(prefix="alerts-data-"))  # files_read reads what files wrote
    try:
        for name, (job, master, conf) in APPS.items():
            if not args.only or name in args.only:
                _make(args.out, logs, name, job, master, conf, data)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


def _make(
    out: Path,
    logs: dict[str, Any],
    name: str,
    job: Callable[[Any, Path], list[str]],
    master: str,
    conf: dict[str, str],
    data: Path,
) -> None:
    """Run one application and keep its event log as ``out/NAME.zstd``."""
    with tempfile.TemporaryDirectory(prefix="alerts-logs-") as tmp:
        log_dir = Path(tmp)
        spark = _session(log_dir, master, conf)
        try:
            queries = job(spark, data)
        finally:
            spark.stop()
        written = [p for p in log_dir.iterdir() if not p.name.startswith(".")]
        if len(written) != 1:
            raise SystemExit(f"{name}: expected one event log, found {written}")
        target = out / f"{name}.zstd"
        shutil.copyfile(written[0], target)
        logs[name + ".zstd"] = {
            "spark_name": written[0].name,
            "master": master,
            "conf": conf,
            "queries": queries,
            "size": target.stat().st_size,
        }
        print(f"{target}: {target.stat().st_size:,} bytes", flush=True)
    _restart_gateway()


def _restart_gateway() -> None:
    """Each application gets a fresh JVM: one's heap and parallelism must not leak into the
    next through a reused gateway."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None


if __name__ == "__main__":
    sys.exit(main())
