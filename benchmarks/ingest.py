"""Ingest benchmark: perfmodel's event-log → DAG build vs a plain json.loads-per-line loop.

    .venv/bin/python benchmarks/make_large_log.py      # once: a real 230k-task zstd log
    .venv/bin/python benchmarks/ingest.py [LOG] [--runs 3]

Superseded by ``scale.py``, which times whole ``perfmodel diagnose`` processes (what a user
waits for); this one isolates ``build_profile``, to see how much of that is reading the log.
Both sides decompress the same way (zstandard, streamed) when the log is compressed.

Each measurement runs in a fresh subprocess so peak memory (max RSS) is that run's own.
The two are alternated and the median of each is reported, with their ratio: on a noisy
2-core machine only side-by-side ratios mean anything. Target: perfmodel ≥ 3× the
baseline's MB/s, with memory bounded by the DAG (not the log) size.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replicate_log import read_lines  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_LOG = REPO / "build" / "bench" / "large-eventlog.zstd"


def _baseline(path: str) -> dict[str, float]:
    start = time.perf_counter()
    n = 0
    for line in read_lines(Path(path)):
        if line.strip():
            json.loads(line)
            n += 1
    return {"seconds": time.perf_counter() - start, "lines": n}


def _perfmodel(path: str) -> dict[str, float]:
    from perfmodel.spark.load import build_profile

    start = time.perf_counter()
    loaded = build_profile(path)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "lines": loaded.profile.event_count,
        "tasks": loaded.task_end_events,
    }


def _child(kind: str, path: str) -> None:
    result = (_baseline if kind == "baseline" else _perfmodel)(path)
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _run(kind: str, path: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="event-log ingest benchmark")
    parser.add_argument("log", nargs="?", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    if not args.log.exists():
        sys.exit(f"{args.log} not found: run benchmarks/make_large_log.py first")
    mb = sum(len(line) for line in read_lines(args.log)) / 1e6  # raw JSON, not the file size
    results: dict[str, list[dict[str, float]]] = {"baseline": [], "perfmodel": []}
    for i in range(args.runs):
        for kind in ("baseline", "perfmodel"):
            r = _run(kind, args.log)
            results[kind].append(r)
            print(
                f"run {i + 1} {kind:9s}: {mb / r['seconds']:7.1f} MB/s, "
                f"peak RSS {r['max_rss_mb']:.0f} MB",
                flush=True,
            )
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in results.items()}
    rss = {k: max(r["max_rss_mb"] for r in v) for k, v in results.items()}
    tasks = results["perfmodel"][0].get("tasks", 0)
    print()
    print(f"log: {args.log} ({mb:.0f} MB raw JSON, {int(tasks)} tasks)")
    print(
        f"baseline  json.loads per line: {mb / med['baseline']:7.1f} MB/s "
        f"(median of {args.runs}), peak RSS {rss['baseline']:.0f} MB"
    )
    print(
        f"perfmodel build_profile:       {mb / med['perfmodel']:7.1f} MB/s "
        f"(median of {args.runs}), peak RSS {rss['perfmodel']:.0f} MB"
    )
    print(f"speed-up: {med['baseline'] / med['perfmodel']:.2f}x (target >= 3x)")


if __name__ == "__main__":
    main()
