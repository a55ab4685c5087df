"""What the damage accounting costs: `perfmodel diagnose` of one log, this tree vs a baseline.

    .venv/bin/python benchmarks/quality_overhead.py [LOG] [--baseline REF] [--runs 5]

The baseline is another commit of this repository (default ``main``: on a branch that adds
the accounting, exactly the code before it), unpacked with ``git archive`` into a temporary
directory, so both sides run the same command on the same log in the same session. Runs
alternate between the two trees, each in a fresh process (`diagnose --json`, output
discarded), and the medians of wall and CPU time and their ratios are reported: on a shared
2-core machine only side-by-side ratios mean anything, and CPU time is the steadier of the
two when other work competes for the cores. Target: accounting ≤ 3% of diagnose time on the 1 GB log
(``benchmarks/make_large_log.py`` writes it to build/bench; the default LOG is that file
when present, else the largest shared real log).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LARGE_LOG = REPO / "build" / "bench" / "large-eventlog.json"
SHARED_LOG = (
    REPO.parent / "shared" / "data" / "eventlogs" / "tasks_executors_fail_compressed_eventlog.zstd"
)
CLI = "from perfmodel.cli import main; main()"


def _unpack(ref: str, into: Path) -> Path:
    archive = into / "baseline.tar"
    subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), ref, "perfmodel"],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _time(tree: Path, log: Path, state: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one ``diagnose`` process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PERFMODEL_STATE_DIR": str(state)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "diagnose", "--json", str(log)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"diagnose failed in {tree}: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = LARGE_LOG if LARGE_LOG.exists() else SHARED_LOG
    parser.add_argument("log", nargs="?", type=Path, default=default)
    parser.add_argument("--baseline", default="main", help="git ref without the accounting")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perfmodel-bench-") as tmp:
        base_tree = _unpack(args.baseline, Path(tmp))
        state = Path(tmp) / "state"
        trees = {"baseline": base_tree, "this tree": REPO}
        wall: dict[str, list[float]] = {k: [] for k in trees}
        cpu: dict[str, list[float]] = {k: [] for k in trees}
        for tree in trees.values():  # warm the page cache and the bytecode caches
            _time(tree, args.log, state)
        for _ in range(args.runs):
            for name, tree in trees.items():
                w, c = _time(tree, args.log, state)
                wall[name].append(round(w, 3))
                cpu[name].append(round(c, 3))
    report: dict[str, object] = {
        "log": str(args.log),
        "log_bytes": args.log.stat().st_size,
        "baseline": args.baseline,
        "runs": args.runs,
        "wall_s": wall,
        "cpu_s": cpu,
    }
    for label, series in (("wall", wall), ("cpu", cpu)):
        medians = {k: statistics.median(v) for k, v in series.items()}
        report[f"{label}_overhead"] = round(medians["this tree"] / medians["baseline"] - 1, 4)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
