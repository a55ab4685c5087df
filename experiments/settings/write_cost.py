"""What a task pays for the files it writes, beyond its data, on this machine.

The settings what-if charges two such costs (`perfmodel.spark.partition_rules`):

* **shuffle files** (``--what shuffle``): a map task pays per reduce partition it writes
  (`partition_write_ms`): a file of its own per partition up to
  `spark.shuffle.sort.bypassMergeThreshold` (200), a segment of one sorted file beyond it.
  The same 16 map tasks write three kinds of shuffle at each partition count:
  ``sql``, a DataFrame ``repartition(n, "id")`` of 400,000 rows (a SQL exchange; ``--sql-rows``);
  ``sql-wide``, the same rows with a random number and a 64-character hash beside the id,
  read after the shuffle (``sql``'s ``count()`` leaves its columns out of the exchange);
  ``python``, an RDD ``partitionBy(n)`` of 40,000 pairs (a PySpark shuffle);
  ``python-df``, a DataFrame's rows mapped to pairs in Python, then ``groupByKey(n)``.
  The per-partition cost is the slope between two counts on the same side of the threshold
  (8 → 200 for a file each, 201 → 2,000 for a sorted file); between 8 and 201, at many
  rows, a SQL map task's cost per record of the sorted writer (`SORTED_RECORD_MS`).
* **output files** (``--what output``): a task that writes output (``df.write``) pays for
  its file whatever its data (`OUTPUT_FILE_MS`). The same 2,000,000 rows are written as
  CSV and as Parquet at each partition count; a task's time is taken to be a fixed cost
  plus a cost per byte, so between the fewest and most partitions
  ``fixed = (t1·n1 − t2·n2) / (n1 − n2)`` (t: mean task time, n: tasks). Each writing
  stage's *warm launch* is also shown: the median launch overhead of the later half of its
  tasks, which deserialise the writer's Hadoop configuration (`WRITER_LAUNCH_MS`).

    python experiments/settings/write_cost.py --what shuffle --counts 8,64,200,201,2000
    python experiments/settings/write_cost.py --what output --counts 8,64,400

One Spark application on ``local[2]``; each count runs once, after a warm-up job, in one
JVM; a count given again runs again in the same JVM (``--counts 8,200,8,200`` measures two
rounds). Run it on a quiet machine, and more than once: the file system's state moves it.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

OUTPUT_ROWS = 2_000_000


def session(logs: Path) -> Any:
    """A local[2] session with AQE off, logging events uncompressed to ``logs``."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("write-cost")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", logs.as_uri())
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def measure_shuffles(spark: Any, counts: list[int], sql_rows: int) -> None:
    """Each kind of shuffle written at each count, one job each."""
    sc = spark.sparkContext
    sc.setJobDescription("warm-up")
    spark.range(0, 200_000, 1, 8).repartition(8).count()
    sc.parallelize(range(20_000), 8).map(lambda x: (x, x)).partitionBy(8).count()
    for n in counts:
        sc.setJobDescription(f"sql {n}")
        spark.range(0, sql_rows, 1, 16).selectExpr("id", "id * 2 AS v").repartition(n, "id").count()
        sc.setJobDescription(f"sql-wide {n}")
        spark.range(0, sql_rows, 1, 16).selectExpr(
            "id", "cast(rand(7) * 1e12 AS bigint) AS v", "sha2(cast(id AS string), 256) AS s"
        ).repartition(n, "id").selectExpr("sum(v + length(s))").collect()
        sc.setJobDescription(f"python {n}")
        sc.parallelize(range(40_000), 16).map(lambda x: (x, x)).partitionBy(n).count()
        sc.setJobDescription(f"python-df {n}")
        spark.range(0, 400_000, 1, 16).rdd.map(lambda r: (r[0], 1)).groupByKey(n).count()


def measure_outputs(spark: Any, counts: list[int], out: Path) -> None:
    """The same rows written as CSV and as Parquet at each count, one job each."""
    sc = spark.sparkContext
    rows = spark.range(0, OUTPUT_ROWS, 1, 16).selectExpr(
        "id", "id * 7919 % 100003 AS v", "concat('row-', cast(id AS string)) AS s"
    )
    sc.setJobDescription("warm-up")
    rows.repartition(8).write.mode("overwrite").csv(str(out / "warm-up"))
    for n in counts:
        for fmt in ("csv", "parquet"):
            sc.setJobDescription(f"{fmt} {n}")
            getattr(rows.repartition(n).write.mode("overwrite"), fmt)(str(out / f"{fmt}-{n}"))


def stages(log: Path) -> list[dict[str, Any]]:
    """Per stage that ran tasks: its job's description, whether it was its job's first,
    its task count, and its tasks' mean run time, CPU time, shuffle write time (ms),
    shuffle bytes and output bytes, and the median launch overhead (wall time outside run
    time, ms) of the later half of its tasks in launch order."""
    job_of: dict[int, str] = {}
    first: set[int] = set()
    tasks: dict[int, list[tuple[float, ...]]] = defaultdict(list)
    launches: dict[int, list[tuple[int, float]]] = defaultdict(list)
    with log.open() as f:
        for line in f:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                desc = (event.get("Properties") or {}).get("spark.job.description", "")
                for sid in event["Stage IDs"]:
                    job_of[sid] = desc
                first.add(min(event["Stage IDs"]))
            elif kind == "SparkListenerTaskEnd" and event.get("Task Metrics"):
                m = event["Task Metrics"]
                w = m.get("Shuffle Write Metrics") or {}
                info = event["Task Info"]
                launches[event["Stage ID"]].append(
                    (
                        info["Launch Time"],
                        info["Finish Time"] - info["Launch Time"] - m["Executor Run Time"],
                    )
                )
                tasks[event["Stage ID"]].append(
                    (
                        m["Executor Run Time"],
                        m["Executor CPU Time"] / 1e6,
                        w.get("Shuffle Write Time", 0) / 1e6,
                        w.get("Shuffle Bytes Written", 0),
                        w.get("Shuffle Records Written", 0),
                        (m.get("Output Metrics") or {}).get("Bytes Written", 0),
                    )
                )
    out = []
    for sid, rows in sorted(tasks.items()):
        if job_of.get(sid, "warm-up") == "warm-up":
            continue
        n = len(rows)
        run, cpu, write, shuffled, records, written = (
            sum(r[i] for r in rows) / n for i in range(6)
        )
        later = sorted(ms for _, ms in sorted(launches[sid])[n // 2 :])
        out.append(
            {
                "job": job_of[sid],
                "first": sid in first,
                "tasks": n,
                "run": run,
                "cpu": cpu,
                "write": write,
                "shuffled": shuffled,
                "records": records,
                "written": written,
                "launch": later[len(later) // 2],
            }
        )
    return out


def shuffle_table(rows: list[dict[str, Any]]) -> list[str]:
    """Each job's first stage (the map stage writing the measured shuffle; a count's final
    stage writes a one-partition shuffle of its own, left out)."""
    lines = [
        "| shuffle | partitions | map tasks | records/task | bytes/record | run ms/task "
        "| CPU ms/task | write ms/task |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r["first"] and r["shuffled"] > 0:
            kind, count = r["job"].rsplit(" ", 1)
            lines.append(
                f"| {kind} | {count} | {r['tasks']} | {r['records']:.0f} "
                f"| {r['shuffled'] / max(r['records'], 1):.1f} | {r['run']:.1f} | {r['cpu']:.1f} "
                f"| {r['write']:.1f} |"
            )
    return lines


def output_table(rows: list[dict[str, Any]]) -> list[str]:
    """Each stage that wrote output, and each format's fixed cost per file."""
    lines = [
        "| format | files (tasks) | run ms/task | CPU ms/task | KB/task | warm launch ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    points: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r["written"] <= 0:
            continue
        fmt = r["job"].split()[0]
        points[fmt].append((r["tasks"], r["run"]))
        lines.append(
            f"| {fmt} | {r['tasks']} | {r['run']:.1f} | {r['cpu']:.1f} "
            f"| {r['written'] / 1024:.0f} | {r['launch']:.0f} |"
        )
    for fmt, found in points.items():
        (n1, t1), (n2, t2) = min(found), max(found)
        if n1 != n2:
            lines.append(f"{fmt}: fixed cost per file {(t1 * n1 - t2 * n2) / (n1 - n2):.1f} ms")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--what", choices=("shuffle", "output"), default="shuffle")
    parser.add_argument(
        "--counts",
        default=None,
        help="partition counts, comma-separated (default: 8,64,200,201,2000 for shuffle "
        "files, 8,64,400 for output files)",
    )
    parser.add_argument(
        "--sql-rows",
        type=int,
        default=400_000,
        help="rows of each SQL shuffle, over 16 map tasks (default: 400,000)",
    )
    args = parser.parse_args()
    default = "8,64,200,201,2000" if args.what == "shuffle" else "8,64,400"
    counts = [int(c) for c in (args.counts or default).split(",")]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="write-cost-") as tmp:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        spark = session(logs)
        try:
            if args.what == "shuffle":
                measure_shuffles(spark, counts, args.sql_rows)
            else:
                measure_outputs(spark, counts, Path(tmp) / "out")
        finally:
            spark.stop()
        (log,) = glob.glob(os.path.join(logs, "*"))
        rows = stages(Path(log))
    table = shuffle_table(rows) if args.what == "shuffle" else output_table(rows)
    print("\n".join(table))


if __name__ == "__main__":
    main()
