"""``accuracy.html``: the accuracy report as the same kind of page as an application's, made
of the same section kinds (cards, scatter, table), so one script draws both."""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfmodel.report.html.data import Page, Section
from perfmodel.simulate.units import format_share as pct

if TYPE_CHECKING:
    from perfmodel.experiment.results import AccuracyReport


def accuracy_page(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> Page:
    """Measured against predicted per configuration, on the same kind of page as
    `perfmodel report` (the same section kinds: cards, scatter, table)."""
    page = Page(
        title="Accuracy: predicted vs measured runtime",
        subtitle=f"{report.runs} runs measured {report.measured_where.replace('`', '')} · "
        f"model {report.model_version} · report made {report.created} on {report.host}",
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
