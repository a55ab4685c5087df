"""``perfmodel record``, ``perfmodel profile`` and ``perfmodel flame``: gathering stack samples
into a profile bundle, and exporting them to flame-graph tools."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from perfmodel.cli import options
from perfmodel.extras import require_extra
from perfmodel.profile.record.defaults import DEFAULT_JVM_SAMPLER, default_interval_ms

# The bundle's reader and writer are imported by the commands that use them: building the CLI
# (every `perfmodel` invocation) does not need them.
if TYPE_CHECKING:
    from perfmodel.profile.bundle import BundleManifest


class JvmSampler(StrEnum):
    """What samples the JVMs' stacks (`record_setup.RecordOptions.jvm_sampler`)."""

    jfr = "jfr"
    plugin = "plugin"
    both = "both"


RECORD_JVM_SAMPLER = JvmSampler(DEFAULT_JVM_SAMPLER)
"""`perfmodel record`'s default (`perfmodel.profile.record.defaults`)."""

JVM_SAMPLER_HELP = (
    "What samples the JVMs: 'plugin' (the perfmodel plugin samples the task threads itself: no "
    "JFR start-up, which costs each JVM 0.5-0.6 s of CPU; its samples are safepoint-biased and "
    "cover task threads only) or 'jfr' (a flight recording in each JVM: every thread, no "
    "safepoint bias, for richer flame graphs). 'both' is for comparing the two: JFR's samples "
    "make the bundle, the plugin's samples of the same run are kept in raw/plugin-samples/, and "
    "the recording costs the sum of both."
)


def _default_out() -> Path:
    return Path(time.strftime("perfmodel-bundle-%Y%m%d-%H%M%S"))


def _summary(manifest: BundleManifest, out: Path) -> str:
    s = manifest.samples
    by_source = ", ".join(f"{k} {v}" for k, v in sorted(s.get("by_source", {}).items()))
    return (
        f"perfmodel: bundle written to {out} ({s.get('rows', 0)} samples"
        + (f": {by_source}" if by_source else "")
        + (
            "; tied to Dask tasks when read"
            if "dask" in manifest.sampling
            else f"; {s.get('with_task_id', 0)} tied to tasks by the plugin"
        )
        + ")"
    )


def register(app: typer.Typer) -> None:
    """Add the ``record``, ``profile`` and ``flame`` commands to ``app``."""

    @app.command(
        "record",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def record_command(
        command: list[str] = typer.Argument(
            ...,
            help="The Spark or Dask command to run, after `--` (spark-submit ..., python app.py).",
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            "-o",
            parser=options.output_path,
            help="Bundle directory to create (default: a timestamped one).",
        ),
        interval_ms: int | None = typer.Option(
            None,
            "--interval-ms",
            min=1,
            max=options.INTERVAL_MS_MAX,
            help="Sampling interval of the JVMs and of py-spy (default: 50 ms with the "
            "plugin's sampler, which keeps a busy host's cost low, docs/recording-overhead.md; "
            "20 ms with JFR).",
        ),
        native_interval_ms: int | None = typer.Option(
            None,
            "--native-interval-ms",
            min=1,
            max=options.INTERVAL_MS_MAX,
            help="JFR native-method sampling interval (default: interval / 4).",
        ),
        python_interval_ms: int | None = typer.Option(
            None,
            "--python-interval-ms",
            min=1,
            max=options.INTERVAL_MS_MAX,
            help="py-spy's sampling interval for Python processes (default: --interval-ms); "
            "one py-spy runs per Python worker, so a longer interval saves the most there.",
        ),
        jfr_on: bool = typer.Option(True, "--jfr/--no-jfr", help="Record JVM stack samples."),
        jvm_sampler: JvmSampler = typer.Option(
            RECORD_JVM_SAMPLER, "--jvm-sampler", help=JVM_SAMPLER_HELP
        ),
        pyspy_on: bool = typer.Option(
            True, "--pyspy/--no-pyspy", help="Record Python samples with py-spy."
        ),
        thread_cpu_on: bool = typer.Option(
            True,
            "--thread-cpu/--no-thread-cpu",
            help="Record per-thread CPU and run-queue delay (thread_cpu.parquet), which "
            "predict uses for each stage's core demand; off only to measure its cost.",
        ),
        monitor_on: bool = typer.Option(
            True,
            "--monitor/--no-monitor",
            help="Record the process tree's CPU, memory and I/O (resources.parquet); off only "
            "to measure its cost.",
        ),
    ) -> None:
        """Run an unmodified Spark command with the event log and the samplers switched on.

        The JVMs' task threads are sampled by the perfmodel plugin and Python processes by
        py-spy, every 50 ms; per-thread CPU and the process tree's use are read every 0.25 s.
        The command's output and exit code pass through; the bundle is written even if it
        fails. Example: perfmodel record --out run1 -- spark-submit app.py
        """
        if pyspy_on:
            require_extra("record", "recording Python stacks (--no-pyspy records without them)")
        else:
            require_extra("bundles", "perfmodel record (it writes a bundle)")
        # Imported here: the recorder pulls in the JFR reader and pyarrow (~0.25 s), which
        # every other command would otherwise wait for at start-up.
        from perfmodel.profile.record.run import record
        from perfmodel.profile.record.setup import RecordOptions

        target = out or _default_out()
        options = RecordOptions(
            out=target,
            interval_ms=(
                interval_ms if interval_ms is not None else default_interval_ms(jvm_sampler.value)
            ),
            native_interval_ms=native_interval_ms,
            python_interval_ms=python_interval_ms,
            jfr=jfr_on,
            jvm_sampler=jvm_sampler.value,
            pyspy=pyspy_on,
            thread_cpu=thread_cpu_on,
            monitor=monitor_on,
        )
        result = record(command, options)
        for warning in result.warnings:
            typer.echo(f"perfmodel: warning: {warning}", err=True)
        typer.echo(_summary(result.manifest, target), err=True)
        if result.cost is not None:
            typer.echo(f"perfmodel: {result.cost.describe()}", err=True)
        raise typer.Exit(result.exit_code)

    @app.command("profile")
    def profile_command(
        eventlog: Path = typer.Argument(..., help="The application's event log (file or dir)."),
        jfr_files: list[Path] = typer.Option(
            [],
            "--jfr",
            help="A JFR recording or the plugin's .jvmsamples file (one per executor JVM); "
            "repeat for several.",
        ),
        pyspy_files: list[Path] = typer.Option(
            [], "--pyspy", help="A py-spy chrometrace recording; repeat for several."
        ),
        out: Path = typer.Option(
            ..., "--out", "-o", parser=options.output_path, help="Bundle directory to create."
        ),
    ) -> None:
        """Build a bundle from recordings collected elsewhere (e.g. on a cluster)."""
        require_extra("bundles", "perfmodel profile (it writes a bundle)")
        from perfmodel.analysis import read
        from perfmodel.profile import bundle
        from perfmodel.profile.record import bundle_write

        for path in [eventlog, *jfr_files, *pyspy_files]:
            if not path.exists():
                raise bundle.BundleError(f"{path} does not exist")
        # A bundle is only as good as its event log: refuse one that cannot be read now,
        # not when the bundle is first analysed.
        read(eventlog)
        with bundle_write.staged_directory(out) as stage:
            manifest = bundle_write.assemble(
                stage, event_logs=[eventlog], jfr_files=jfr_files, pyspy_files=pyspy_files
            )
        for warning in bundle.read_manifest(out).warnings:
            typer.echo(f"perfmodel: warning: {warning}", err=True)
        typer.echo(_summary(manifest, out), err=True)

    @app.command("flame")
    def flame_command(
        bundle_dir: Path = typer.Argument(..., help="A bundle written by record or profile."),
        stage: int | None = typer.Option(
            None, "--stage", min=0, max=options.ID_MAX, help="Only this stage's samples."
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            "-o",
            parser=options.output_path,
            help="Directory for the files (default: BUNDLE/flame); regular files of the "
            "same name there are replaced, anything else is refused.",
        ),
    ) -> None:
        """Export collapsed stacks and speedscope JSON (per process, or of one stage)."""
        from perfmodel.analysis import load
        from perfmodel.profile import bundle
        from perfmodel.report import render_to_file, renderer

        bundle.read_manifest(bundle_dir)
        analysis = load(bundle_dir, code_vectors=False)
        profiles = analysis.stack_profiles(stage)
        stem = "all" if stage is None else f"stage-{stage}"
        target = out or bundle_dir / "flame"
        # The text form of stacks is the collapsed one (every profile merged); speedscope's
        # keeps one profile per process kind.
        text, scope = renderer("text"), renderer("speedscope")
        folded = render_to_file(
            target / f"{stem}.collapsed", lambda f: text.stacks(profiles, f, name=stem)
        )
        speedscope = render_to_file(
            target / f"{stem}.speedscope.json", lambda f: scope.stacks(profiles, f, name=stem)
        )
        typer.echo(f"{folded}\n{speedscope}")
