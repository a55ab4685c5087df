"""`perfmodel report` against `perfmodel diagnose --json` on the same log, as whole processes.

Why: the report reads the log, diagnoses it, sweeps cores and memory and writes a page; the
target is at most 2× a diagnose of the same log (issue 22), so a report stays something one
makes for every run. Runs alternate (diagnose, report, diagnose, report, ...) so load on a
shared machine falls on both; prints each run, the medians, their ratio and the page's size.
Asserts nothing.

Run: ``python benchmarks/report_speed.py LOG [--runs 3] [--perfmodel "CMD"] [--json OUT]``
(default log: /work/scale-logs/large-eventlog.zstd, 1.3 GB raw, 230,000 tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

DEFAULT_LOG = Path("/work/scale-logs/large-eventlog.zstd")


def timed(cmd: list[str]) -> float:
    """Wall seconds of one child process run to completion."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {shlex.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("log", nargs="?", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--perfmodel",
        default=f"{sys.executable} -m perfmodel.cli",
        help="How to run perfmodel (default: this Python's perfmodel package).",
    )
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()
    if not args.log.exists():
        sys.exit(f"no log at {args.log} (see benchmarks/make_large_log.py)")
    base = shlex.split(args.perfmodel)
    if base[-2:] == ["-m", "perfmodel.cli"]:
        base = base[:-2] + ["-c", "from perfmodel.cli import main; main()"]
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        diagnose = [*base, "diagnose", "--json", str(args.log)]
        report = [*base, "report", str(args.log), "-o", str(page)]
        times: dict[str, list[float]] = {"diagnose": [], "report": []}
        for i in range(args.runs):
            for name, cmd in (("diagnose", diagnose), ("report", report)):
                wall = timed(cmd)
                times[name].append(wall)
                print(f"run {i + 1} {name:8s} {wall:7.2f} s", flush=True)
        size = page.stat().st_size
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["report"] / med["diagnose"]
    load = os.getloadavg()
    print(
        f"median diagnose {med['diagnose']:.2f} s, report {med['report']:.2f} s: "
        f"ratio {ratio:.2f} (target ≤ 2.0); page {size / 1e6:.1f} MB (target ≤ 10.5 MB); "
        f"load average {load[0]:.2f}"
    )
    if args.json:
        figures = {
            "log": str(args.log),
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": times,
            "median_s": med,
            "ratio": ratio,
            "page_bytes": size,
            "load_avg_1m": load[0],
        }
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
