"""``perfmodel experiment run|report`` and ``perfmodel runs list|show|compare``.

A thin layer over `perfmodel.experiment`: it resolves the store (``--store``, else
``$PERFMODEL_STORE``, else the user's data directory) and prints tables or ``--json``; errors
are the CLI's boundary's (`perfmodel.cli`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from perfmodel.jsonout import dumps
from perfmodel.runs.store import RunRow, RunStore, default_store_path

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store", help="Run store (SQLite file; default $PERFMODEL_STORE or the user data dir)."
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
    runs.command("list")(runs_list)
    runs.command("show")(runs_show)
    runs.command("compare")(runs_compare)
    app.add_typer(experiment, name="experiment")
    app.add_typer(runs, name="runs")


def _open(store: Path | None) -> RunStore:
    return RunStore(store if store is not None else default_store_path())


def _params(values: list[str] | None) -> dict[str, str]:
    from perfmodel.experiment.spec import SpecError

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
        typer.Option(help="Where run bundles go (default: 'bundles' beside the store)."),
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="Override a spec parameter: NAME=VALUE.")
    ] = None,
    repetitions: Annotated[int | None, typer.Option(help="Override the repetitions.")] = None,
    warmups: Annotated[int | None, typer.Option(help="Override the warm-up runs.")] = None,
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
    from perfmodel.experiment.runner import RunReport, run_experiment
    from perfmodel.experiment.spec import load_spec
    from perfmodel.profile.record.children import find_orphans

    spec = load_spec(spec_path).with_overrides(
        _params(param), repetitions=repetitions, warmups=warmups, only=only
    )
    for orphan in find_orphans():
        typer.echo(f"warning: {orphan.describe()}", err=True)
    with _open(store) as db:
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
    if as_json:
        typer.echo(
            dumps(
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
                indent=2,
            )
        )
    else:
        ok = sum(r.status == "ok" for r in reports)
        typer.echo(f"{spec.name}: {ok}/{len(reports)} runs ok; ids {_id_span(reports)}")
    if any(r.status != "ok" for r in reports):
        raise typer.Exit(1)


def _id_span(reports: list[Any]) -> str:
    ids = [r.run_id for r in reports]
    return f"{min(ids)}–{max(ids)}" if ids else "none"


def _select_runs(db: RunStore, targets: list[str]) -> list[RunRow]:
    """Run ids, ranges (3-9), experiment names or spec files → the runs they name."""
    from perfmodel.experiment.spec import SpecError, load_spec

    runs: dict[int, RunRow] = {}
    for target in targets:
        if target.replace("-", "").isdigit():
            lo, _, hi = target.partition("-")
            ids = list(range(int(lo), int(hi or lo) + 1))
            for r in db.runs(ids=ids):
                runs[r.id] = r
            if not hi and int(lo) not in runs:
                db.run(int(lo))  # raises a clear error
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
        typer.Option(help="Directory for accuracy.md/.json and plots (default: none written)."),
    ] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write figures.")] = True,
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Also write accuracy.html (into --out, else the current directory): measured "
            "against predicted per configuration, a self-contained page like perfmodel report's.",
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
    from perfmodel.experiment.accuracy import evaluate
    from perfmodel.experiment.report import render_markdown, to_json, write_report
    from perfmodel.experiment.split import load_split

    held_out = load_split(split) if split is not None else None
    with _open(store) as db:
        runs = _select_runs(db, targets)
        report = evaluate(db, runs, split=held_out, variants=variants)
    loads = [r.load_avg for r in runs if r.load_avg is not None]
    load_range = (min(loads), max(loads)) if loads else None
    if out is not None:
        write_report(report, out, load_range)
        if plots:
            from perfmodel.experiment.plots import plot_all

            files = plot_all(runs, out / "plots")
            typer.echo(f"wrote {len(files)} figure files to {out / 'plots'}", err=True)
    if html:
        from perfmodel.experiment.report import html_page
        from perfmodel.report.html import write_html

        page_path = write_html(html_page(report, load_range), (out or Path(".")) / "accuracy.html")
        typer.echo(f"wrote {page_path}", err=True)
    if as_json:
        typer.echo(to_json(report, load_range))
    else:
        typer.echo(render_markdown(report, load_range))


def experiment_calibrate(
    split: Annotated[
        Path,
        typer.Option(help="Held-out split file: intervals are fitted on its fit workloads only."),
    ],
    out: Annotated[
        Path,
        typer.Option(help="Where to write the calibration (perfmodel/data/intervals.json ships)."),
    ],
    store: Annotated[
        list[Path] | None,
        typer.Option(
            "--store",
            help="Run store (SQLite file; default $PERFMODEL_STORE or the user data dir). "
            "Repeat it to pool studies of the fit workloads made on different days.",
        ),
    ] = None,
    level: Annotated[
        float, typer.Option(help="Nominal coverage of the intervals (0.5–0.99).", min=0.5, max=0.99)
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
        dbs = [stack.enter_context(_open(path)) for path in (store or [None])]
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


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _fmt_s(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def runs_list(
    store: StoreOption = None,
    experiment: Annotated[str | None, typer.Option(help="Only this experiment.")] = None,
    status: Annotated[str | None, typer.Option(help="Only runs with this status.")] = None,
    last: Annotated[int | None, typer.Option(help="Only the last N runs.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List stored runs."""
    with _open(store) as db:
        rows = db.runs(experiment=experiment, status=status, limit=last)
    if as_json:
        typer.echo(dumps([r.as_dict() for r in rows]))
        return
    typer.echo(
        f"{'id':>5}  {'started':<16} {'experiment':<14} {'config':<24} {'rep':>4} "
        f"{'status':<7} {'app s':>7} {'wall s':>7} {'cpu s':>7} {'peak rss':>10}"
    )
    for r in rows:
        rep = f"w{r.repetition}" if r.warmup else str(r.repetition)
        typer.echo(
            f"{r.id:>5}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(r.started_at)):<16} "
            f"{r.experiment[:14]:<14} {r.config[:24]:<24} {rep:>4} {r.status:<7} "
            f"{_fmt_s(r.app_s):>7} {_fmt_s(r.wall_s):>7} {_fmt_s(r.cpu_s):>7} "
            f"{_fmt_bytes(r.peak_rss_bytes):>10}"
        )


def runs_show(
    run_id: Annotated[int, typer.Argument(help="Run id (see `perfmodel runs list`).")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """One run: its configuration, measurements, resource time series and stages."""
    with _open(store) as db:
        run = db.run(run_id)
        samples = db.samples(run_id)
        stages = db.stages(run_id)
    if as_json:
        payload = run.as_dict()
        payload["samples"] = [asdict(s) for s in samples]
        payload["stages"] = [s.as_dict() for s in stages]
        typer.echo(dumps(payload))
        return
    typer.echo(f"run {run.id}: {run.experiment} [{run.config}] — {run.status}")
    if run.error:
        typer.echo(f"  error: {run.error}")
    typer.echo(f"  command: {' '.join(run.command)}")
    typer.echo(f"  bundle:  {run.bundle_path}")
    typer.echo(
        f"  app {_fmt_s(run.app_s)} s · wall {_fmt_s(run.wall_s)} s · cpu {_fmt_s(run.cpu_s)} s"
        f" · peak rss {_fmt_bytes(run.peak_rss_bytes)} · disk read "
        f"{_fmt_bytes(run.read_bytes)} write {_fmt_bytes(run.write_bytes)} · net sent "
        f"{_fmt_bytes(run.net_sent_bytes)} (host) · load {_fmt_s(run.load_avg)}"
    )
    if samples:
        peak_cpu = max(s.cpu_percent for s in samples)
        typer.echo(
            f"  {len(samples)} samples over {samples[-1].t_s:.1f} s; CPU peak {peak_cpu:.0f}%, "
            f"mean {sum(s.cpu_percent for s in samples) / len(samples):.0f}%"
        )
    if stages:
        typer.echo(
            f"  {'stage':>6} {'tasks':>6} {'dur s':>7} {'task s':>7} {'cpu s':>7} "
            f"{'gc s':>6} {'input':>10} {'shuf wr':>10} {'spill':>10}  name"
        )
        for s in stages:
            typer.echo(
                f"  {s.stage_id:>4}.{s.attempt:<1} {s.tasks:>6} {s.duration_s:>7.1f} "
                f"{s.task_s:>7.1f} {s.cpu_s:>7.1f} {s.gc_s:>6.1f} {_fmt_bytes(s.input_bytes):>10} "
                f"{_fmt_bytes(s.shuffle_write_bytes):>10} {_fmt_bytes(s.spill_bytes):>10}  "
                f"{s.name[:40]}"
            )


COMPARE_FIELDS: list[tuple[str, Callable[[RunRow], str]]] = [
    ("experiment", lambda r: r.experiment),
    ("config", lambda r: r.config),
    ("status", lambda r: r.status),
    ("app s", lambda r: _fmt_s(r.app_s)),
    ("wall s", lambda r: _fmt_s(r.wall_s)),
    ("cpu s", lambda r: _fmt_s(r.cpu_s)),
    ("peak rss", lambda r: _fmt_bytes(r.peak_rss_bytes)),
    ("disk read", lambda r: _fmt_bytes(r.read_bytes)),
    ("disk write", lambda r: _fmt_bytes(r.write_bytes)),
    ("load avg", lambda r: _fmt_s(r.load_avg)),
]


def runs_compare(
    run_ids: Annotated[list[int], typer.Argument(help="Two or more run ids.")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Side by side: time, memory, CPU, and per-stage durations of several runs."""
    if len(run_ids) < 2:
        from perfmodel.experiment.spec import SpecError

        raise SpecError("runs compare needs at least two run ids")
    with _open(store) as db:
        runs = [db.run(i) for i in run_ids]
        stages = {i: db.stages(i) for i in run_ids}
    if as_json:
        typer.echo(
            dumps(
                [{**r.as_dict(), "stages": [s.as_dict() for s in stages[r.id]]} for r in runs],
                indent=2,
            )
        )
        return
    width = 2 + max(16, *(len(get(r)) for _, get in COMPARE_FIELDS for r in runs))
    typer.echo(f"{'':<12}" + "".join(f"{'run ' + str(r.id):>{width}}" for r in runs))
    for label, get in COMPARE_FIELDS:
        typer.echo(f"{label:<12}" + "".join(f"{get(r):>{width}}" for r in runs))
    keys = sorted({(s.stage_id, s.attempt) for i in run_ids for s in stages[i]})
    if keys:
        typer.echo("stage duration s (tasks)")
        for key in keys:
            cells = []
            for r in runs:
                s = next((s for s in stages[r.id] if (s.stage_id, s.attempt) == key), None)
                cells.append(f"{s.duration_s:.1f} ({s.tasks})" if s else "-")
            name = f"stage {key[0]}" + (f" (attempt {key[1]})" if key[1] else "")
            typer.echo(f"{name:<12}" + "".join(f"{c:>{width}}" for c in cells))
