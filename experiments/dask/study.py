"""The Dask what-if study: record Dask workloads under several LocalCluster configurations,
predict every run from every other, and report the error beside a slot-only replay.

    python experiments/dask/study.py --out build/dask-study                # the study
    python experiments/dask/study.py --out /tmp/s --scale 0.05 --configs 2  # a smoke run
    python experiments/dask/study.py --out build/dask-study --report-only   # re-report
    python experiments/dask/study.py --out build/dask-study --repeat 3      # medians of 3

Each workload script (``experiments/dask/workloads/*.py``, or ``--workloads DIR``) takes
``--workers --threads --memory --scale`` and starts its own ``LocalCluster``; it is run
unchanged under ``perfmodel record``. Configurations: 1 or 2 workers × 1 or 2 threads ×
two memory limits per worker. A pair is (baseline run → target configuration): perfmodel
predicts the target's runtime from the baseline's bundle (``--workers/--threads/--mem``
what-if, the facade's ``predict``); the slot-only replay re-schedules the baseline's
observed task durations on the target's threads. The measured runtime is the target run's
own, from its first graph submission to its last result received. Errors are
|predicted − measured| / measured. The 1-minute load average is kept before each run.

With ``--repeat N`` every configuration runs N times, in N rounds of all configurations (so
that a drift of the machine is spread over them): a configuration's measured runtime is the
median of its runs, and it predicts the others from its median run's bundle. The report then
says how far the same configuration's runs lie from each other (the mean of |t_i − t_j| /
t_j over its ordered pairs of runs): the error a prediction of one run cannot go below. On
this 2-core machine single runs of the study's workloads differ by 11% on average (three runs
more of each 1 GiB configuration, 2026-11-29), more than the 10% the study is judged by.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class Config:
    workers: int
    threads: int
    memory: str

    @property
    def name(self) -> str:
        return f"w{self.workers}t{self.threads}m{self.memory}"

    @property
    def slots(self) -> int:
        return self.workers * self.threads


@dataclass
class Run:
    workload: str
    config: Config
    bundle: str
    exit_code: int
    load_before: float
    load_after: float
    wall_s: float
    repeat: int = 1
    """Which of the configuration's runs (1 to ``--repeat``)."""


@dataclass
class Pair:
    workload: str
    baseline: str
    target: str
    direction: str
    measured_s: float
    predicted_s: float
    slot_only_s: float
    model_error: float
    low_s: float = float("nan")
    high_s: float = float("nan")
    """The prediction's 80% interval."""
    widening: float = 0.0
    """The prediction's own widening (self-check error, unknown time), which a calibration
    takes out of its residual (`perfmodel.simulate.intervals.residual_core`)."""
    scale: dict[str, float] = field(default_factory=dict)
    """Target ÷ baseline per dimension (`perfmodel.simulate.intervals.scale_factors`)."""

    @property
    def error(self) -> float:
        return abs(self.predicted_s - self.measured_s) / self.measured_s

    @property
    def slot_error(self) -> float:
        return abs(self.slot_only_s - self.measured_s) / self.measured_s

    @property
    def covered(self) -> bool:
        return self.low_s <= self.measured_s <= self.high_s


def configs(memories: list[str], limit: int | None) -> list[Config]:
    grid = [Config(w, t, m) for m in memories for w, t in itertools.product((1, 2), (1, 2))]
    return grid[:limit] if limit else grid


def direction(base: Config, target: Config) -> str:
    """How the target differs: more or fewer threads in all, the same threads split
    differently (workers × threads), or memory only."""
    if target.slots > base.slots:
        return "more threads"
    if target.slots < base.slots:
        return "fewer threads"
    if (target.workers, target.threads) != (base.workers, base.threads):
        return "same threads, other split"
    return "memory only"


def load_average() -> float:
    return os.getloadavg()[0]


def record(
    workload: Path, config: Config, scale: float, out: Path, perfmodel: str, repeat: int = 1
) -> Run:
    name = config.name if repeat == 1 else f"{config.name}-run{repeat}"
    bundle = out / "bundles" / workload.stem / name
    if bundle.exists():
        raise SystemExit(f"{bundle} exists: use a fresh --out (runs are never overwritten)")
    bundle.parent.mkdir(parents=True, exist_ok=True)
    before = load_average()
    began = time.time()
    command = [perfmodel, "record", "--out", str(bundle), "--"]
    command += [sys.executable, str(workload), "--workers", str(config.workers)]
    command += ["--threads", str(config.threads), "--memory", config.memory]
    command += ["--scale", str(scale)]
    done = subprocess.run(command, capture_output=True, text=True)
    (bundle.parent / f"{name}.log").write_text(done.stdout + done.stderr)
    return Run(
        workload.stem,
        config,
        str(bundle),
        done.returncode,
        before,
        load_average(),
        time.time() - began,
        repeat,
    )


def runtimes(runs: list[Run]) -> dict[str, float]:
    """Each run's measured runtime (s), by bundle: what its recording's event log spans."""
    import perfmodel

    return {
        r.bundle: perfmodel.load(r.bundle, code_vectors=False).profile.duration_ms / 1000.0
        for r in runs
    }


def by_config(runs: list[Run]) -> dict[Config, list[Run]]:
    """The runs of each configuration, in the order given."""
    out: dict[Config, list[Run]] = {}
    for r in runs:
        out.setdefault(r.config, []).append(r)
    return out


def median_runs(runs: list[Run], seconds: dict[str, float]) -> dict[Config, tuple[Run, float]]:
    """Per configuration, the run whose runtime is the median of its runs (the lower of the
    middle two for an even count) and that median."""
    out = {}
    for config, group in by_config(runs).items():
        ordered = sorted(group, key=lambda r: seconds[r.bundle])
        middle = ordered[(len(ordered) - 1) // 2]
        out[config] = (middle, statistics.median(seconds[r.bundle] for r in group))
    return out


def repeat_noise(runs: list[Run], seconds: dict[str, float]) -> list[float]:
    """|t_i − t_j| / t_j over every ordered pair of runs of one configuration."""
    return [
        abs(seconds[a.bundle] - seconds[b.bundle]) / seconds[b.bundle]
        for group in by_config(runs).values()
        for a, b in itertools.permutations(group, 2)
    ]


def predict_pairs(runs: list[Run], seconds: dict[str, float]) -> list[Pair]:
    """Every ordered pair of configurations of one workload: perfmodel's prediction and
    slot-only's, from the baseline's median run, against the target's median runtime."""
    import perfmodel
    from perfmodel.errors import PerfmodelError
    from perfmodel.simulate.config import WhatIf
    from perfmodel.simulate.intervals import scale_factors
    from perfmodel.simulate.units import parse_size

    medians = median_runs(runs, seconds)
    measured = {config: median for config, (_, median) in medians.items()}
    chosen = [run for run, _ in medians.values()]
    pairs = []
    for base in chosen:
        analysis = perfmodel.load(base.bundle)
        for target in chosen:
            if target is base:
                continue
            change = WhatIf(
                executors=target.config.workers,
                executor_cores=target.config.threads,
                memory_bytes=parse_size(target.config.memory),
            )
            try:
                prediction = analysis.predict(change)
                slot = analysis.slot_only_s(change)
            except PerfmodelError as exc:
                print(f"{base.workload} {base.config.name} → {target.config.name}: {exc}")
                continue
            pairs.append(
                Pair(
                    base.workload,
                    base.config.name,
                    target.config.name,
                    direction(base.config, target.config),
                    measured[target.config],
                    prediction.predicted_s,
                    slot,
                    prediction.model_error,
                    prediction.predicted_low_s,
                    prediction.predicted_high_s,
                    analysis.interval_widening(prediction),
                    scale_factors(prediction.baseline_config, prediction.config),
                )
            )
    return pairs


def summary(pairs: list[Pair]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Pair]] = {"all": pairs}
    for p in pairs:
        groups.setdefault(p.direction, []).append(p)
        groups.setdefault(p.workload, []).append(p)
    return {
        name: {
            "pairs": len(group),
            "mean_error": statistics.fmean(p.error for p in group),
            "slot_only_mean_error": statistics.fmean(p.slot_error for p in group),
            "worst_error": max(p.error for p in group),
            "interval_coverage": statistics.fmean(p.covered for p in group),
        }
        for name, group in groups.items()
        if group
    }


def markdown(result: dict) -> str:
    lines = [
        f"Dask what-if study, {result['date']} on {result['machine']}",
        f"command: `{result['command']}`",
        "",
    ]
    noise = result.get("repeat_noise")
    if noise:
        lines += [
            f"The same configuration's runs differ by {100 * noise['mean']:.1f}% on average "
            f"({noise['pairs']} ordered pairs of runs); measured runtimes are medians.",
            "",
        ]
    lines += [
        "| group | pairs | perfmodel mean error | slot-only mean error | worst "
        "| 80% interval covers |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, s in result["summary"].items():
        covers = s.get("interval_coverage")
        lines.append(
            f"| {name} | {s['pairs']} | {100 * s['mean_error']:.1f}% | "
            f"{100 * s['slot_only_mean_error']:.1f}% | {100 * s['worst_error']:.1f}% | "
            + (f"{100 * covers:.1f}% |" if covers is not None else "|")
        )
    lines += [
        "",
        "| workload | config | run | measured s | load before | load after |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['workload']} | {r['config']} | {r.get('repeat', 1)} | "
            f"{r.get('measured_s', float('nan')):.2f} | "
            f"{r['load_before']:.2f} | {r['load_after']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--workloads", type=Path, default=HERE / "workloads")
    ap.add_argument("--only", nargs="*", help="workload names (file stems) to run")
    ap.add_argument("--memory", nargs=2, default=["1GiB", "3GiB"], help="two memory limits")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--configs", type=int, default=None, help="first N configurations only")
    ap.add_argument("--perfmodel", default=str(Path(sys.executable).parent / "perfmodel"))
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs of each configuration (medians compared)"
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)
    runs_file = args.out / "runs.json"
    if args.report_only:
        runs = [
            Run(**{**r, "config": Config(**r["config"])}) for r in json.loads(runs_file.read_text())
        ]
    else:
        scripts = sorted(p for p in args.workloads.glob("*.py") if not p.name.startswith("_"))
        if args.only:
            scripts = [p for p in scripts if p.stem in args.only]
        runs = []
        for script in scripts:
            for repeat in range(1, args.repeat + 1):  # a round of every configuration
                for config in configs(args.memory, args.configs):
                    run = record(script, config, args.scale, args.out, args.perfmodel, repeat)
                    print(
                        f"{run.workload} {config.name} run {repeat}: exit {run.exit_code}, "
                        f"{run.wall_s:.1f} s, load {run.load_before:.2f}",
                        flush=True,
                    )
                    runs.append(run)
        runs_file.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    good = [r for r in runs if r.exit_code == 0]
    seconds = runtimes(good)
    pairs: list[Pair] = []
    noise: list[float] = []
    for name in sorted({r.workload for r in good}):
        of_workload = [r for r in good if r.workload == name]
        pairs += predict_pairs(of_workload, seconds)
        noise += repeat_noise(of_workload, seconds)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_at_report": os.getloadavg(),
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.platform()}",
        "command": " ".join(sys.argv),
        "summary": summary(pairs) if pairs else {},
        "repeat_noise": {"mean": statistics.fmean(noise), "pairs": len(noise)} if noise else None,
        "runs": [
            {
                **asdict(r),
                "config": r.config.name,
                "measured_s": seconds.get(r.bundle, float("nan")),
            }
            for r in runs
        ],
        "pairs": [
            asdict(p) | {"error": p.error, "slot_error": p.slot_error, "covered": p.covered}
            for p in pairs
        ],
    }
    (args.out / "study.json").write_text(json.dumps(result, indent=1))
    (args.out / "study.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
