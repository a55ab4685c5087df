"""The renderer interface: one method per kind of result, one class per output format.

A command computes its result through the library (the facade, `recommend`, `fleet`,
`experiment`) and hands it to the renderer the user chose (``--json``, ``report``'s HTML,
``flame``'s speedscope), as pyinstrument's renderers and memray's reporters take one
profiling session. Each format implements the kinds it has a form for; asking a format for
a kind it has none for raises `UnsupportedFormatError`, which names the kinds it renders.

Every method writes to a text stream: a command passes ``sys.stdout``, and `render_to_file`
gives a file that appears whole or not at all. Streams let the JSON renderer write a large
document member by member (a sweep point by point) instead of building it in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from perfmodel.atomic import replacing
from perfmodel.errors import PerfmodelError

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis, Prediction, SweepPoint
    from perfmodel.analysis.diagnosis import Diagnosis
    from perfmodel.analysis.watch import StageReport, WatchResult
    from perfmodel.embed.classifier import Classification
    from perfmodel.embed.corpus.builder import BuildResult
    from perfmodel.embed.source.locator import LocatedSource
    from perfmodel.embed.train import TrainResult
    from perfmodel.experiment.results import AccuracyReport
    from perfmodel.experiment.runner import RunReport
    from perfmodel.experiment.settings_study import SettingsReport
    from perfmodel.fleet.summary import FleetSummary
    from perfmodel.recommend.api import Recommendation
    from perfmodel.runs.rows import RunRow, Sample, StageRow
    from perfmodel.simulate.whatif import Change

Stacks = Mapping[tuple[str, ...], int]
"""Root-first stacks with their sample counts (`perfmodel.analysis.Analysis.stack_profiles`)."""


class UnknownFormatError(PerfmodelError):
    """A format name that no renderer has."""


class UnsupportedFormatError(PerfmodelError):
    """A format asked for a kind of result it has no form for (a sweep as HTML)."""


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """The profile a prediction replayed, as the reader should see it named: ``path``, and
    whether it is the one `perfmodel diagnose` last analysed, taken because none was given
    (``remembered``)."""

    path: str
    remembered: bool = False


KINDS: dict[str, str] = {
    "diagnosis": "a diagnosis",
    "watch_stage": "a stage of a followed application",
    "watch_end": "the end of following an application",
    "prediction": "a prediction",
    "sweep": "a sweep",
    "recommendation": "a recommendation",
    "fleet_summary": "a fleet summary",
    "accuracy": "an accuracy report",
    "settings_study": "a settings study",
    "application": "an application page",
    "stacks": "stack profiles",
    "records": "plain records",
    "runs": "a list of runs",
    "run_detail": "one run",
    "run_comparison": "a comparison of runs",
    "experiment_runs": "the runs of an experiment",
    "cluster_status": "a cluster's status",
    "classifications": "classified frames",
    "located_sources": "located sources",
    "corpus_stats": "corpus statistics",
    "training": "a training run's scores",
}
"""Every method of `Renderer` that renders a result, and how an error message names it."""


class Renderer:
    """Base of every output format: each method renders one kind of result to ``out``.

    A subclass overrides the methods its format has a form for; the others raise
    `UnsupportedFormatError`. The keyword arguments are context a form may use (the text
    form of a diagnosis can list every stage; the JSON form has them all anyway).
    """

    format: ClassVar[str] = ""

    def diagnosis(self, diagnosis: Diagnosis, out: TextIO, *, all_stages: bool = False) -> None:
        """`perfmodel.analysis.diagnosis.Diagnosis`; ``all_stages``: not only the longest."""
        self._unsupported("diagnosis")

    def watch_stage(self, report: StageReport, out: TextIO) -> None:
        """`perfmodel.analysis.watch.StageReport`: one stage attempt of a followed
        application, with its findings, written (and flushed) as it completes."""
        self._unsupported("watch_stage")

    def watch_end(self, result: WatchResult, out: TextIO) -> None:
        """`perfmodel.analysis.watch.WatchResult`: the diagnosis of what following an
        application read, and why it stopped."""
        self._unsupported("watch_end")

    def prediction(
        self, prediction: Prediction, out: TextIO, *, source: ProfileSource, change: Change
    ) -> None:
        """One what-if replay, with the profile it replayed and the change asked for."""
        self._unsupported("prediction")

    def sweep(self, points: Iterable[SweepPoint], out: TextIO, *, source: ProfileSource) -> None:
        """A grid of what-ifs, rendered as the points come (``points`` may be a generator
        that replays each point when asked for it)."""
        self._unsupported("sweep")

    def recommendation(self, answer: Recommendation, out: TextIO) -> None:
        """`perfmodel.recommend.api.Recommendation`: the cheapest configurations found."""
        self._unsupported("recommendation")

    def fleet_summary(self, summary: FleetSummary, out: TextIO, *, out_dir: str = "") -> None:
        """`perfmodel.fleet.summary.FleetSummary`; ``out_dir``: where the tables are."""
        self._unsupported("fleet_summary")

    def accuracy(
        self,
        report: AccuracyReport,
        out: TextIO,
        *,
        run_load: tuple[float, float] | None = None,
    ) -> None:
        """`perfmodel.experiment.results.AccuracyReport`; ``run_load``: the range of the
        1-minute load average when the runs started."""
        self._unsupported("accuracy")

    def settings_study(self, report: SettingsReport, out: TextIO) -> None:
        """`perfmodel.experiment.settings_study.SettingsReport`: settings what-ifs measured
        against runs (``perfmodel experiment settings``)."""
        self._unsupported("settings_study")

    def application(self, analysis: Analysis, out: TextIO) -> None:
        """Everything about one application, as one page."""
        self._unsupported("application")

    def stacks(self, profiles: Mapping[str, Stacks], out: TextIO, *, name: str) -> None:
        """Sampled stacks per profile (process kind), for flame-graph tools."""
        self._unsupported("stacks")

    def records(self, value: Any, out: TextIO, *, indent: int | None = 2) -> None:
        """Plain data (dicts, lists, numbers, text) as it is."""
        self._unsupported("records")

    def runs(self, rows: Sequence[RunRow], out: TextIO) -> None:
        """Stored runs (`perfmodel runs list`)."""
        self._unsupported("runs")

    def run_detail(
        self,
        run: RunRow,
        samples: Sequence[Sample],
        stages: Sequence[StageRow],
        out: TextIO,
    ) -> None:
        """One stored run with its resource time series and stages (`perfmodel runs show`)."""
        self._unsupported("run_detail")

    def run_comparison(
        self, runs: Sequence[RunRow], stages: Mapping[int, Sequence[StageRow]], out: TextIO
    ) -> None:
        """Runs side by side, ``stages`` by run id (`perfmodel runs compare`)."""
        self._unsupported("run_comparison")

    def experiment_runs(self, name: str, reports: Sequence[RunReport], out: TextIO) -> None:
        """What `perfmodel experiment run` ran of experiment ``name``."""
        self._unsupported("experiment_runs")

    def cluster_status(self, status: Mapping[str, Any], out: TextIO) -> None:
        """`perfmodel.experiment.cluster.status`: what exists of a cluster."""
        self._unsupported("cluster_status")

    def classifications(
        self,
        results: Sequence[Classification],
        out: TextIO,
        *,
        classes: Sequence[str],
        explain: bool = False,
    ) -> None:
        """Resource vectors of frames or functions (`perfmodel classify`); ``classes``: the
        models' resource classes, in order; ``explain``: with the source, doc and each
        model's vector."""
        self._unsupported("classifications")

    def located_sources(
        self, results: Sequence[LocatedSource], out: TextIO, *, ast: bool = False
    ) -> None:
        """The source found for each frame (`perfmodel corpus locate`); ``ast``: with its AST."""
        self._unsupported("located_sources")

    def corpus_stats(self, result: BuildResult, out: TextIO, *, split: Path) -> None:
        """What `perfmodel corpus build` made; ``split``: the split file it extended."""
        self._unsupported("corpus_stats")

    def training(self, result: TrainResult, out: TextIO) -> None:
        """The trained models' scores on the held-out packages (`perfmodel train`)."""
        self._unsupported("training")

    def _unsupported(self, kind: str) -> None:
        forms = ", ".join(KINDS[k] for k in self.kinds())
        raise UnsupportedFormatError(
            f"the {self.format} format has no form for {KINDS[kind]} "
            f"({self.format} renders {forms or 'nothing'})"
        )

    @classmethod
    def kinds(cls) -> list[str]:
        """The kinds of result this format has a form for, in `KINDS` order."""
        return [k for k in KINDS if getattr(cls, k) is not getattr(Renderer, k)]


def render_to_file(path: Path, draw: Callable[[TextIO], object], *, overwrite: bool = True) -> Path:
    """Write what ``draw`` writes to the stream it is given into ``path`` (UTF-8, its parent
    made if missing), whole or not at all: a reader never sees half a page, and a failed
    rendering leaves the old file. Only a missing path or a regular file is written
    (`perfmodel.atomic.check_output`: never a device, FIFO, directory or link); an existing
    file is replaced only with ``overwrite``. The check comes before ``draw`` runs, so a
    refused path costs no rendering."""
    path = Path(path)
    with replacing(path, overwrite=overwrite) as tmp, tmp.open("w", encoding="utf-8") as f:
        draw(f)
    return path
