"""`perfmodel fleet` throughput in logs per second, for both engines, on this machine.

Why: a History Server directory holds thousands of logs; the fleet run must keep up with
them on a laptop (the local process pool) and hand the same work to a cluster (the Spark
engine). Each figure is one whole `perfmodel fleet` process (start-up, discovery, analysis,
Parquet, summary), timed from outside; the baseline in the same run is the local engine
with one worker (`--jobs 1`), so the pool's speed-up is a ratio measured under the same
conditions. A second local run into the same folder measures the resumed run (nothing to
analyse). Prints figures; asserts nothing.

Run: ``python benchmarks/fleet_speed.py [--logs 200] [--master local[2]]`` (needs the
shared logs in ../shared/data/eventlogs; the generated fleet goes to a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fleet_helpers import make_fleet  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "eventlogs"


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    cmd = [sys.executable, "-c", "from perfmodel.cli import main; main()", "fleet", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"fleet failed:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=200, help="generated logs (plus the shared)")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"shared event logs not found at {SHARED}")
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        root = Path(tmp)
        synth = make_fleet(SHARED, root / "logs", copies=args.logs)
        n = (
            len(synth.logs)
            + len(synth.corrupt)
            + sum(1 for p in SHARED.iterdir() if p.suffix != ".md")
        )
        inputs = [str(root / "logs"), str(SHARED), "--what-if", "cores=2x", "--json"]
        cores = len(os.sched_getaffinity(0))
        runs = {
            "local, 1 worker (baseline)": ["--out", str(root / "o1"), "--jobs", "1"],
            f"local, {cores} workers": ["--out", str(root / "o2")],
            "local, resumed (nothing changed)": ["--out", str(root / "o2")],
            f"spark {args.master}": [
                "--out",
                str(root / "o3"),
                "--engine",
                "spark",
                "--master",
                args.master,
                "--spark-conf",
                "spark.ui.enabled=false",
            ],
        }
        print(
            f"{n} logs ({len(synth.logs)} generated, {len(synth.corrupt)} corrupt, the rest "
            f"shared); machine: {cores} cores, load average {os.getloadavg()[0]:.1f}"
        )
        base = None
        for label, extra in runs.items():
            seconds = timed(inputs + extra, env)
            base = base or seconds
            print(
                f"{label:<36} {seconds:7.1f} s  {n / seconds:7.1f} logs/s  "
                f"({base / seconds:.2f}× the baseline)"
            )


if __name__ == "__main__":
    main()
