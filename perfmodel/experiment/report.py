"""Rendering the accuracy report: a Markdown table for people, JSON for programs.

The Markdown is what goes into the README's "Accuracy" section, so it carries its own
context — date, machine, load, model version — because an error figure without the
conditions it was measured under cannot be compared with anything.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from perfmodel.atomic import write_atomically
from perfmodel.experiment.accuracy import AccuracyReport

if TYPE_CHECKING:
    from perfmodel.report.html.data import Page


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def render_markdown(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> str:
    """The accuracy tables: per workload, overall, then every pair."""
    lines = [
        "## Accuracy: predicted vs measured runtime",
        "",
        f"Measured {report.created} on `{report.host}` ({report.machine}, {report.cores} "
        f"logical cores); model {report.model_version}; {report.runs} measured runs.",
    ]
    if run_load:
        lines.append(
            f"1-minute load average at run starts: {run_load[0]:.2f}–{run_load[1]:.2f} "
            f"(the machine was shared; timings carry that noise)."
        )
    lines += [
        "",
        "Error = |predicted − measured| ÷ measured application runtime (event log start to "
        "end), for every pair (baseline run → other configuration). *Slot-only* replays the "
        "same pairs with task durations unchanged (what Sparklens does). *Repeat error* is "
        "the noise floor: the error of taking another run of the same configuration as the "
        "prediction (n/a with one run per configuration).",
        "",
        "| workload | pairs | mean error | worst error | slot-only mean | slot-only worst "
        "| repeat error | bottlenecks named |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for w in report.workloads:
        lines.append(
            f"| {w.workload} | {w.pairs} | {_pct(w.mean_error)} | {_pct(w.worst_error)} | "
            f"{_pct(w.slot_only_mean_error)} | {_pct(w.slot_only_worst_error)} | "
            f"{_pct(w.repeat_error)} | {', '.join(w.bottlenecks)} |"
        )
    lines.append(
        f"| **all** | {len(report.pairs)} | **{_pct(report.mean_error)}** | "
        f"{_pct(report.worst_error)} | {_pct(report.slot_only_mean_error)} | "
        f"{_pct(report.slot_only_worst_error)} | {_pct(report.repeat_error)} | |"
    )
    lines += [
        "",
        "### Every pair",
        "",
        "| workload | baseline (run) | target | measured s | predicted s | error "
        "| slot-only s | slot-only error | bottleneck | baseline replay error |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for p in report.pairs:
        sd = f" ± {p.measured_sd_s:.1f}" if p.measured_sd_s else ""
        lines.append(
            f"| {p.workload} | {p.baseline_config} ({p.baseline_run}) | {p.target_config} | "
            f"{p.measured_s:.1f}{sd} | {p.predicted_s:.1f} | {_pct(p.error)} | "
            f"{p.slot_only_s:.1f} | {_pct(p.slot_only_error)} | {p.bottleneck} | "
            f"{100 * p.baseline_model_error:+.1f}% |"
        )
    if report.skipped:
        lines += ["", "Not used:", ""] + [f"- {s}" for s in report.skipped]
    return "\n".join(lines) + "\n"


def write_report(
    report: AccuracyReport, out: Path, run_load: tuple[float, float] | None = None
) -> tuple[Path, Path]:
    """Write ``accuracy.md`` and ``accuracy.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    md = out / "accuracy.md"
    write_atomically(md, render_markdown(report, run_load))
    js = out / "accuracy.json"
    write_atomically(js, to_json(report, run_load))
    return md, js


def to_json(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> str:
    """The report as strict JSON (NaN, for "no pairs", becomes null)."""
    payload = report.as_dict()
    payload["run_load_avg_range"] = list(run_load) if run_load else None
    return json.dumps(_finite(payload), indent=2)


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def html_page(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> Page:
    """Measured against predicted per configuration, on the same kind of page as
    `perfmodel report` (the same section kinds: cards, scatter, table)."""
    from perfmodel.report.html.data import Page, Section

    page = Page(
        title="Accuracy: predicted vs measured runtime",
        subtitle=f"{report.runs} measured runs on {report.host} ({report.machine}, "
        f"{report.cores} logical cores) · model {report.model_version} · {report.created}",
    )
    load_text = (
        f"1-minute load average at run starts {run_load[0]:.2f}–{run_load[1]:.2f}"
        if run_load
        else ""
    )
    cards = [
        {"key": "runs", "label": "Runs", "value": report.runs, "detail": load_text},
        {"key": "pairs", "label": "Pairs", "value": len(report.pairs), "detail": ""},
        {
            "key": "mean_error",
            "label": "Mean error",
            "value": _pct(report.mean_error),
            "detail": f"worst {_pct(report.worst_error)}",
        },
        {
            "key": "slot_only",
            "label": "Slot-only mean error",
            "value": _pct(report.slot_only_mean_error),
            "detail": f"worst {_pct(report.slot_only_worst_error)}",
        },
        {
            "key": "repeat_error",
            "label": "Repeat error (noise floor)",
            "value": _pct(report.repeat_error),
            "detail": "",
        },
    ]
    page.sections.append(Section("summary", "Summary", "cards", {"cards": cards}))
    labels = [
        f"{p.workload}: {p.baseline_config} (run {p.baseline_run}) → {p.target_config}"
        for p in report.pairs
    ]
    page.sections.append(
        Section(
            "pairs-plot",
            "Measured against predicted",
            "scatter",
            {
                "x_label": "measured runtime (s)",
                "y_label": "predicted runtime (s)",
                "diagonal": True,
                "series": [
                    {
                        "name": "replay",
                        "x": [p.measured_s for p in report.pairs],
                        "y": [p.predicted_s for p in report.pairs],
                        "labels": labels,
                    },
                    {
                        "name": "slot-only",
                        "x": [p.measured_s for p in report.pairs],
                        "y": [p.slot_only_s for p in report.pairs],
                        "labels": labels,
                    },
                ],
            },
            "Each point is one baseline run replayed on another configuration; on the dotted "
            "line the prediction equals the measured mean.",
        )
    )
    page.sections.append(
        Section(
            "workloads",
            "Per workload",
            "table",
            {
                "columns": [
                    "workload",
                    "pairs",
                    "mean error",
                    "worst error",
                    "slot-only mean",
                    "repeat error",
                    "bottlenecks",
                ],
                "numeric": [False, True, True, True, True, True, False],
                "rows": [
                    [
                        w.workload,
                        w.pairs,
                        _pct(w.mean_error),
                        _pct(w.worst_error),
                        _pct(w.slot_only_mean_error),
                        _pct(w.repeat_error),
                        ", ".join(w.bottlenecks),
                    ]
                    for w in report.workloads
                ],
            },
        )
    )
    page.sections.append(
        Section(
            "every-pair",
            "Every pair",
            "table",
            {
                "columns": [
                    "workload",
                    "baseline (run)",
                    "target",
                    "measured s",
                    "predicted s",
                    "error",
                    "slot-only s",
                    "bottleneck",
                    "baseline replay error",
                ],
                "numeric": [False, False, False, True, True, True, True, False, True],
                "rows": [
                    [
                        p.workload,
                        f"{p.baseline_config} ({p.baseline_run})",
                        p.target_config,
                        round(p.measured_s, 1),
                        round(p.predicted_s, 1),
                        _pct(p.error),
                        round(p.slot_only_s, 1),
                        p.bottleneck,
                        f"{100 * p.baseline_model_error:+.1f}%",
                    ]
                    for p in report.pairs
                ],
            },
        )
    )
    if report.skipped:
        page.sections.append(
            Section("skipped", "Not used", "list", {"items": list(report.skipped)})
        )
    return page
