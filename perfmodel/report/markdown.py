"""The Markdown renderer: the accuracy report, as a table for people.

The Markdown is what goes into the README's "Accuracy" section, so it carries its own
context — date, machine, load, model version — because an error figure without the
conditions it was measured under cannot be compared with anything.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TextIO

from perfmodel.atomic import make_output_dir, write_atomically
from perfmodel.experiment.held_out import describe_pair
from perfmodel.experiment.results import AccuracyReport, KindAccuracy, ScaleAccuracy
from perfmodel.experiment.samplers import SamplerComparison, compare_samplers
from perfmodel.experiment.settings_study import SettingsReport, SettingsSummary
from perfmodel.experiment.what_if_kind import CORES
from perfmodel.report.base import Renderer
from perfmodel.report.jsonrenderer import accuracy_json
from perfmodel.simulate.units import format_share as pct


class MarkdownRenderer(Renderer):
    """Markdown: the accuracy report (`perfmodel experiment report`)."""

    format = "markdown"

    def accuracy(
        self,
        report: AccuracyReport,
        out: TextIO,
        *,
        run_load: tuple[float, float] | None = None,
    ) -> None:
        out.write(render_markdown(report, run_load) + "\n")

    def settings_study(self, report: SettingsReport, out: TextIO) -> None:
        out.write(render_settings_study(report))


def render_markdown(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> str:
    """The accuracy tables: per workload, overall, then every pair."""
    lines = [
        "## Accuracy: predicted vs measured runtime",
        "",
        f"{report.runs} runs measured {report.measured_where}; model {report.model_version}; "
        f"report made {report.created} on `{report.host}` ({report.machine}, {report.cores} "
        "logical cores).",
    ]
    if run_load:
        lines.append(
            f"1-minute load average at run starts: {run_load[0]:.2f}–{run_load[1]:.2f} "
            f"(the machine was shared; timings carry that noise)."
        )
    lines += render_held_out(report)
    lines += render_sampler_comparison(report)
    lines += render_kinds(report.kinds)
    lines += render_scales(report.scales, report.scale_steps)
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


def render_sampler_comparison(report: AccuracyReport) -> list[str]:
    """Markdown lines: per workload, the bundle's mean error read from JFR's samples and from
    the plugin's, on the same pairs; nothing where no run kept both."""
    rows = compare_samplers(report)
    if not rows:
        return []
    lines = [
        "",
        '### JVM samplers on the same runs (`jvm_sampler = "both"`)',
        "",
        "Each pair predicted from its baseline's bundle read from JFR's samples (the bundle as "
        "recorded) and from the plugin sampler's samples of the same run; the runs, event logs, "
        "per-thread CPU and Python samples are the same, so the difference is the samplers'. "
        "*Largest move*: the largest change of a prediction between the two readings.",
        "",
        "| workload | set | pairs | JFR samples | plugin samples | plugin − JFR, points "
        "| largest move |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    lines += [_sampler_row(c) for c in rows]
    return lines


def _sampler_row(c: SamplerComparison) -> str:
    label = f"**all{' ' + c.workload if c.workload else ''}**" if c.total else c.workload
    return (
        f"| {label} | {c.role} | {c.pairs} | {pct(c.jfr_mean_error)} | "
        f"{pct(c.plugin_mean_error)} | "
        f"{100 * c.plugin_minus_jfr:+.1f} | {100 * c.largest_move:.1f}% |"
    )


def render_kinds(kinds: list[KindAccuracy]) -> list[str]:
    """The Markdown table of errors per what-if kind (nothing when only one kind exists
    and it is plain cores, as in a local-mode study, where the overall table says it all)."""
    if not kinds or [k.kind for k in kinds] == [CORES]:
        return []
    lines = [
        "",
        "### By what-if kind",
        "",
        "Pairs grouped by the one resource their configurations differ in (*combined*: more "
        "than one). Mean error from the baseline's bundle, from its bare event log (n/a "
        "without `--variants`) and by slot-only replay. *Coverage*: share of the pairs whose "
        "measured runtime lies inside the predicted 80% interval, of the bundle's prediction "
        "and of the bare log's.",
        "",
        "| what-if | pairs | workloads | bundle | bare log | slot-only | worst pair "
        "| coverage, bundle | coverage, bare log |",
        "|---|---:|---|---:|---:|---:|---|---:|---:|",
    ]
    for k in kinds:
        lines.append(
            f"| {k.kind} | {k.pairs} | {', '.join(k.workloads)} | **{pct(k.mean_error)}** | "
            f"{pct(k.bare_log_mean_error)} | {pct(k.slot_only_mean_error)} | {k.worst_pair} | "
            f"{pct(k.interval_coverage)} | {pct(k.bare_log_interval_coverage)} |"
        )
    return lines


def _signed_pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}%"


def _scale_rows(rows: list[ScaleAccuracy], first: str) -> list[str]:
    lines = [
        f"| {first} | pairs | workloads | bundle | bare log | slot-only | bundle, signed | "
        "bare log, signed | slot-only, signed | worst pair |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in rows:
        if first == "step":
            label = ", ".join(s.steps)
        else:
            label = f"{s.factor:g}× {s.direction} ({', '.join(s.steps)})"
        lines.append(
            f"| {label} | {s.pairs} | {', '.join(s.workloads)} | **{pct(s.mean_error)}** | "
            f"{pct(s.bare_log_mean_error)} | {pct(s.slot_only_mean_error)} | "
            f"{_signed_pct(s.signed_mean_error)} | {_signed_pct(s.bare_log_signed_mean_error)} | "
            f"{_signed_pct(s.slot_only_signed_mean_error)} | {s.worst_pair} |"
        )
    return lines


def render_scales(scales: list[ScaleAccuracy], steps: list[ScaleAccuracy]) -> list[str]:
    """The Markdown tables of the worker-count pairs by scale factor and direction, then by
    step of executor counts (nothing without worker-count pairs)."""
    if not scales:
        return []
    lines = [
        "",
        "### Worker count by scale factor and direction",
        "",
        "The worker-count pairs grouped by the ratio of their executor counts (*out*: more "
        "executors at the target, *in*: fewer). Mean error from the baseline's bundle, from "
        "its bare event log (n/a without `--variants`) and by slot-only replay; *signed*: "
        "the mean of (predicted − measured) ÷ measured, the bias.",
        "",
        *_scale_rows(scales, "scale"),
        "",
        "By step of executor counts (baseline → target):",
        "",
        *_scale_rows(steps, "step"),
    ]
    return lines


def write_report(
    report: AccuracyReport, out: Path, run_load: tuple[float, float] | None = None
) -> tuple[Path, Path]:
    """Write ``accuracy.md`` and ``accuracy.json`` into ``out``."""
    make_output_dir(out)
    md = out / "accuracy.md"
    write_atomically(md, render_markdown(report, run_load))
    js = out / "accuracy.json"
    write_atomically(js, accuracy_json(report, run_load))
    return md, js


def render_settings_study(report: SettingsReport) -> str:
    """The study's table: mean error and the no-change error, over all pairs and over the
    pairs with a measured effect of at least `EFFECT`."""
    head = (
        "| | workloads | pairs | mean error | no-change error | pairs with ≥15% effect | "
        "mean error there | no-change error there | in 80% interval | repeat error | "
        "median-run pairs | median-run error | its no-change error |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )

    def row(s: SettingsSummary, name: str) -> str:
        return (
            f"| {name} | {', '.join(s.workloads)} | {s.pairs} | **{pct(s.mean_error)}** | "
            f"{pct(s.no_change_error)} | {s.effect_pairs} | **{pct(s.effect_mean_error)}** | "
            f"{pct(s.effect_no_change_error)} | {pct(s.coverage)} | {pct(s.repeat_error)} | "
            f"{s.median_pairs} | {pct(s.median_error)} | {pct(s.median_no_change_error)} |"
        )

    lines = [
        "## Settings what-if: predicted from bare event logs",
        "",
        "Every run of a workload predicts every other configuration of it from its bare event "
        "log (`perfmodel predict LOG --conf ...`). *No-change error*: the source run's own "
        "runtime taken as the target's. *Repeat error*: each run of a configuration taken as "
        "the mean of its repeats, the noise floor (n/a where each ran once). *Median-run "
        "error*: where configurations ran at least three times, each one's median run predicting "
        "the others' median runtimes, which takes most of that noise out. Split: "
        + (report.split or "none")
        + ".",
        "",
        head,
        *(row(g, g.label) for g in report.groups),
        "",
        "### By workload",
        "",
        head,
        *(row(w, w.label) for w in report.workloads),
    ]
    worst = sorted(report.pairs, key=lambda p: p.error, reverse=True)[:8]
    if worst:
        lines += ["", "### Largest errors", ""]
        for p in worst:
            signed = (p.predicted_s - p.measured_s) / p.measured_s
            lines.append(
                f"- {p.workload}: {p.source_config} (run {p.source_run}, {p.source_s:.1f} s) → "
                f"{p.target_config}: measured {p.measured_s:.1f} s, predicted "
                f"{p.predicted_s:.1f} s ({100 * signed:+.1f}%)"
            )
    if report.skipped:
        lines += ["", f"{len(report.skipped)} pair(s) or run(s) left out:", ""]
        lines += [f"- {s}" for s in report.skipped[:30]]
    return "\n".join(lines) + "\n"
