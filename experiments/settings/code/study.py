"""The code-edit what-if study: a job whose heavy stages take their task counts from the
code (`code_counts.py`), run once per count, each run predicting every other from its bare
event log with ``stage.ID.partitions=N`` (what the code edit would set), beside "no change"
(the source run's own runtime). docs/settings.md reports it.

    python experiments/settings/code/study.py --out build/experiments/code-counts
    python experiments/settings/code/study.py --out /tmp/smoke --counts 1,2 --scale 0.05

Each run is a fresh Spark application on ``local[2]``; the measured runtime is the
application's, from its event log. A run already in ``--out`` is never overwritten: use a
fresh folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "code_counts.py"
EFFECT = 0.15
"""Pairs whose measured runtimes differ by at least this share are the "real effect" ones."""


def run(count: int, out: Path, scale: float) -> Path:
    """One run of the workload with ``count`` partitions; its event log."""
    logs = out / "logs" / str(count)
    if logs.exists():
        raise SystemExit(f"{logs} exists: use a fresh --out (runs are never overwritten)")
    logs.mkdir(parents=True)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_CONF_DIR", None)
    cmd = [sys.executable, str(WORKLOAD), "--partitions", str(count)]
    cmd += ["--event-log-dir", str(logs), "--scale", str(scale)]
    began = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    (out / "logs" / f"{count}.out").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(
            f"the run with {count} partitions failed ({done.returncode}): see the .out"
        )
    (log,) = [p for p in logs.iterdir() if not p.name.startswith(".")]
    print(f"{count} partitions: {time.time() - began:.1f} s, load {os.getloadavg()[0]:.2f}")
    return log


def code_stages(analysis: Any, count: int) -> list[int]:
    """The stages whose task count the code set to ``count`` (the repartition and the
    reduceByKey): the what-if's keys."""
    from perfmodel.spark.partitioning import CODE

    stages = analysis.partitioning.stages
    profile = analysis.profile
    return sorted(
        {
            key[0]
            for key, part in stages.items()
            if part.control == CODE
            and part.partitions == count
            and not part.code.startswith(("spark.range(", "parallelize("))
            and profile.stages[key].status != "SKIPPED"
            and len(profile.stages[key].table)
        }
    )


@dataclass(frozen=True)
class Pair:
    """One source run predicting another count."""

    base: int
    target: int
    stages: list[int]
    measured_s: float
    base_s: float
    predicted_s: float
    low_s: float
    high_s: float

    @property
    def error(self) -> float:
        return abs(self.predicted_s - self.measured_s) / self.measured_s

    @property
    def no_change_error(self) -> float:
        """The error of taking the source run's own runtime (what rule-based advice implies)."""
        return abs(self.base_s - self.measured_s) / self.measured_s

    @property
    def inside(self) -> bool:
        return self.low_s <= self.measured_s <= self.high_s


def predict_pairs(logs: dict[int, Path]) -> list[Pair]:
    import perfmodel
    from perfmodel.spark.settings import stage_key

    measured = {n: perfmodel.load(p).profile.duration_ms / 1000.0 for n, p in logs.items()}
    pairs: list[Pair] = []
    for base, log in logs.items():
        analysis = perfmodel.load(log)
        keys = code_stages(analysis, base)
        for target in logs:
            if target == base:
                continue
            p = analysis.predict_settings({stage_key(s): str(target) for s in keys})
            pairs.append(
                Pair(
                    base,
                    target,
                    keys,
                    measured[target],
                    measured[base],
                    p.predicted_s,
                    p.predicted_low_s,
                    p.predicted_high_s,
                )
            )
    return pairs


def report(pairs: list[Pair]) -> str:
    """The study's tables: every pair, beside no change, with the pairs of a real effect."""

    def mean(values: list[float]) -> str:
        return f"{100 * statistics.fmean(values):.1f}%" if values else "-"

    big = [p for p in pairs if p.no_change_error >= EFFECT]
    inside = sum(p.inside for p in pairs)
    lines = [
        "| pairs | mean error | no change | pairs with ≥ 15% effect | mean error there | "
        "no change there | in 80% interval |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {len(pairs)} | {mean([p.error for p in pairs])} | "
        f"{mean([p.no_change_error for p in pairs])} | {len(big)} | "
        f"{mean([p.error for p in big])} | {mean([p.no_change_error for p in big])} | "
        f"{100 * inside / max(len(pairs), 1):.1f}% |",
        "",
        "| from | to | measured s | predicted s | 80% interval | error | no change |",
        "|---:|---:|---:|---:|---|---:|---:|",
    ]
    for p in pairs:
        lines.append(
            f"| {p.base} | {p.target} | {p.measured_s:.1f} | {p.predicted_s:.1f} | "
            f"{p.low_s:.1f}–{p.high_s:.1f} | {100 * p.error:.1f}% | "
            f"{100 * p.no_change_error:.1f}% |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--counts", default="1,2,3,64", help="partition counts, comma-separated")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    logs = {n: run(n, a.out, a.scale) for n in counts}
    pairs = predict_pairs(logs)
    text = report(pairs)
    result = {
        "started": started,
        "machine": f"{platform.node()}, {os.cpu_count()} cores",
        "counts": counts,
        "scale": a.scale,
        "pairs": [
            asdict(p) | {"error": p.error, "no_change_error": p.no_change_error} for p in pairs
        ],
    }
    (a.out / "study.json").write_text(json.dumps(result, indent=1))
    (a.out / "study.md").write_text(f"Code-edit what-if study, {started}\n\n{text}\n")
    print(text)


if __name__ == "__main__":
    main()
