"""The HTML renderer: one self-contained page per result that has one (an application, an
accuracy report, a fleet summary). Nothing on a page is fetched: it opens offline."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from perfmodel.report.base import Renderer
from perfmodel.report.html.accuracy import accuracy_page
from perfmodel.report.html.data import application_page
from perfmodel.report.html.fleet import fleet_page
from perfmodel.report.html.page import render_html

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis
    from perfmodel.experiment.results import AccuracyReport
    from perfmodel.fleet.summary import FleetSummary


class HtmlRenderer(Renderer):
    """HTML pages: `perfmodel report`, ``experiment report --html``, fleet's summary.html."""

    format = "html"

    def application(self, analysis: Analysis, out: TextIO) -> None:
        """Summary, timeline, stage DAG, stages, flames, what-if and findings (docs/report.md)."""
        out.write(render_html(application_page(analysis)))

    def accuracy(
        self,
        report: AccuracyReport,
        out: TextIO,
        *,
        run_load: tuple[float, float] | None = None,
    ) -> None:
        """Measured against predicted per configuration, per workload and per pair."""
        out.write(render_html(accuracy_page(report, run_load)))

    def fleet_summary(self, summary: FleetSummary, out: TextIO, *, out_dir: str = "") -> None:
        """Inline CSS and SVG bars, no script (summary.html, docs/fleet.md)."""
        out.write(fleet_page(summary))
