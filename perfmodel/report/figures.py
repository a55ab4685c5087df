"""A validation study's figures (matplotlib, Agg backend: no display needed), drawn from what
`perfmodel.experiment.plots` computes.

* ``runtime-<workload>``: measured application runtime against task slots and against heap,
  with the prediction curves replayed from each configuration's first run (solid) and the
  slot-only replay (dashed).
* ``stages-<workload>``: per stage, task-seconds split by resource component (the baseline
  replay of each configuration's first run), stacked.

Each figure is written as PNG and SVG.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from perfmodel.atomic import make_output_dir, replacing  # noqa: E402
from perfmodel.experiment.plots import WorkloadCurves  # noqa: E402

GIB = float(1 << 30)


def write_figures(workloads: Iterable[WorkloadCurves], out: Path) -> list[Path]:
    """Write both figures of every workload into ``out``; returns the files."""
    make_output_dir(out)
    written: list[Path] = []
    for w in workloads:
        written += runtime_figure(w, out)
        written += stage_figure(w, out)
    return written


def _save(fig: Figure, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for p in paths:
        with replacing(p) as tmp:  # a figure appears whole or not at all
            fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return paths


def runtime_figure(w: WorkloadCurves, out: Path) -> list[Path]:
    fig, (ax_c, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(w.configs):
        colour = colours[i % len(colours)]
        ax_c.plot(c.cores, c.predicted_s, "-", color=colour, label=f"predicted from {c.config}")
        ax_c.plot(
            c.cores,
            c.slot_only_s,
            "--",
            color=colour,
            alpha=0.6,
            label=f"slot-only from {c.config}",
        )
        ax_m.plot(
            [m / GIB for m in c.memory_bytes],
            c.predicted_by_memory_s,
            "-",
            color=colour,
            label=f"predicted from {c.config}",
        )
    for cores, memory, app_s in w.measured:
        ax_c.plot(cores, app_s, "ko", ms=5, alpha=0.7)
        ax_m.plot(memory / GIB, app_s, "ko", ms=5, alpha=0.7)
    ax_c.plot([], [], "ko", label="measured runs")
    ax_c.set(xlabel="task slots (local[N])", ylabel="application runtime (s)", title=w.name)
    ax_m.set(xlabel="heap (GiB)", ylabel="application runtime (s)", title=f"{w.name}: memory")
    ax_c.set_ylim(bottom=0)
    ax_m.set_ylim(bottom=0)
    ax_c.legend(fontsize=7)
    ax_m.legend(fontsize=7)
    return _save(fig, out, f"runtime-{w.name}")


def stage_figure(w: WorkloadCurves, out: Path) -> list[Path]:
    n = len(w.configs)
    fig, axes = plt.subplots(1, n, figsize=(4.5 * n, 4), squeeze=False, sharey=True)
    for ax, c in zip(axes[0], w.configs, strict=True):
        labels = [f"{stage}" + (f".{attempt}" if attempt else "") for stage, attempt in c.stages]
        bottom = [0.0] * len(labels)
        for comp, values in c.stage_component_s.items():
            if not any(values):
                continue
            ax.bar(labels, values, bottom=bottom, label=comp)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set(title=c.config, xlabel="stage")
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("task-seconds by component")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{w.name}: where each stage's task time goes")
    return _save(fig, out, f"stages-{w.name}")
