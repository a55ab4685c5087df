"""The JSON renderer: every ``--json``, strict JSON through `perfmodel.jsonout`.

Large documents (a diagnosis of thousands of stages, a sweep of whole predictions) are
written member by member, or point by point as a sweep replays them, so neither the document
nor the grid is ever all in memory; small records are one `json.dumps`. Each kind keeps the
encoding and layout its command has always printed (docs/diagnose-json.md, docs/predict.md,
docs/recommend.md, docs/fleet.md, docs/experiments.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from perfmodel.jsonout import dump, dump_items, dumps, encode
from perfmodel.report.base import ProfileSource, Renderer

if TYPE_CHECKING:
    from perfmodel.analysis import Prediction, SweepPoint
    from perfmodel.analysis.diagnosis import Diagnosis
    from perfmodel.analysis.watch import StageReport, WatchResult
    from perfmodel.embed.classifier import Classification
    from perfmodel.embed.corpus.builder import BuildResult
    from perfmodel.embed.source.locator import LocatedSource
    from perfmodel.experiment.results import AccuracyReport
    from perfmodel.experiment.runner import RunReport
    from perfmodel.experiment.settings_study import SettingsReport
    from perfmodel.fleet.summary import FleetSummary
    from perfmodel.recommend.api import Recommendation
    from perfmodel.runs.rows import RunRow, Sample, StageRow
    from perfmodel.simulate.whatif import Change


def accuracy_json(report: AccuracyReport, run_load: tuple[float, float] | None = None) -> str:
    """The accuracy report as strict JSON (NaN, for "no pairs", becomes null)."""
    payload = report.as_dict()
    payload["run_load_avg_range"] = list(run_load) if run_load else None
    return dumps(payload, indent=2)


class JsonRenderer(Renderer):
    """JSON for programs: every kind of result there is, as its command documents it."""

    format = "json"

    def diagnosis(self, diagnosis: Diagnosis, out: TextIO, *, all_stages: bool = False) -> None:
        dump(diagnosis, out)  # streamed member by member, not one dict tree

    def watch_stage(self, report: StageReport, out: TextIO) -> None:
        """One JSON line per stage (docs/sources.md), for pipelines and alerting."""
        out.write(dumps(report.as_dict(), indent=None) + "\n")
        out.flush()

    def watch_end(self, result: WatchResult, out: TextIO) -> None:
        """The last JSON line: why following stopped, what it read, and the diagnosis
        ``diagnose --json`` prints (on one line)."""
        head: dict[str, object] = {"event": "diagnosis", "stopped": result.stopped}
        head |= {"bytes_read": result.bytes_read, "polls": result.polls}
        opening = dumps(head, indent=None)[:-1]  # the object left open for the diagnosis
        out.write(f'{opening}, "diagnosis": ')
        out.write(encode(result.diagnosis, indent=None).decode() + "}\n")
        out.flush()

    def prediction(
        self, prediction: Prediction, out: TextIO, *, source: ProfileSource, change: Change
    ) -> None:
        dump(prediction.as_dict(), out)

    def sweep(self, points: Iterable[SweepPoint], out: TextIO, *, source: ProfileSource) -> None:
        # Written point by point: one prediction in memory, not the grid.
        dump_items(({"settings": p.settings, **p.prediction.as_dict()} for p in points), out)

    def recommendation(self, answer: Recommendation, out: TextIO) -> None:
        self.records(answer.as_dict(), out)

    def fleet_summary(self, summary: FleetSummary, out: TextIO, *, out_dir: str = "") -> None:
        dump(summary.to_json(), out)

    def accuracy(
        self,
        report: AccuracyReport,
        out: TextIO,
        *,
        run_load: tuple[float, float] | None = None,
    ) -> None:
        out.write(accuracy_json(report, run_load) + "\n")

    def settings_study(self, report: SettingsReport, out: TextIO) -> None:
        self.records(report.as_dict(), out, indent=1)

    def records(self, value: Any, out: TextIO, *, indent: int | None = 2) -> None:
        out.write(dumps(value, indent=indent) + "\n")

    def runs(self, rows: Sequence[RunRow], out: TextIO) -> None:
        self.records([r.as_dict() for r in rows], out)

    def run_detail(
        self,
        run: RunRow,
        samples: Sequence[Sample],
        stages: Sequence[StageRow],
        out: TextIO,
    ) -> None:
        payload = run.as_dict()
        payload["samples"] = [asdict(s) for s in samples]
        payload["stages"] = [s.as_dict() for s in stages]
        self.records(payload, out)

    def run_comparison(
        self, runs: Sequence[RunRow], stages: Mapping[int, Sequence[StageRow]], out: TextIO
    ) -> None:
        self.records(
            [{**r.as_dict(), "stages": [s.as_dict() for s in stages[r.id]]} for r in runs], out
        )

    def experiment_runs(self, name: str, reports: Sequence[RunReport], out: TextIO) -> None:
        self.records(
            [
                {
                    "run_id": r.run_id,
                    "config": r.config,
                    "repetition": r.repetition,
                    "warmup": r.warmup,
                    "status": r.status,
                    "wall_s": r.wall_s,
                    "app_s": r.app_s,
                    "error": r.error,
                    "bundle": str(r.bundle),
                }
                for r in reports
            ],
            out,
        )

    def cluster_status(self, status: Mapping[str, Any], out: TextIO) -> None:
        self.records(status, out)

    def classifications(
        self,
        results: Sequence[Classification],
        out: TextIO,
        *,
        classes: Sequence[str],
        explain: bool = False,
    ) -> None:
        dump([r.to_dict(explain) for r in results], out)

    def located_sources(
        self, results: Sequence[LocatedSource], out: TextIO, *, ast: bool = False
    ) -> None:
        found = []
        for r in results:
            d = r.to_dict()
            if not ast:
                d.pop("ast")
            found.append(d)
        self.records(found, out, indent=1)

    def corpus_stats(self, result: BuildResult, out: TextIO, *, split: Path) -> None:
        self.records(result.stats, out, indent=1)
