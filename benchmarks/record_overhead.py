"""Recording overhead of `perfmodel record`: the same PySpark job with and without it.

Runs tests/data/record/job.py alternately plain and under `perfmodel record` (JFR with the
plugin, py-spy, event log), N times each, and prints every wall time, the median of each, the
median ratio, and the spread of the plain runs (noise floor). Alternating cancels slow drifts in
machine load, and the order is swapped every pair. Usage:

    python benchmarks/record_overhead.py [--runs 5] [--scale 1.0] [--interval-ms 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOB = Path(__file__).resolve().parents[1] / "tests" / "data" / "record" / "job.py"
CLI = (
    "import typer; from perfmodel.cli.record import register; "
    "app = typer.Typer(); register(app); app()"
)


def run(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--interval-ms", type=int, default=20)
    args = parser.parse_args()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("JOB_FAIL", None)
    tmp = Path(tempfile.mkdtemp(prefix="perfmodel-overhead-"))
    plain: list[float] = []
    recorded: list[float] = []
    running: list[float] = []
    try:
        job = [sys.executable, str(JOB), str(tmp / "work"), str(args.scale)]
        run(job, env)  # warm-up: page cache, JIT of the launcher, input file
        for i in range(args.runs):
            out = tmp / f"bundle-{i}"
            rec = [sys.executable, "-c", CLI, "record", "--out", str(out)]
            rec += ["--interval-ms", str(args.interval_ms), "--", *job]
            # Swap the order every pair so neither variant always runs after the other.
            if i % 2 == 0:
                plain.append(run(job, env))
                recorded.append(run(rec, env))
            else:
                recorded.append(run(rec, env))
                plain.append(run(job, env))
            manifest = json.loads((out / "manifest.json").read_text())
            running.append((manifest["ended_ms"] - manifest["started_ms"]) / 1000.0)
            shutil.rmtree(out, ignore_errors=True)
            print(
                f"run {i + 1}: plain {plain[-1]:.2f} s, recorded {recorded[-1]:.2f} s "
                f"(job under recording {running[-1]:.2f} s)",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratios = [r / p for p, r in zip(plain, recorded, strict=True)]
    spread = (max(plain) - min(plain)) / statistics.median(plain)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"plain    median {statistics.median(plain):.2f} s  {[round(x, 2) for x in plain]}")
    print(f"recorded median {statistics.median(recorded):.2f} s  {[round(x, 2) for x in recorded]}")
    print(f"median of per-pair ratios: {statistics.median(ratios):.3f}")
    print(f"ratio of medians: {statistics.median(recorded) / statistics.median(plain):.3f}")
    job_ratios = [r / p for p, r in zip(plain, running, strict=True)]
    print(
        f"job only (command start to end, JVM exit included, bundle building excluded): "
        f"median {statistics.median(running):.2f} s, "
        f"median ratio {statistics.median(job_ratios):.3f}"
    )
    print(f"plain-run spread (max-min)/median: {spread:.1%} (noise floor)")
    print("note: 'recorded' includes building the bundle (reading JFR and py-spy output,")
    print("writing Parquet) after the job; 'job only' is what the application itself felt.")


if __name__ == "__main__":
    main()
