"""Speed of `perfmodel recommend` on a big log and a 100-type catalog, against one prediction.

Why: a catalog search asks about thousands of points (100 types × 20 node counts × up to 3
layouts); replaying each would take minutes on a 100k-task log. The search replays a point
only when its lower bound leaves it a chance (`perfmodel.simulate.bounds`), and identical
configurations once. This times whole processes in the same run: the baseline is
``perfmodel predict LOG --cores 4 --json`` (load + one replay), the target
``perfmodel recommend LOG --catalog <100 types> --max-nodes 20 --json``; the difference is
the search, shown also in replays (the JSON's ``search.replays``) and in replay-equivalents.
Prints wall and CPU seconds (the CPU figures are the ones to compare on a loaded machine);
asserts nothing. ``--repo`` times another checkout (e.g. the main branch, for a before/after
pair in one run).

Run: ``python benchmarks/recommend_speed.py LOG [--max-nodes 20] [--runs 1] [--deadline 20m]
[--tolerance 0.02]``
(big logs: /work/scale-logs/large-eventlog.zstd, 230k tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEADER = (
    "vm_type,provider,vcpu,memory_gib,network_gbps,disk_mbps,cpu_speed,price_per_hour,"
    "billing_granularity_s,min_billing_s,region,source,as_of"
)
FAMILIES = {  # name: (GiB per vCPU, USD per vCPU-hour, disk MB/s)
    "gp": (4, 0.048, 125),
    "mem": (8, 0.063, 125),
    "cpu": (2, 0.0425, 125),
    "io": (8, 0.086, 1000),
    "hpc": (4, 0.052, 140),
}
GENERATIONS = {"g5": 0.9, "g6": 1.0, "h6": 1.0, "g7": 1.15}  # name: relative speed
SIZES = (2, 4, 8, 16, 32)


def synthetic_catalog() -> str:
    """100 made-up types (5 families × 4 generations × 5 sizes); prices per vCPU are
    family × generation, so several types share a replay configuration, as real ones do."""
    rows = [HEADER]
    for fam, (gib, usd, disk) in FAMILIES.items():
        for gen, speed in GENERATIONS.items():
            for vcpu in SIZES:
                price = vcpu * usd * (0.95 + 0.1 * speed)
                net = min(25.0, 1.5 * vcpu)
                rows.append(
                    f"{fam}.{gen}.{vcpu}x,synthetic,{vcpu},{vcpu * gib},{net},{disk},{speed},"
                    f"{price:.4f},1,60,nowhere,benchmarks/recommend_speed.py,2026-01-01"
                )
    return "\n".join(rows) + "\n"


def timed(cmd: list[str], repo: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, of the child) of one command, and its output."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
    return wall, cpu, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--max-nodes", type=int, default=20)
    parser.add_argument("--deadline", default=None)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--tolerance", default=None, help="passed to recommend (default: exact)")
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="the perfmodel checkout to time (default: this)"
    )
    args = parser.parse_args()
    exe = str(Path(sys.executable).parent / "perfmodel")
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "synthetic-100.csv"
        catalog.write_text(synthetic_catalog())
        predict = [exe, "predict", args.log, "--cores", "4", "--json"]
        recommend = [exe, "recommend", args.log, "--catalog", str(catalog)]
        recommend += ["--max-nodes", str(args.max_nodes), "--json"]
        if args.deadline:
            recommend += ["--deadline", args.deadline]
        if args.tolerance:
            recommend += ["--tolerance", args.tolerance]
        for run in range(args.runs):
            base_s, base_cpu, _ = timed(predict, args.repo)
            rec_s, rec_cpu, out = timed(recommend, args.repo)
            data = json.loads(out)
            s = data["search"]
            print(
                f"run {run + 1}: predict {base_s:.1f}s ({base_cpu:.1f}s CPU), recommend "
                f"{rec_s:.1f}s ({rec_cpu:.1f}s CPU; ratio {rec_s / base_s:.2f} wall, "
                f"{rec_cpu / base_cpu:.2f} CPU); search ≈ {rec_s - base_s:.1f}s "
                f"({rec_cpu - base_cpu:.1f}s CPU) for {s['points']} points, "
                f"{s['unique_configs']} distinct configurations, {s['replays']} replayed; "
                f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )
            rec = data["recommended"]
            print(
                f"  recommended {rec['nodes']} × {rec['vm_type']}: {rec['predicted_s']:.1f}s, "
                f"${rec['cost']:.4f}; front of {len(data['pareto'])} points"
            )


if __name__ == "__main__":
    main()
