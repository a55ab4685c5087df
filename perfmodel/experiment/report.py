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
from perfmodel.experiment.held_out import describe_pair
from perfmodel.experiment.results import AccuracyReport
from perfmodel.experiment.samplers import render_sampler_comparison
from perfmodel.experiment.what_if_kind import render_kinds
from perfmodel.simulate.units import format_share as pct

if TYPE_CHECKING:
    from perfmodel.report.html.data import Page


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
    lines += render_held_out(report)
    lines += render_sampler_comparison(report)
    lines += render_kinds(report.kinds)
    lines += [
        "",
        "Error = |predicted − measured| ÷ measured application runtime (event log start to "
        "end), for every pair (baseline run → other configuration). *Slot-only* replays the "
        "same pairs with task durations unchanged (what Sparklens does). *Repeat error* is "
        "the noise floor: the error of taking another run of the same configuration as the "
        "prediction (n/a with one run per configuration).",
        "",
        f"| workload |{' set |' if report.split else ''} pairs | mean error | worst error "
        "| slot-only mean | slot-only worst | repeat error | bottlenecks named |",
        f"|---|{'---|' if report.split else ''}---:|---:|---:|---:|---:|---:|---|",
    ]
    for w in report.workloads:
        role = f" {w.role} |" if report.split else ""
        lines.append(
            f"| {w.workload} |{role} {w.pairs} | {pct(w.mean_error)} | {pct(w.worst_error)} | "
            f"{pct(w.slot_only_mean_error)} | {pct(w.slot_only_worst_error)} | "
            f"{pct(w.repeat_error)} | {', '.join(w.bottlenecks)} |"
        )
    lines.append(
        f"| **all** |{' |' if report.split else ''} {len(report.pairs)} | "
        f"**{pct(report.mean_error)}** | "
        f"{pct(report.worst_error)} | {pct(report.slot_only_mean_error)} | "
        f"{pct(report.slot_only_worst_error)} | {pct(report.repeat_error)} | |"
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
            f"{p.measured_s:.1f}{sd} | {p.predicted_s:.1f} | {pct(p.error)} | "
            f"{p.slot_only_s:.1f} | {pct(p.slot_only_error)} | {p.bottleneck} | "
            f"{100 * p.baseline_model_error:+.1f}% |"
        )
    if report.skipped:
        lines += ["", "Not used:", ""] + [f"- {s}" for s in report.skipped]
    return "\n".join(lines) + "\n"


def render_held_out(report: AccuracyReport) -> list[str]:
    """The study's table: for each side of the split, held-out first, the error of each way of
    reading the baseline (bare log, bundle, bundle without code vectors, slot-only), the worst
    pair and interval coverage. Nothing without a split."""
    if not report.split:
        return []
    lines = [
        "",
        f"### By the held-out split (`{report.split}`)",
        "",
        *([f"Rule: {report.split_rule}", ""] if report.split_rule else []),
        "Mean error per way of reading each baseline run: its event log alone (*bare log*), "
        "its bundle as `perfmodel predict` reads it (*bundle*), the bundle with "
        "`--no-code-vectors`, and the slot-only replay. *Interval coverage*: share of "
        "measured runtimes inside the predicted 80% interval, of the bundle's prediction and "
        "(*bare-log coverage*) of the bare log's.",
        "",
        "| workloads | set | pairs | bare log | bundle | bundle, no code vectors | slot-only "
        "| worst pair | interval coverage | bare-log coverage |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    by_name = {w.workload: w for w in report.workloads}
    for group in report.groups:
        for name in group.workloads:
            w = by_name[name]
            worst = max((p for p in report.pairs if p.workload == name), key=lambda p: p.error)
            lines.append(
                f"| {name} | {group.role} | {w.pairs} | {pct(w.bare_log_mean_error)} | "
                f"{pct(w.mean_error)} | {pct(w.no_code_vectors_mean_error)} | "
                f"{pct(w.slot_only_mean_error)} | {describe_pair(worst)} | "
                f"{pct(w.interval_coverage)} | {pct(w.bare_log_interval_coverage)} |"
            )
        lines.append(
            f"| **all {group.role}** | {group.role} | {group.pairs} | "
            f"{pct(group.bare_log_mean_error)} | **{pct(group.mean_error)}** | "
            f"{pct(group.no_code_vectors_mean_error)} | {pct(group.slot_only_mean_error)} | "
            f"{group.worst_pair or 'n/a'} | {pct(group.interval_coverage)} | "
            f"{pct(group.bare_log_interval_coverage)} |"
        )
    missing = [f"{name} ({g.role})" for g in report.groups for name in g.missing]
    if missing:
        lines += ["", f"In the split but without pairs here: {', '.join(missing)}."]
    return lines


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
            "value": pct(report.mean_error),
            "detail": f"worst {pct(report.worst_error)}",
        },
        {
            "key": "slot_only",
            "label": "Slot-only mean error",
            "value": pct(report.slot_only_mean_error),
            "detail": f"worst {pct(report.slot_only_worst_error)}",
        },
        {
            "key": "repeat_error",
            "label": "Repeat error (noise floor)",
            "value": pct(report.repeat_error),
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
                        pct(w.mean_error),
                        pct(w.worst_error),
                        pct(w.slot_only_mean_error),
                        pct(w.repeat_error),
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
                        pct(p.error),
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
