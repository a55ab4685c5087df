"""The text renderer: what the commands print on a terminal.

Rich tables where a result is tabular (a diagnosis, a recommendation, a fleet summary),
plain lines elsewhere; collapsed stacks for stack profiles. Piped output is not wrapped at
80 columns: each command's tables get a fixed width instead. Everything taken from a log or
a store (names, messages, paths) is data, never markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console

from perfmodel.report.base import ProfileSource, Renderer, Stacks
from perfmodel.report.flame import collapsed, merged
from perfmodel.report.text.cluster import render_cluster_status
from perfmodel.report.text.code import (
    render_classifications,
    render_corpus_stats,
    render_located,
    render_training,
)
from perfmodel.report.text.fleet import render_summary
from perfmodel.report.text.recommendation import render_recommendation
from perfmodel.report.text.runs import (
    render_comparison,
    render_experiment_runs,
    render_run,
    render_runs,
)

if TYPE_CHECKING:
    from perfmodel.analysis import Prediction, SweepPoint
    from perfmodel.analysis.diagnosis import Diagnosis
    from perfmodel.analysis.watch import StageReport, WatchResult
    from perfmodel.embed.classifier import Classification
    from perfmodel.embed.corpus.builder import BuildResult
    from perfmodel.embed.source.locator import LocatedSource
    from perfmodel.embed.train import TrainResult
    from perfmodel.experiment.runner import RunReport
    from perfmodel.fleet.summary import FleetSummary
    from perfmodel.recommend.api import Recommendation
    from perfmodel.runs.rows import RunRow, Sample, StageRow
    from perfmodel.simulate.whatif import Change


def console_for(out: TextIO, *, piped_width: int | None = None, **options: Any) -> Console:
    """A rich console writing to ``out``: the terminal's width on a terminal, else
    ``piped_width`` columns (None: rich's default, 80)."""
    console = Console(file=out, **options)
    if piped_width is not None and not console.is_terminal:
        console = Console(file=out, width=piped_width, **options)
    return console


def _lines(lines: Iterable[str], out: TextIO) -> None:
    for line in lines:
        out.write(line + "\n")
    out.flush()


class TextRenderer(Renderer):
    """Text for people at a terminal (or reading a pipe)."""

    format = "text"

    # The diagnosis's and the predictions' forms are imported on use: they load the analysis
    # stack, which the text of a run list or a cluster's status need not wait for.

    def diagnosis(self, diagnosis: Diagnosis, out: TextIO, *, all_stages: bool = False) -> None:
        from perfmodel.report.text.diagnosis import render_diagnosis

        render_diagnosis(diagnosis, console_for(out, piped_width=120), all_stages=all_stages)

    def watch_stage(self, report: StageReport, out: TextIO) -> None:
        from perfmodel.report.text.watch import stage_lines

        _lines(stage_lines(report), out)

    def watch_end(self, result: WatchResult, out: TextIO) -> None:
        self.diagnosis(result.diagnosis, out)
        out.flush()

    def prediction(
        self, prediction: Prediction, out: TextIO, *, source: ProfileSource, change: Change
    ) -> None:
        from perfmodel.report.text.prediction import render_prediction

        _lines([render_prediction(prediction, source, change)], out)

    def sweep(self, points: Iterable[SweepPoint], out: TextIO, *, source: ProfileSource) -> None:
        from perfmodel.report.text.prediction import render_sweep

        # The table needs no stage: a point keeps its summary only, not the grid's stages.
        _lines([render_sweep([p.summary() for p in points], source)], out)

    def recommendation(self, answer: Recommendation, out: TextIO) -> None:
        render_recommendation(answer, console_for(out, piped_width=120, highlight=False))

    def fleet_summary(self, summary: FleetSummary, out: TextIO, *, out_dir: str = "") -> None:
        render_summary(summary, console_for(out, piped_width=140, highlight=False), out_dir)

    def stacks(self, profiles: Mapping[str, Stacks], out: TextIO, *, name: str) -> None:
        """Collapsed stacks (``root;child;leaf count``) of all profiles merged: what
        flamegraph.pl, speedscope and inferno read."""
        out.write(collapsed(merged(profiles)))

    def runs(self, rows: Sequence[RunRow], out: TextIO) -> None:
        _lines(render_runs(rows), out)

    def run_detail(
        self,
        run: RunRow,
        samples: Sequence[Sample],
        stages: Sequence[StageRow],
        out: TextIO,
    ) -> None:
        _lines(render_run(run, samples, stages), out)

    def run_comparison(
        self, runs: Sequence[RunRow], stages: Mapping[int, Sequence[StageRow]], out: TextIO
    ) -> None:
        _lines(render_comparison(runs, stages), out)

    def experiment_runs(self, name: str, reports: Sequence[RunReport], out: TextIO) -> None:
        _lines([render_experiment_runs(name, reports)], out)

    def cluster_status(self, status: Mapping[str, Any], out: TextIO) -> None:
        _lines(render_cluster_status(status), out)

    def classifications(
        self,
        results: Sequence[Classification],
        out: TextIO,
        *,
        classes: Sequence[str],
        explain: bool = False,
    ) -> None:
        render_classifications(results, Console(file=out), classes, explain)

    def located_sources(
        self, results: Sequence[LocatedSource], out: TextIO, *, ast: bool = False
    ) -> None:
        render_located(results, Console(file=out))

    def corpus_stats(self, result: BuildResult, out: TextIO, *, split: Path) -> None:
        render_corpus_stats(result, Console(file=out), split)

    def training(self, result: TrainResult, out: TextIO) -> None:
        render_training(result, Console(file=out))
