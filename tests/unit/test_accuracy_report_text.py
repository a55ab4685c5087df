"""What `experiment report` says of its runs: when and where they were measured (not the
report's own time and host), and why measured runs that make no pair made none (one line in
its list of what was not used), so a table without rows is never left unexplained."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from perfmodel.experiment.accuracy import evaluate
from perfmodel.report.markdown import render_markdown
from perfmodel.runs.rows import RunOutcome
from perfmodel.runs.store import RunStore


def _runs(store: RunStore, configs: dict[str, dict[str, Any]], reps: int = 2) -> None:
    exp = store.add_experiment("exp", "wl", "/spec.toml", "name='exp'", {"n": "1"})
    for name, settings in configs.items():
        cfg = store.add_config(exp, name, "local[1]", 1, None, settings)
        for rep in range(reps):
            run = store.start_run(exp, cfg, "wl", rep, False, ["true"], "/no/such/bundle")
            store.finish_run(run, RunOutcome(status="ok", exit_code=0, wall_s=2.0, app_s=1.0))


def test_one_configuration_is_named_as_why_there_are_no_pairs(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        _runs(store, {"only": {"master": "local[1]"}})
        report = evaluate(store, store.runs(), save=False)
    assert report.pairs == [] and report.runs == 2
    assert (
        "experiment exp (n=1): no pairs: 2 measured run(s), all of one configuration (only); "
        "a pair needs runs of two configurations"
    ) in report.skipped


def test_configurations_that_differ_in_settings_are_named_as_why(tmp_path: Path) -> None:
    configs = {"p=1": {"partitions": 1}, "p=8": {"partitions": 8}}
    with RunStore(tmp_path / "runs.sqlite") as store:
        _runs(store, configs, reps=1)
        report = evaluate(store, store.runs(), save=False)
    assert report.pairs == []
    assert any(
        "no two of which differ only in what the model predicts" in s for s in report.skipped
    )


def test_the_report_says_when_and_where_the_runs_were_measured(tmp_path: Path) -> None:
    """Not the report's own time and host: runs reported on later, or elsewhere, keep theirs
    (the store's start and end times, and its host column)."""
    with RunStore(tmp_path / "runs.sqlite") as store:
        _runs(store, {"only": {"master": "local[1]"}})
        runs = store.runs()
        report = evaluate(store, runs, save=False)
    first = min(r.started_at for r in runs)
    assert report.measured.startswith(time.strftime("%Y-%m-%d %H:%M", time.gmtime(first)))
    assert report.measured.endswith(" UTC")
    assert report.measured_hosts == sorted({r.host for r in runs})
    assert report.measured_where == f"{report.measured} on `{runs[0].host}`"
    assert report.measured_where in render_markdown(report)
