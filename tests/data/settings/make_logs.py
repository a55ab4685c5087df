"""Regenerate the real Spark event logs in tests/data/settings/ (settings what-if tests).

Each log is one small local PySpark application, written by Spark itself (zstd, not rolling),
whose plans hold what the partitioning derivation must read:

* ``plans.zstd`` — AQE on (Spark's default), 8 shuffle partitions: a hash aggregation, the
  code's ``repartition(5)`` and ``coalesce(3)``, a ``repartition(col)``, a scan of 6 Parquet
  files, a broadcast and (with broadcasts off for the query) a sort-merge join, an RDD
  ``reduceByKey`` with and without a partition count.
* ``aqe_off.zstd`` — the same aggregation and join with AQE off.
* ``files.zstd`` — one scan of 6 Parquet files under three ``maxPartitionBytes`` and two
  ``openCostInBytes`` (set per query with ``spark.conf.set``).
* ``coalesce.zstd`` — one aggregation over the same input, first with AQE off at 64 shuffle
  partitions (the source: each reduce task reads exactly one partition), then with AQE on
  under several advisory sizes, minimum partition sizes and partition counts: what Spark's
  coalescing chose, to be predicted from the source. The minimum partition size is 2k for
  the application (its 1m default would make every query of this small input one task).
* ``skew.zstd`` — a sort-merge join with one hot key, skew-join handling off (the source),
  then on with small thresholds.
* ``checkpoint.zstd`` — AQE off, 6 shuffle partitions: an aggregation's output
  ``localCheckpoint()``-ed, then read back by a join and an aggregation (stages that run the
  checkpointed partitions: the shuffle-partitions setting's, through the checkpoint).
* ``readback.zstd`` — AQE off, 40 shuffle partitions: an aggregation written as JSON (40
  files) and read back (Spark lists the 40 files in a job of its own, a task per file, then
  scans them for a schema and counts them), written as Parquet and counted, and written as
  CSV with a header and counted (Spark reads the header's line in one task of the scan).
* ``ordered.zstd`` — an aggregation over 6 keys sorted by its key (a range exchange, whose
  partitioner makes at most as many partitions as the sampled keys allow): AQE on at 40
  partitions (the source), then AQE off at 40, 400 and 4.
* ``partitioned.zstd`` — AQE off: an aggregation into 300 groups written with
  ``partitionBy`` over 5 values (a file per value each task holds rows of), at 4, 40 and
  400 shuffle partitions.

Usage (from the repository root)::

    .venv/bin/python tests/data/settings/make_logs.py [--out DIR]

Names are stable; the Spark version and the queries each log holds are in
``tests/data/settings/MANIFEST.json``.
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

ROWS = 120_000
KEYS = 3_000


def _session(log_dir: Path, conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("settings-test")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", str(log_dir))
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _frame(spark: Any, rows: int = ROWS, keys: int = KEYS, hot: float = 0.0) -> Any:
    """Rows with a key column (``hot``: share of rows on key 0) and a payload."""
    from pyspark.sql import functions as F

    df = spark.range(0, rows, 1, 4)
    key = F.col("id") % keys
    if hot > 0:
        key = F.when(F.rand(7) < hot, F.lit(0)).otherwise(key)
    return (
        df.withColumn("k", key)
        .withColumn("v", F.rand(11))
        .withColumn("s", F.concat(F.lit("payload-"), (F.col("id") * 7919 % 100003).cast("string")))
    )


def plans(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark)
    df.groupBy("k").agg(F.sum("v")).collect()
    df.repartition(5).groupBy("k").count().collect()
    df.coalesce(3).selectExpr("sum(v)").collect()
    df.repartition("k").selectExpr("count(*)").collect()
    df.repartition(6).write.mode("overwrite").parquet(str(data / "six"))
    spark.read.parquet(str(data / "six")).groupBy("k").count().collect()
    small = spark.range(0, 200).withColumnRenamed("id", "k2")
    df.join(small, df.k == small.k2).count()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    df.join(small, df.k == small.k2).count()
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    rdd = spark.sparkContext.parallelize(range(20_000), 4).map(lambda x: (x % 97, 1))
    rdd.reduceByKey(lambda a, b: a + b).collect()
    rdd.reduceByKey(lambda a, b: a + b, 3).collect()
    return [
        "groupBy agg",
        "repartition(5) + groupBy",
        "coalesce(3)",
        "repartition(k)",
        "write 6 files",
        "scan 6 files + groupBy",
        "broadcast join",
        "sort-merge join (broadcast off for the query)",
        "reduceByKey",
        "reduceByKey(3)",
    ]


def aqe_off(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark)
    df.groupBy("k").agg(F.sum("v")).collect()
    small = spark.range(0, 200).withColumnRenamed("id", "k2")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    df.join(small, df.k == small.k2).count()
    return ["groupBy agg", "sort-merge join"]


FILE_SETTINGS = [
    {"spark.sql.files.maxPartitionBytes": "32k"},
    {"spark.sql.files.maxPartitionBytes": "200k"},
    {"spark.sql.files.maxPartitionBytes": "128m"},
    {"spark.sql.files.openCostInBytes": "100k"},
    {"spark.sql.files.openCostInBytes": "300k"},
    {"spark.sql.files.maxPartitionBytes": "500k", "spark.sql.files.openCostInBytes": "8k"},
]
FILE_DEFAULTS = {
    "spark.sql.files.maxPartitionBytes": "128m",
    "spark.sql.files.openCostInBytes": "4m",
}


def files(spark: Any, data: Path) -> list[str]:
    df = _frame(spark, rows=60_000)
    df.repartition(6).write.mode("overwrite").parquet(str(data / "six"))
    done = []
    for conf in FILE_SETTINGS:
        for key, value in (FILE_DEFAULTS | conf).items():
            spark.conf.set(key, value)
        spark.read.parquet(str(data / "six")).selectExpr("sum(v)").collect()
        done.append("scan with " + ", ".join(f"{k}={v}" for k, v in conf.items()))
    return ["write 6 files"] + done


COALESCE_RUNS = [
    # (shuffle partitions, AQE settings) for each query after the source. Every query sets
    # each key it reads (a `spark.conf.unset` would fall back to Spark's default, not to the
    # application's value, and the log's `modifiedConfigs` would not show it); the one that
    # sets minPartitionNum comes last, as that key cannot be set back to "unset".
    (64, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k"}),
    (64, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "40k"}),
    (64, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "100k"}),
    (
        64,
        {
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": "60k",
            "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
        },
    ),
    (
        64,
        {
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": "10k",
            "spark.sql.adaptive.coalescePartitions.minPartitionSize": "30k",
        },
    ),
    (16, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "250k"}),
    (16, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m"}),
    (200, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "50k"}),
    (200, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "140k"}),
    (1000, {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m"}),
    (
        64,
        {
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": "25k",
            "spark.sql.adaptive.coalescePartitions.minPartitionNum": "40",
        },
    ),
]
"""Each after the AQE-off source query at 64 partitions."""
COALESCE_DEFAULTS = {
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "true",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": "2k",
}


def coalesce(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark, rows=200_000, keys=20_000)
    query = df.groupBy("k").agg(F.sum("v"), F.max("s"))
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", "64")
    query.collect()
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    done = ["source: AQE off, 64 partitions"]
    for partitions, conf in COALESCE_RUNS:
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        for key, value in (COALESCE_DEFAULTS | conf).items():
            spark.conf.set(key, value)
        df.groupBy("k").agg(F.sum("v"), F.max("s")).collect()
        done.append(f"{partitions} partitions, " + ", ".join(f"{k}={v}" for k, v in conf.items()))
    return done


SKEW_RUNS = [
    {
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "64k",
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "32k",
    },
    {
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "128k",
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "3",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64k",
    },
]


def skew(spark: Any, data: Path) -> list[str]:
    big = _frame(spark, rows=200_000, keys=5_000, hot=0.3)
    small = _frame(spark, rows=20_000, keys=5_000).select("k", "v").withColumnRenamed("v", "w")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    spark.conf.set("spark.sql.adaptive.skewJoin.enabled", "false")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    big.join(small, "k").selectExpr("count(*)", "sum(v * w)").collect()
    spark.conf.set("spark.sql.adaptive.skewJoin.enabled", "true")
    done = ["source: skew join off, coalescing off, 16 partitions"]
    for conf in SKEW_RUNS:
        for key, value in conf.items():
            spark.conf.set(key, value)
        big.join(small, "k").selectExpr("count(*)", "sum(v * w)").collect()
        for key in conf:
            spark.conf.unset(key)
        done.append(", ".join(f"{k}={v}" for k, v in conf.items()))
    return done


def checkpoint(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark)
    sums = df.groupBy("k").agg(F.sum("v").alias("total")).localCheckpoint()
    sums.join(df, "k").groupBy((F.col("k") % 10).alias("g")).agg(F.max("total")).collect()
    sums.groupBy((F.col("k") % 7).alias("g")).count().collect()
    return ["groupBy agg, localCheckpoint", "join with the checkpoint + groupBy", "groupBy it"]


def readback(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    sums = _frame(spark).groupBy("k").agg(F.sum("v").alias("total"))
    sums.write.mode("overwrite").json(str(data / "sums-json"))
    spark.read.json(str(data / "sums-json")).count()
    sums.write.mode("overwrite").parquet(str(data / "sums-parquet"))
    spark.read.parquet(str(data / "sums-parquet")).count()
    sums.write.mode("overwrite").option("header", True).csv(str(data / "sums-csv"))
    spark.read.option("header", True).csv(str(data / "sums-csv")).count()
    return [
        "groupBy agg written as JSON (40 files)",
        "read the JSON back, count",
        "written as Parquet",
        "read the Parquet back, count",
        "written as CSV with a header",
        "read the CSV back (its header: one task), count",
    ]


def ordered(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark)
    done = []
    for adaptive, partitions in (("true", 40), ("false", 40), ("false", 400), ("false", 4)):
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        df.groupBy((F.col("k") % 6).alias("g")).agg(F.sum("v").alias("total")).orderBy(
            "g"
        ).collect()
        done.append(f"groupBy 6 keys, orderBy: AQE {adaptive}, {partitions} partitions")
    return done


def partitioned(spark: Any, data: Path) -> list[str]:
    from pyspark.sql import functions as F

    df = _frame(spark)
    done = []
    for partitions in (4, 40, 400):
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        df.groupBy((F.col("k") % 5).alias("part"), (F.col("k") % 60).alias("slot")).agg(
            F.sum("v").alias("total")
        ).write.mode("overwrite").partitionBy("part").parquet(str(data / f"by-part-{partitions}"))
        done.append(f"groupBy 300 groups written partitioned by 5 values, {partitions} partitions")
    return done


APPS: dict[str, tuple[Callable[[Any, Path], list[str]], dict[str, str]]] = {
    "plans": (plans, {"spark.sql.shuffle.partitions": "8"}),
    "checkpoint": (
        checkpoint,
        {"spark.sql.shuffle.partitions": "6", "spark.sql.adaptive.enabled": "false"},
    ),
    "aqe_off": (
        aqe_off,
        {"spark.sql.shuffle.partitions": "8", "spark.sql.adaptive.enabled": "false"},
    ),
    "files": (files, {"spark.default.parallelism": "2"}),
    "coalesce": (
        coalesce,
        {
            "spark.default.parallelism": "2",
            "spark.sql.adaptive.coalescePartitions.minPartitionSize": "2k",
        },
    ),
    "skew": (skew, {"spark.default.parallelism": "2"}),
    "readback": (
        readback,
        {"spark.sql.shuffle.partitions": "40", "spark.sql.adaptive.enabled": "false"},
    ),
    "ordered": (ordered, {"spark.default.parallelism": "2"}),
    "partitioned": (partitioned, {"spark.sql.adaptive.enabled": "false"}),
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
    manifest["script"] = "tests/data/settings/make_logs.py"
    logs = manifest.setdefault("logs", {})
    for name, (job, conf) in APPS.items():
        if args.only and name not in args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="settings-logs-") as tmp:
            log_dir = Path(tmp) / "logs"
            log_dir.mkdir()
            spark = _session(log_dir, conf)
            try:
                queries = job(spark, Path(tmp) / "data")
            finally:
                spark.stop()
            written = [p for p in log_dir.iterdir() if not p.name.startswith(".")]
            if len(written) != 1:
                raise SystemExit(f"{name}: expected one event log, found {written}")
            target = args.out / f"{name}.zstd"
            shutil.copyfile(written[0], target)
            logs[name + ".zstd"] = {
                "spark_name": written[0].name,
                "conf": conf,
                "queries": queries,
                "size": target.stat().st_size,
            }
            print(f"{target}: {target.stat().st_size:,} bytes", flush=True)
        _restart_gateway()
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


def _restart_gateway() -> None:
    """Each application gets a fresh JVM: settings of one (the heap, the parallelism) must not
    leak into the next through a reused gateway."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None


if __name__ == "__main__":
    sys.exit(main())
