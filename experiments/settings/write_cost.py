"""What a map task pays per shuffle partition it writes, beyond its data, on this machine.

The settings what-if charges each map task a cost per reduce partition it writes
(`perfmodel.spark.partition_rules.partition_write_ms`): a file of its own per partition up
to `spark.shuffle.sort.bypassMergeThreshold` (200), a segment of one sorted file beyond it.
This measures it: one Spark application on ``local[2]`` writes three kinds of shuffle with
the same 16 map tasks at each partition count, and the table gives each map stage's mean
task time and CPU.

* ``sql``: a DataFrame ``repartition(n, "id")`` of 400,000 rows (a SQL exchange);
* ``python``: an RDD ``partitionBy(n)`` of 40,000 pairs (a PySpark shuffle);
* ``python-df``: a DataFrame's rows mapped to pairs in Python, then ``groupByKey(n)``.

    python experiments/settings/write_cost.py --counts 8,64,200,201,2000

The per-partition cost is the slope between two counts on the same side of the threshold
(8 → 200 for a file each, 201 → 2,000 for a sorted file). Each count runs once, after a
warm-up job, in one JVM; run it on a quiet machine.
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


def measure(counts: list[int], logs: Path) -> None:
    """Run the shuffles, one job per kind and count, with the event log in ``logs``."""
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
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    sc.setJobDescription("warm-up")
    spark.range(0, 200_000, 1, 8).repartition(8).count()
    sc.parallelize(range(20_000), 8).map(lambda x: (x, x)).partitionBy(8).count()
    for n in counts:
        sc.setJobDescription(f"sql {n}")
        spark.range(0, 400_000, 1, 16).selectExpr("id", "id * 2 AS v").repartition(n, "id").count()
        sc.setJobDescription(f"python {n}")
        sc.parallelize(range(40_000), 16).map(lambda x: (x, x)).partitionBy(n).count()
        sc.setJobDescription(f"python-df {n}")
        spark.range(0, 400_000, 1, 16).rdd.map(lambda r: (r[0], 1)).groupByKey(n).count()
    spark.stop()


def map_stages(log: Path) -> list[tuple[str, int, int, float, float, float]]:
    """Per job's first stage (the map stage writing the measured shuffle; a count's final
    stage writes a one-partition shuffle of its own, left out): job description, stage id,
    tasks, and the mean task run time, CPU time and shuffle write time (ms)."""
    job_of: dict[int, str] = {}
    first: set[int] = set()
    tasks: dict[int, list[tuple[float, float, float, int]]] = defaultdict(list)
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
                tasks[event["Stage ID"]].append(
                    (
                        m["Executor Run Time"],
                        m["Executor CPU Time"] / 1e6,
                        w.get("Shuffle Write Time", 0) / 1e6,
                        w.get("Shuffle Bytes Written", 0),
                    )
                )
    out = []
    for sid, rows in sorted(tasks.items()):
        if sid not in first or not sum(r[3] for r in rows) or job_of.get(sid) == "warm-up":
            continue
        n = len(rows)
        run, cpu, write = (sum(r[i] for r in rows) / n for i in range(3))
        out.append((job_of[sid], sid, n, run, cpu, write))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--counts", default="8,64,200,201,2000", help="partition counts, comma-separated"
    )
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="write-cost-") as tmp:
        measure(counts, Path(tmp))
        (log,) = glob.glob(os.path.join(tmp, "*"))
        rows = map_stages(Path(log))
    print("| shuffle | partitions | map tasks | run ms/task | CPU ms/task | write ms/task |")
    print("|---|---:|---:|---:|---:|---:|")
    for desc, _sid, n, run, cpu, write in rows:
        kind, count = desc.rsplit(" ", 1)
        print(f"| {kind} | {count} | {n} | {run:.1f} | {cpu:.1f} | {write:.1f} |")


if __name__ == "__main__":
    main()
