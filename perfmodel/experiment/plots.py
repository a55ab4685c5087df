"""Figures of a validation study (matplotlib, Agg backend: no display needed).

* ``runtime-<workload>``: measured application runtime against task slots and against heap,
  with the prediction curves replayed from each configuration's first run (solid) and the
  slot-only replay (dashed) — a reader sees where the model bends the way reality does.
* ``stages-<workload>``: per stage, task-seconds split by resource component (the baseline
  replay of each configuration's first run), stacked: which resource each stage spends on,
  and how that shifts between configurations (spill appearing with a small heap).

Each figure is written as PNG and SVG.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from perfmodel.analysis import COMPONENTS, Analysis  # noqa: E402
from perfmodel.atomic import replacing  # noqa: E402
from perfmodel.errors import PerfmodelError  # noqa: E402
from perfmodel.experiment.accuracy import (  # noqa: E402
    group_key,
    load_baseline,
    predict,
    slot_only,
)
from perfmodel.runs.store import RunRow  # noqa: E402

GIB = float(1 << 30)
MEMORY_SWEEP = [512 << 20, 768 << 20, 1 << 30, 3 << 29, 2 << 30, 3 << 30, 4 << 30]


def _save(fig: plt.Figure, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for p in paths:
        with replacing(p) as tmp:  # a figure appears whole or not at all
            fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return paths


def _first_per_config(runs: list[RunRow]) -> dict[str, RunRow]:
    firsts: dict[str, RunRow] = {}
    for r in runs:
        firsts.setdefault(r.config, r)
    return firsts


def plot_all(runs: list[RunRow], out: Path) -> list[Path]:
    """Write every figure for the successful measured ``runs``; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    usable = [r for r in runs if r.status == "ok" and not r.warmup and r.app_s and r.bundle_path]
    groups: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    for r in usable:
        groups[group_key(r)].append(r)
    per_workload: dict[str, int] = defaultdict(int)
    written: list[Path] = []
    for _key, wruns in sorted(groups.items()):
        workload = wruns[0].workload
        per_workload[workload] += 1
        if per_workload[workload] > 1:  # the same workload with other parameters
            workload = f"{workload}-{per_workload[workload]}"
        loaded: dict[str, tuple[RunRow, Analysis]] = {}
        for name, run in _first_per_config(wruns).items():
            try:
                loaded[name] = (run, load_baseline(str(run.bundle_path)))
            except (PerfmodelError, OSError):
                continue
        if not loaded:
            continue
        written += runtime_figure(workload, wruns, loaded, out)
        written += stage_figure(workload, loaded, out)
    return written


def runtime_figure(
    workload: str,
    runs: list[RunRow],
    loaded: dict[str, tuple[RunRow, Analysis]],
    out: Path,
) -> list[Path]:
    fig, (ax_c, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
    max_cores = max([r.cores or 1 for r in runs] + [2])
    core_axis = list(range(1, 2 * max_cores + 1))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, (run, lb)) in enumerate(sorted(loaded.items())):
        c = colours[i % len(colours)]
        mem = run.memory_bytes
        pred = [predict(lb, n, mem).predicted_s for n in core_axis]
        slots = [slot_only(lb, n, mem) for n in core_axis]
        ax_c.plot(core_axis, pred, "-", color=c, label=f"predicted from {name}")
        ax_c.plot(core_axis, slots, "--", color=c, alpha=0.6, label=f"slot-only from {name}")
        mems = sorted({*MEMORY_SWEEP, *(r.memory_bytes or (1 << 30) for r in runs)})
        pred_m = [predict(lb, run.cores, m).predicted_s for m in mems]
        ax_m.plot([m / GIB for m in mems], pred_m, "-", color=c, label=f"predicted from {name}")
    for r in runs:
        ax_c.plot(r.cores or 1, r.app_s, "ko", ms=5, alpha=0.7)
        ax_m.plot((r.memory_bytes or (1 << 30)) / GIB, r.app_s, "ko", ms=5, alpha=0.7)
    ax_c.plot([], [], "ko", label="measured runs")
    ax_c.set(xlabel="task slots (local[N])", ylabel="application runtime (s)", title=workload)
    ax_m.set(xlabel="heap (GiB)", ylabel="application runtime (s)", title=f"{workload}: memory")
    ax_c.set_ylim(bottom=0)
    ax_m.set_ylim(bottom=0)
    ax_c.legend(fontsize=7)
    ax_m.legend(fontsize=7)
    return _save(fig, out, f"runtime-{workload}")


def stage_figure(
    workload: str, loaded: dict[str, tuple[RunRow, Analysis]], out: Path
) -> list[Path]:
    n = len(loaded)
    fig, axes = plt.subplots(1, n, figsize=(4.5 * n, 4), squeeze=False, sharey=True)
    for ax, (name, (_run, lb)) in zip(axes[0], sorted(loaded.items()), strict=True):
        prediction = lb.predict()
        labels = [
            f"{s.stage_id}" + (f".{s.attempt}" if s.attempt else "") for s in prediction.stages
        ]
        bottom = [0.0] * len(labels)
        for comp in COMPONENTS:
            values = [s.component_s.get(comp, 0.0) for s in prediction.stages]
            if not any(values):
                continue
            ax.bar(labels, values, bottom=bottom, label=comp)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set(title=name, xlabel="stage")
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("task-seconds by component")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{workload}: where each stage's task time goes")
    return _save(fig, out, f"stages-{workload}")
