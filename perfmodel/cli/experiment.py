"""``perfmodel experiment run|report|calibrate|settings`` and ``perfmodel runs list|show|compare``.

A thin layer over `perfmodel.experiment`: it resolves the store (``--store``, else
``$PERFMODEL_STORE``, else the user's data directory) and hands what it reads or computes to
a renderer of `perfmodel.report` (text or ``--json``; Markdown and HTML for the accuracy
report); errors are the CLI's boundary's (`perfmodel.cli`).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfmodel.cli import options
from perfmodel.extras import require_extra

if TYPE_CHECKING:
    from perfmodel.report import Renderer
    from perfmodel.runs.rows import RunRow
    from perfmodel.runs.store import RunStore

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        parser=options.output_path,
        help="Run store (SQLite file; default $PERFMODEL_STORE or the user data dir). A "
        "command that only reads never creates one.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def register(app: typer.Typer) -> None:
    """Add the ``experiment`` and ``runs`` command groups to ``app``."""
    experiment = typer.Typer(
        help="Run workloads under a grid of configurations and check predictions.",
        no_args_is_help=True,
    )
    runs = typer.Typer(help="Browse and compare stored runs.", no_args_is_help=True)
    experiment.command("run")(experiment_run)
    experiment.command("report")(experiment_report)
    experiment.command("calibrate")(experiment_calibrate)
    experiment.command("settings")(experiment_settings)
    runs.command("list")(runs_list)
    runs.command("show")(runs_show)
    runs.command("compare")(runs_compare)
    app.add_typer(experiment, name="experiment")
    app.add_typer(runs, name="runs")


def _open(store: Path | None, *, create: bool = False) -> RunStore:
    """The run store; only a command that records runs (``create``) makes a missing one."""
    # Imported here: the store brings SQLite and psutil, which building the CLI does not need.
    from perfmodel.runs.store import RunStore, default_store_path

    return RunStore(store if store is not None else default_store_path(), create=create)


def _params(values: list[str] | None) -> dict[str, str]:
    from perfmodel.experiment.spec_grid import SpecError

    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SpecError(f"--param needs NAME=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def experiment_run(
    spec_path: Annotated[Path, typer.Argument(help="Experiment spec (TOML).", metavar="SPEC")],
    store: StoreOption = None,
    bundles: Annotated[
        Path | None,
        typer.Option(
            parser=options.output_path,
            help="Where run bundles go (default: 'bundles' beside the store).",
        ),
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="Override a spec parameter: NAME=VALUE.")
    ] = None,
    repetitions: Annotated[
        int | None, typer.Option(help="Override the repetitions.", min=1, max=options.COUNT_MAX)
    ] = None,
    warmups: Annotated[
        int | None, typer.Option(help="Override the warm-up runs.", min=0, max=options.COUNT_MAX)
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this config (repeatable).")
    ] = None,
    show_output: Annotated[
        bool,
        typer.Option(help="Let the runs print to the terminal (default: a log per run)."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Run every configuration of SPEC, recording each run into the store."""
    require_extra("spark", "perfmodel experiment run")
    from perfmodel.experiment.runner import RunReport, run_experiment
    from perfmodel.experiment.spec import load_spec
    from perfmodel.profile.record.children import find_orphans

    spec = load_spec(spec_path).with_overrides(
        _params(param), repetitions=repetitions, warmups=warmups, only=only
    )
    for orphan in find_orphans():
        typer.echo(f"warning: {orphan.describe()}", err=True)
    with _open(store, create=True) as db:
        root = bundles if bundles is not None else db.path.parent / "bundles"

        def show(r: RunReport) -> None:
            if as_json:
                return
            kind = "warm-up" if r.warmup else f"rep {r.repetition}"
            timing = f"{r.app_s:.1f} s app, {r.wall_s:.1f} s wall" if r.app_s else ""
            typer.echo(
                f"run {r.run_id}: {spec.name} [{r.config}] {kind}: {r.status} {timing}"
                + (f" — {r.error}" if r.error else ""),
                err=True,
            )

        reports = run_experiment(spec, db, root, progress=show, capture_output=not show_output)
    _output(as_json).experiment_runs(spec.name, reports, sys.stdout)
    if any(r.status != "ok" for r in reports):
        raise typer.Exit(1)


_ID_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def _id_range(target: str) -> tuple[int, int] | None:
    """A run id (``7``) or inclusive id range (``3-9``) as its bounds; None for anything
    that is not made of digits and dashes (an experiment name or spec file). Bounds only,
    never a list of every id: ``1-99999999999`` must cost what ``1-9`` does. A malformed
    spec (``1-2-3``, ``1--2``), a reversed range or an id no store can hold is refused
    rather than read as an empty selection: the report would be silently empty."""
    from perfmodel.experiment.spec_grid import SpecError

    if not target or target.strip("0123456789-"):
        return None
    match = _ID_RANGE.fullmatch(target)
    if match is None:
        raise SpecError(f"{target!r} is not a run id (7) or an id range (3-9)")
    lo = int(match.group(1))
    hi = int(match.group(2)) if match.group(2) is not None else lo
    for value in (lo, hi):
        if not 1 <= value <= options.ID_MAX:
            raise SpecError(f"run id {value} in {target!r} is out of range (1 to {options.ID_MAX})")
    if hi < lo:
        raise SpecError(f"run id range {target!r} is reversed: write {hi}-{lo}")
    return lo, hi


def _select_runs(db: RunStore, targets: list[str]) -> list[RunRow]:
    """Run ids, ranges (3-9), experiment names or spec files → the runs they name."""
    from perfmodel.experiment.spec import load_spec
    from perfmodel.experiment.spec_grid import SpecError

    runs: dict[int, RunRow] = {}
    for target in targets:
        bounds = _id_range(target)
        if bounds is not None:
            lo, hi = bounds
            if lo == hi:
                found = [db.run(lo)]  # a missing run raises a clear error
            else:
                found = db.runs(id_range=bounds)
                if not found:
                    raise SpecError(
                        f"no runs with ids {lo} to {hi} in {db.path} (see `perfmodel runs list`)"
                    )
            for r in found:
                runs[r.id] = r
            continue
        name = target
        if target.endswith(".toml") or Path(target).is_file():
            name = load_spec(target).name
        found = db.runs(experiment=name)
        if not found:
            known = ", ".join(db.experiment_names()) or "none yet"
            raise SpecError(f"no runs of experiment {name!r} in {db.path} (experiments: {known})")
        for r in found:
            runs[r.id] = r
    return [runs[k] for k in sorted(runs)]


def experiment_report(
    targets: Annotated[
        list[str], typer.Argument(help="Spec files, experiment names, run ids or id ranges.")
    ],
    store: StoreOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            parser=options.output_path,
            help="Directory for accuracy.md/.json and plots (default: none written; files of "
            "the same name there are replaced).",
        ),
    ] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write figures.")] = True,
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Also write accuracy.html (into --out, else the current directory): measured "
            "against predicted per configuration, a self-contained page like perfmodel report's "
            "(an existing accuracy.html is replaced).",
        ),
    ] = False,
    split: Annotated[
        Path | None,
        typer.Option(
            help="Held-out split file (e.g. experiments/splits/default.toml): label each "
            "workload fit or held-out and report each side on its own."
        ),
    ] = None,
    variants: Annotated[
        bool,
        typer.Option(
            "--variants/--no-variants",
            help="Also predict every pair from the baseline's bare event log and from its "
            "bundle without code vectors (three replays per pair instead of one).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Measured vs predicted for every (baseline run → other configuration) pair."""
    require_extra("spark", "perfmodel experiment report")
    from perfmodel.experiment.accuracy import evaluate
    from perfmodel.experiment.split import load_split
    from perfmodel.report import render_to_file, renderer
    from perfmodel.report.markdown import write_report

    held_out = load_split(split) if split is not None else None
    with _open(store) as db:
        runs = _select_runs(db, targets)
        report = evaluate(db, runs, split=held_out, variants=variants)
    loads = [r.load_avg for r in runs if r.load_avg is not None]
    load_range = (min(loads), max(loads)) if loads else None
    if out is not None:
        write_report(report, out, load_range)
        if plots:
            # Imported here: matplotlib costs a second, and only the figures need it.
            from perfmodel.experiment.plots import study_curves
            from perfmodel.report.figures import write_figures

            files = write_figures(study_curves(runs), out / "plots")
            typer.echo(f"wrote {len(files)} figure files to {out / 'plots'}", err=True)
    if html:
        page = renderer("html")
        page_path = render_to_file(
            (out or Path(".")) / "accuracy.html",
            lambda f: page.accuracy(report, f, run_load=load_range),
        )
        typer.echo(f"wrote {page_path}", err=True)
    renderer("json" if as_json else "markdown").accuracy(report, sys.stdout, run_load=load_range)


def experiment_calibrate(
    split: Annotated[
        Path,
        typer.Option(help="Held-out split file: intervals are fitted on its fit workloads only."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            parser=options.output_path,
            help="Where to write the calibration (perfmodel/data/intervals.json ships; an "
            "existing file is replaced).",
        ),
    ],
    store: Annotated[
        list[Path] | None,
        typer.Option(
            "--store",
            parser=options.output_path,
            help="Run store (SQLite file; default $PERFMODEL_STORE or the user data dir). "
            "Repeat it to pool studies of the fit workloads made on different days.",
        ),
    ] = None,
    level: Annotated[
        float,
        typer.Option(
            help="Nominal coverage of the intervals (0.5–0.99).",
            min=0.5,
            max=0.99,
            callback=options.finite,
        ),
    ] = 0.8,
    variants: Annotated[
        bool,
        typer.Option(
            "--variants/--no-variants",
            help="Also fit bare-log intervals (replays each pair's bare event log too).",
        ),
    ] = True,
) -> None:
    """Fit the prediction intervals on the split's fit workloads and write them as JSON."""
    require_extra("spark", "perfmodel experiment calibrate")
    import json
    from contextlib import ExitStack

    from perfmodel.atomic import write_atomically
    from perfmodel.experiment.calibrate import calibrate
    from perfmodel.experiment.co_running import fit_runs, jit_slope, measure
    from perfmodel.experiment.spill_cpu import measure_spill_cpu
    from perfmodel.experiment.split import load_split
    from perfmodel.simulate.jit_load import JIT_CO_RUNNING
    from perfmodel.simulate.laws import CO_RUNNING_CPU, SPILL_CPU_NS_PER_BYTE

    held_out = load_split(split)
    with ExitStack() as stack:
        paths: list[Path | None] = [*store] if store else [None]
        dbs = [stack.enter_context(_open(path)) for path in paths]
        model = calibrate(dbs, held_out, level, variants)
        runs = [run for db in dbs for run in fit_runs(db, held_out)]
        co = measure(runs)
        slope, slope_pairs = jit_slope(runs)
        spill = measure_spill_cpu(runs)
    write_atomically(out, json.dumps(model.as_dict(), indent=2, sort_keys=True) + "\n")
    for kind, classes in model.quantiles.items():
        for name, q in classes.items():
            used, _ = model.for_class(kind, name)
            typer.echo(
                f"{kind:9s} {name:12s} {q.pairs:4d} pairs of {q.workloads} workloads  "
                f"×{math.exp(q.low):.2f} … ×{math.exp(q.high):.2f}"
                + ("" if used is q else "  (uses all)")
            )
    for kind, dims in model.scale_range.items():
        spans = ", ".join(f"{d} ×{r.low:.3g}–×{r.high:.3g}" for d, r in dims.items())
        typer.echo(f"{kind:9s} calibrated scale factors (wider beyond them): {spans}")
    typer.echo(f"wrote {out} (fitted on {', '.join(model.fitted_on)})", err=True)
    if co.pairs:
        spread = f"{min(co.by_workload.values()):.2f}–{max(co.by_workload.values()):.2f}"
        typer.echo(
            f"co-running CPU γ on the fit workloads: {co.gamma:.3f} ({co.pairs} pairs of runs "
            f"that differ in cores; per workload {spread}); the model uses "
            f"laws.CO_RUNNING_CPU = {CO_RUNNING_CPU:.2f}"
        )
    else:
        typer.echo("co-running CPU γ: no fit runs that differ only in cores to measure it")
    if slope_pairs:
        typer.echo(
            f"co-running CPU γ per unit of JIT CPU per task CPU: {slope:.3f} ({slope_pairs} "
            f"pairs of runs with per-thread CPU); the model uses "
            f"jit_load.JIT_CO_RUNNING = {JIT_CO_RUNNING:.3f} where a bundle measured it, "
            f"laws.CO_RUNNING_CPU elsewhere"
        )
    if spill.stages:
        typer.echo(
            f"spilling CPU on the fit workloads: {spill.ns_per_byte:.2f} ns per byte spilled "
            f"({spill.stages} stages of runs that differ only in memory); the model uses "
            f"laws.SPILL_CPU_NS_PER_BYTE = {SPILL_CPU_NS_PER_BYTE:.2f}"
        )
    else:
        typer.echo("spilling CPU: no fit runs that differ only in memory and spill to measure it")


def experiment_settings(
    specs: Annotated[
        list[Path], typer.Argument(help="Settings study specs (experiments/settings/*.toml).")
    ],
    store: StoreOption = None,
    split: Annotated[
        Path | None,
        typer.Option(help="Held-out split file: report the held-out and fit workloads apart."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            parser=options.output_path,
            help="Directory for settings.md and settings.json (default: none written; files "
            "of the same name there are replaced).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            help="At most this many source runs per experiment.", min=1, max=options.COUNT_MAX
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The settings study: every run of a spec predicts every other configuration of it from
    its bare event log, under the other's Spark settings (scripts/settings_study.sh)."""
    require_extra("spark", "perfmodel experiment settings")
    from perfmodel.experiment.settings_study import evaluate_settings
    from perfmodel.experiment.spec import load_spec
    from perfmodel.experiment.split import load_split
    from perfmodel.report import render_to_file, renderer

    held_out = load_split(split) if split is not None else None
    with _open(store) as db:
        runs = [r for spec in specs for r in db.runs(experiment=load_spec(spec).name)]
    report = evaluate_settings(runs, held_out, limit=limit)
    if out is not None:
        markdown, js = renderer("markdown"), renderer("json")
        render_to_file(out / "settings.md", lambda f: markdown.settings_study(report, f))
        render_to_file(out / "settings.json", lambda f: js.settings_study(report, f))
    renderer("json" if as_json else "markdown").settings_study(report, sys.stdout)


def _output(as_json: bool) -> Renderer:
    """The renderer a ``--json`` flag picks (imported on use, as every command's heavy
    imports: building the CLI must not load them)."""
    from perfmodel.report import renderer

    return renderer("json" if as_json else "text")


def runs_list(
    store: StoreOption = None,
    experiment: Annotated[str | None, typer.Option(help="Only this experiment.")] = None,
    status: Annotated[str | None, typer.Option(help="Only runs with this status.")] = None,
    last: Annotated[
        int | None, typer.Option(help="Only the last N runs.", min=1, max=options.ID_MAX)
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List stored runs."""
    with _open(store) as db:
        rows = db.runs(experiment=experiment, status=status, limit=last)
    _output(as_json).runs(rows, sys.stdout)


def runs_show(
    run_id: options.RunId,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """One run: its configuration, measurements, resource time series and stages."""
    with _open(store) as db:
        run = db.run(run_id)
        samples = db.samples(run_id)
        stages = db.stages(run_id)
    _output(as_json).run_detail(run, samples, stages, sys.stdout)


def runs_compare(
    run_ids: options.RunIds,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Side by side: time, memory, CPU, and per-stage durations of several runs."""
    if len(run_ids) < 2:
        from perfmodel.experiment.spec_grid import SpecError

        raise SpecError("runs compare needs at least two run ids")
    with _open(store) as db:
        runs = [db.run(i) for i in run_ids]
        stages = {i: db.stages(i) for i in run_ids}
    _output(as_json).run_comparison(runs, stages, sys.stdout)
