"""What a task pays per output file it writes, beyond its data, on this machine.

A task that writes a DataFrame's output (``df.write``) writes a file of its own and commits
it (`FileOutputCommitter`: a task attempt directory, a rename). The settings what-if charges
each task of such a stage that cost once (`perfmodel.spark.partition_rules.OUTPUT_FILE_MS`),
so that more partitions write more files. This measures it: one Spark application on
``local[2]`` writes the same 2,000,000 rows as CSV and as Parquet at each partition count,
and the table gives each write stage's mean task time and data.

    python experiments/settings/output_cost.py --counts 8,64,400

A task's time is taken to be a fixed cost plus a cost per byte: between the fewest and most
partitions, ``fixed = (t1·n1 − t2·n2) / (n1 − n2)`` (t: mean task time, n: tasks). Each
count runs once, after a warm-up write, in one JVM; run it on a quiet machine.
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

ROWS = 2_000_000


def measure(counts: list[int], logs: Path, out: Path) -> None:
    """Write the rows at each count, one job per format and count, logging to ``logs``."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("output-cost")
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
    rows = spark.range(0, ROWS, 1, 16).selectExpr(
        "id", "id * 7919 % 100003 AS v", "concat('row-', cast(id AS string)) AS s"
    )
    sc.setJobDescription("warm-up")
    rows.repartition(8).write.mode("overwrite").csv(str(out / "warm-up"))
    for n in counts:
        for fmt in ("csv", "parquet"):
            sc.setJobDescription(f"{fmt} {n}")
            getattr(rows.repartition(n).write.mode("overwrite"), fmt)(str(out / f"{fmt}-{n}"))
    spark.stop()


def write_stages(log: Path) -> list[tuple[str, int, float, float, float]]:
    """Per stage whose tasks wrote output: job description, tasks, and the mean task run
    time and CPU time (ms) and output bytes."""
    job_of: dict[int, str] = {}
    tasks: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    with log.open() as f:
        for line in f:
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                desc = (event.get("Properties") or {}).get("spark.job.description", "")
                for sid in event["Stage IDs"]:
                    job_of[sid] = desc
            elif kind == "SparkListenerTaskEnd" and event.get("Task Metrics"):
                m = event["Task Metrics"]
                written = (m.get("Output Metrics") or {}).get("Bytes Written", 0)
                tasks[event["Stage ID"]].append(
                    (m["Executor Run Time"], m["Executor CPU Time"] / 1e6, written)
                )
    out = []
    for sid, rows in sorted(tasks.items()):
        if not sum(r[2] for r in rows) or job_of.get(sid, "warm-up") == "warm-up":
            continue
        n = len(rows)
        run, cpu, written = (sum(r[i] for r in rows) / n for i in range(3))
        out.append((job_of[sid], n, run, cpu, written))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="8,64,400", help="partition counts, comma-separated")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="output-cost-") as tmp:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        measure(counts, logs, Path(tmp) / "out")
        (log,) = glob.glob(os.path.join(logs, "*"))
        rows = write_stages(Path(log))
    print("| format | files (tasks) | run ms/task | CPU ms/task | KB/task |")
    print("|---|---:|---:|---:|---:|")
    by_format: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for desc, n, run, cpu, written in rows:
        fmt = desc.split()[0]
        by_format[fmt].append((n, run))
        print(f"| {fmt} | {n} | {run:.1f} | {cpu:.1f} | {written / 1024:.0f} |")
    for fmt, points in by_format.items():
        (n1, t1), (n2, t2) = min(points), max(points)
        if n1 != n2:
            print(f"{fmt}: fixed cost per file {(t1 * n1 - t2 * n2) / (n1 - n2):.1f} ms")


if __name__ == "__main__":
    main()
