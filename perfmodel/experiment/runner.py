"""Running a spec: every configuration × (warm-ups + repetitions), each run recorded and stored.

Each run goes through `perfmodel.profile.record.run.record` (a profile bundle per run, so any
run can later serve as the baseline of a prediction); `record` also monitors the run's
process tree (CPU, memory, I/O), and the runner stores what it measured. The run's row is
written before the command starts and completed after; any exception — including Ctrl-C
and SIGTERM — marks it failed and stops the workload's processes before it propagates, so
an interrupted study leaves no row ``running`` and no orphaned JVM.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import psutil

from perfmodel.atomic import check_output, make_output_dir
from perfmodel.errors import PerfmodelError
from perfmodel.experiment.cluster import ClusterState
from perfmodel.experiment.cluster_runs import ClusterSession
from perfmodel.experiment.spec import ExperimentSpec, substitute
from perfmodel.experiment.spec_grid import RunConfig
from perfmodel.extras import require_extra
from perfmodel.profile.record import children
from perfmodel.profile.record.monitor import IGNORED_NAMES, ResourceSummary
from perfmodel.profile.record.run import record
from perfmodel.profile.record.setup import RecordOptions
from perfmodel.runs.rows import RunOutcome, Sample, StageRow
from perfmodel.runs.store import RunStore

QUIET_CONF = (
    ("spark.ui.enabled", "false"),
    ("spark.ui.showConsoleProgress", "false"),
)
"""Always applied: runs must not fight over UI ports nor print progress bars."""


class ExperimentError(PerfmodelError):
    """A run could not be started at all (the prepare step failed, no spark-submit)."""


@dataclass(slots=True)
class RunReport:
    """One finished run, as the runner tells its caller."""

    run_id: int
    config: str
    repetition: int
    warmup: bool
    status: str
    wall_s: float | None
    app_s: float | None
    error: str | None
    bundle: Path
    warnings: list[str] = field(default_factory=list)


def spark_submit() -> str:
    """The ``spark-submit`` of the PySpark installed beside this Python."""
    beside = Path(sys.executable).parent / "spark-submit"
    if beside.is_file():
        return str(beside)
    found = shutil.which("spark-submit")
    if found:
        return found
    try:
        import pyspark

        script = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        if script.is_file():
            return str(script)
    except ImportError:
        pass
    raise ExperimentError("spark-submit not found: install pyspark in this environment")


def placeholders(spec: ExperimentSpec, out_dir: Path) -> dict[str, str]:
    return {
        **spec.params,
        "python": sys.executable,
        "data": str(spec.data_dir),
        "out": str(out_dir),
        "spec_dir": str(spec.path.parent),
    }


def build_command(spec: ExperimentSpec, config: RunConfig, out_dir: Path) -> list[str]:
    """The command line of one run: spark-submit with the config's options, then the script."""
    values = placeholders(spec, out_dir)
    if spec.command:
        return substitute(spec.command, values)
    assert spec.script is not None
    opts = config.submit_options()
    for key, value in QUIET_CONF:
        if key not in dict(config.conf):
            opts += ["--conf", f"{key}={value}"]
    return [spark_submit(), *opts, str(spec.script), *substitute(spec.args, values)]


def run_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The runs' environment: this Python for PySpark, loopback networking."""
    env = dict(os.environ if base is None else base)
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = env.get("PYSPARK_DRIVER_PYTHON") or env["PYSPARK_PYTHON"]
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def prepare(spec: ExperimentSpec, env: Mapping[str, str]) -> None:
    """Run the spec's prepare step (data generation) once; it must be idempotent."""
    if not spec.prepare:
        return
    command = substitute(spec.prepare, placeholders(spec, spec.data_dir))
    spec.data_dir.mkdir(parents=True, exist_ok=True)
    # As a recorded workload: its own process group, killed with perfmodel (kill -9 too).
    with children.group_dies_with_us() as preexec:
        try:
            proc = subprocess.Popen(
                command,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=preexec,
            )
        except OSError as exc:
            raise ExperimentError(f"{spec.path}: cannot run the prepare step: {exc}") from None
        with proc:
            stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        tail = (stderr or stdout).strip().splitlines()[-5:]
        raise ExperimentError(
            f"{spec.path}: the prepare step {' '.join(command)} failed with exit code "
            f"{proc.returncode}: " + " / ".join(tail)
        )


def run_experiment(
    spec: ExperimentSpec,
    store: RunStore,
    bundles: Path,
    *,
    env: Mapping[str, str] | None = None,
    progress: Callable[[RunReport], None] | None = None,
    capture_output: bool = True,
) -> list[RunReport]:
    """Run every configuration of ``spec``; returns one report per run, in order.

    With ``capture_output`` each run's stdout and stderr (Spark logs at INFO) go to
    ``<bundle>.log`` beside its bundle instead of the terminal.
    """
    require_extra("spark", "perfmodel experiment run")
    run_env = run_environment(env)
    prepare(spec, run_env)
    exp_id = store.add_experiment(
        spec.name, spec.workload, str(spec.path), spec.text, dict(spec.params)
    )
    root = _fresh_dir(bundles / f"{spec.name}-e{exp_id}")
    reports: list[RunReport] = []
    with _terminate_as_interrupt(), ClusterSession() as clusters:
        for config in spec.configs:
            on_cluster = clusters.for_config(config)
            cfg_id = store.add_config(
                exp_id,
                config.name,
                config.master,
                config.cores,
                config.memory_bytes,
                config.as_dict(),
            )
            for i in range(spec.warmups + spec.repetitions):
                warmup = i < spec.warmups
                rep = i if warmup else i - spec.warmups
                label = f"{_slug(config.name)}-{'w' if warmup else 'r'}{rep}"
                report = _one_run(
                    spec,
                    config,
                    store,
                    exp_id,
                    cfg_id,
                    rep,
                    warmup,
                    root,
                    label,
                    run_env,
                    capture_output,
                    on_cluster,
                )
                reports.append(report)
                if progress is not None:
                    progress(report)
    return reports


def _one_run(
    spec: ExperimentSpec,
    config: RunConfig,
    store: RunStore,
    exp_id: int,
    cfg_id: int,
    rep: int,
    warmup: bool,
    root: Path,
    label: str,
    env: Mapping[str, str] | None = None,
    capture_output: bool = True,
    on_cluster: ClusterState | None = None,
) -> RunReport:
    run_env = run_environment(env)
    bundle = root / label
    scratch = root / "scratch" / label
    command = build_command(spec, config, scratch)
    daemons: tuple[int, ...] = ()
    if on_cluster is not None:
        # The driver in the master's namespace; the workers' executors recorded too.
        command = on_cluster.driver_command(command)
        run_env = on_cluster.driver_env(run_env)
        daemons = tuple(on_cluster.daemon_pids())
    run_id = store.start_run(
        exp_id, cfg_id, spec.workload, rep, warmup, command, str(bundle.resolve())
    )
    options = RecordOptions(
        out=bundle,
        interval_ms=spec.record.interval_ms,
        jfr=spec.record.jfr,
        jvm_sampler=spec.record.jvm_sampler,
        plugin_interval_ms=spec.record.plugin_interval_ms,
        pyspy=spec.record.pyspy,
        daemon_pids=daemons,
    )
    scratch.parent.mkdir(parents=True, exist_ok=True)
    watchdog = _Watchdog(spec.timeout_s)
    try:
        watchdog.start()
        try:
            log = root / f"{label}.log" if capture_output else None
            with _output_to(log):
                result = record(command, options, env=run_env)
        finally:
            watchdog.cancel()
    except BaseException as exc:
        _kill_workload(watchdog.bystanders)
        store.finish_run(
            run_id,
            RunOutcome(status="failed", error=f"interrupted: {type(exc).__name__}: {exc}"),
        )
        raise
    timed_out = watchdog.fired
    m = result.manifest
    wall = (m.ended_ms - m.started_ms) / 1000.0 if m.ended_ms and m.started_ms else None
    totals = result.resources or ResourceSummary()
    outcome = RunOutcome(
        status="ok" if result.exit_code == 0 else "failed",
        exit_code=result.exit_code,
        wall_s=wall,
        cpu_s=totals.cpu_s,
        peak_rss_bytes=totals.peak_rss_bytes,
        read_bytes=totals.read_bytes,
        write_bytes=totals.write_bytes,
        net_sent_bytes=totals.net_sent_bytes,
        net_recv_bytes=totals.net_recv_bytes,
        samples=store_samples(totals, m.started_ms),
    )
    if result.exit_code != 0:
        outcome.error = (
            f"timed out after {spec.timeout_s:g} s and was killed"
            if timed_out
            else f"the command exited with status {result.exit_code}"
        )
    if m.event_logs:
        try:
            app_s, stages = profile_summary(bundle)
            outcome.app_s, outcome.stages = app_s, stages
        except Exception as exc:  # the measurement is stored whatever the analysis does
            kind = "" if isinstance(exc, PerfmodelError) else f" ({type(exc).__name__}, a bug)"
            outcome.error = (outcome.error + "; " if outcome.error else "") + (
                f"the event log could not be analysed{kind}: {exc}"
            )
    interrupted = any(w.startswith("interrupted") for w in result.warnings)
    if interrupted:
        outcome.status = "failed"
        outcome.error = "interrupted (Ctrl-C)"
    store.finish_run(run_id, outcome)
    if interrupted:
        # record() let the command finish writing its bundle; now the study stops.
        raise KeyboardInterrupt("interrupted (Ctrl-C)")
    if not spec.keep_output:
        shutil.rmtree(scratch, ignore_errors=True)
    return RunReport(
        run_id=run_id,
        config=config.name,
        repetition=rep,
        warmup=warmup,
        status=outcome.status,
        wall_s=outcome.wall_s,
        app_s=outcome.app_s,
        error=outcome.error,
        bundle=bundle,
        warnings=list(result.warnings),
    )


def store_samples(totals: ResourceSummary, started_ms: float | None) -> list[Sample]:
    """The monitor's samples as the store keeps them: seconds since the run started."""
    if not totals.samples:
        return []
    t0 = started_ms if started_ms is not None else totals.samples[0].t_ms
    return [
        Sample(
            t_s=(s.t_ms - t0) / 1000.0,
            cpu_percent=100.0 * s.cpu_cores,
            rss_bytes=s.rss_bytes,
            read_bytes=s.read_bytes,
            write_bytes=s.write_bytes,
            net_sent_bytes=s.net_sent_bytes,
            net_recv_bytes=s.net_recv_bytes,
            processes=s.processes,
        )
        for s in totals.samples
    ]


class _Watchdog:
    """Kills the workload after the spec's timeout, so one hung run cannot stall a study."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self.bystanders: set[int] = set()
        """The children this process had before the run: not the workload's."""
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        _kill_workload(self.bystanders)

    def start(self) -> None:
        self.bystanders = _current_children()
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def profile_summary(bundle: Path) -> tuple[float, list[StageRow]]:
    """The application's runtime by its event log, and a per-stage summary."""
    from perfmodel.analysis import read  # heavy import, only after a run

    profile = read(bundle).profile
    rows = []
    for stage in sorted(profile.stages.values(), key=lambda s: s.key):
        tasks = [t for t in stage.tasks if t.finish_ms is not None]
        if not tasks:
            continue
        rows.append(
            StageRow(
                stage_id=stage.stage_id,
                attempt=stage.attempt,
                name=stage.name,
                tasks=len(tasks),
                duration_s=stage.duration_ms / 1000.0,
                task_s=sum(t.duration_ms for t in tasks) / 1000.0,
                cpu_s=sum(t.metrics.cpu_ms for t in tasks) / 1000.0,
                gc_s=sum(t.metrics.gc_ms for t in tasks) / 1000.0,
                input_bytes=sum(t.metrics.input_bytes for t in tasks),
                output_bytes=sum(t.metrics.output_bytes for t in tasks),
                shuffle_read_bytes=sum(t.metrics.shuffle_read_bytes for t in tasks),
                shuffle_write_bytes=sum(t.metrics.shuffle_write_bytes for t in tasks),
                spill_bytes=sum(t.metrics.disk_spill_bytes for t in tasks),
            )
        )
    return profile.duration_ms / 1000.0, rows


def _current_children() -> set[int]:
    """This process's children now (the recorders' and the caller's among them)."""
    try:
        return {c.pid for c in psutil.Process().children()}
    except (psutil.Error, OSError):
        return set()


def _kill_workload(bystanders: set[int]) -> None:
    """Kill the workload of the run: the process groups led by the children this process
    started since the run began (`record` starts the command leading a group of its own, and
    its descendants, a PySpark driver's JVM among them, stay in it), less the recorders.
    ``bystanders``, the children this process had before the run, are not the run's: the
    runner is a library call too, and its caller's other children (a notebook's servers,
    multiprocessing's resource tracker) are not for it to kill."""
    try:
        me = psutil.Process()
        leaders = [c for c in me.children() if c.pid not in bystanders]
        descendants = me.children(recursive=True)
    except (psutil.Error, OSError):
        return
    groups = set()
    for proc in leaders:
        try:
            if os.getpgid(proc.pid) == proc.pid and children.REAPER_MARK not in proc.cmdline():
                groups.add(proc.pid)
        except (psutil.Error, OSError):
            continue
    victims = []
    for proc in descendants:
        try:
            if os.getpgid(proc.pid) in groups and proc.name() not in IGNORED_NAMES:
                victims.append(proc)
        except (psutil.Error, OSError):
            continue
    for proc in victims:
        try:
            proc.kill()
        except (psutil.Error, OSError):
            continue
    # No waiting here: reaping a direct child would steal its exit status from `record`.


@contextmanager
def _output_to(path: Path | None) -> Iterator[None]:
    """Point file descriptors 1 and 2 (which the command inherits) at ``path`` meanwhile."""
    if path is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    check_output(path)
    make_output_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o666)
        with open(fd, "ab") as fh:
            os.dup2(fh.fileno(), 1)
            os.dup2(fh.fileno(), 2)
            yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt, so a terminated runner records its run failed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fresh_dir(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``… when it exists (another store's experiment)."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _slug(name: str) -> str:
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    return "-".join(p for p in out.split("-") if p) or "config"
