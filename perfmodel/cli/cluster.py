"""``perfmodel cluster``: a Spark standalone cluster in network namespaces on this machine,
with shaped links, and recording applications on it (docs/cluster.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from perfmodel.cli import options
from perfmodel.cli.record import JVM_SAMPLER_HELP, JvmSampler
from perfmodel.experiment.cluster_state import DEFAULT_NAME, DEFAULT_SUBNET
from perfmodel.extras import require_extra

# The cluster's machinery (namespaces, daemons, psutil) is imported by the commands: building
# the CLI, which every `perfmodel` invocation does, needs only the defaults above.
if TYPE_CHECKING:
    from perfmodel.experiment.cluster import ClusterState

cluster_app = typer.Typer(
    help=(
        "A Spark standalone cluster on this machine: a master and workers, each in its own "
        "network namespace, with optional link, CPU and disk limits (needs root)."
    ),
    no_args_is_help=True,
)

_NAME = typer.Option(DEFAULT_NAME, "--name", help="Cluster name (prefixes everything built).")
CLUSTER_INTERVAL_MS = 50
"""`cluster record`'s sampling period: with the plugin's sampler, the recording overhead was
at or under 2% by its medians on the namespace cluster (docs/cluster.md)."""


def _state(name: str) -> ClusterState:
    from perfmodel.experiment import cluster as cl

    state = cl.ClusterState.load(name)
    if state is None:
        raise cl.ClusterError(f"no cluster {name!r} is up; start one with `perfmodel cluster up`")
    return state


@cluster_app.command("up")
def up_command(
    name: str = _NAME,
    workers: int = typer.Option(2, "--workers", min=1, max=9, help="Worker hosts."),
    rate: float | None = typer.Option(
        None,
        "--rate",
        min=0.001,
        max=1e7,
        callback=options.finite,
        help="Each worker's link, Mbit/s each way (tc token bucket).",
    ),
    cpu: float | None = typer.Option(
        None,
        "--cpu",
        min=0.001,
        max=options.HOST_CORES_MAX,
        callback=options.finite,
        help="Each worker's CPU limit in cores (cgroup CFS quota).",
    ),
    disk: float | None = typer.Option(
        None,
        "--disk",
        min=0.001,
        max=1e7,
        callback=options.finite,
        help="Each worker's disk read and write limit, MB/s (cgroup blkio).",
    ),
    worker_cores: int = typer.Option(
        1, "--worker-cores", min=1, max=options.HOST_CORES_MAX, help="Cores a worker offers."
    ),
    worker_memory: str = typer.Option("2g", "--worker-memory", help="Memory a worker offers."),
    subnet: str = typer.Option(DEFAULT_SUBNET, "--subnet", help="Private /24, 3 octets."),
    as_json: bool = typer.Option(False, "--json", help="Print the cluster's status as JSON."),
) -> None:
    """Build the namespaces, bridge and links, and start the master and workers.

    Anything that fails (or Ctrl-C) removes what was built. Example:
    perfmodel cluster up --workers 3 --rate 200 --cpu 1
    """
    # Checked before anything is built: the workers run pyspark's Spark.
    require_extra("spark", "perfmodel cluster up")
    from perfmodel.experiment import cluster as cl

    spec = cl.ClusterSpec(
        name=name,
        workers=workers,
        rate_mbit=rate,
        cpu_cores=cpu,
        disk_mbps=disk,
        worker_cores=worker_cores,
        worker_memory=worker_memory,
        subnet=subnet,
    )
    typer.echo(f"perfmodel: starting cluster {name!r} ({workers} workers)…", err=True)
    started = time.monotonic()
    state = cl.up(spec)
    if as_json:
        from perfmodel.report import renderer

        renderer("json").cluster_status(cl.status(name), sys.stdout)
        return
    typer.echo(
        f"cluster {name!r} up in {time.monotonic() - started:.0f} s: master {state.master_url}, "
        f"workers {', '.join(n.address for n in state.workers)}"
    )
    typer.echo(f"run a driver with: perfmodel cluster record --name {name} -- spark-submit …")


@cluster_app.command("down")
def down_command(name: str = _NAME) -> None:
    """Stop every process of the cluster and remove all it built (safe to repeat)."""
    from perfmodel.experiment import cluster as cl

    removed = cl.down(name)
    typer.echo(f"cluster {name!r}: removed {len(removed)} items" if removed else "nothing to do")


@cluster_app.command("status")
def status_command(
    name: str = _NAME, as_json: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """What exists of the cluster: hosts, daemons, link limits, cgroups."""
    from perfmodel.experiment import cluster as cl
    from perfmodel.report import renderer

    renderer("json" if as_json else "text").cluster_status(cl.status(name), sys.stdout)


@cluster_app.command(
    "exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def exec_command(
    command: list[str] = typer.Argument(..., help="The driver command, after `--`."),
    name: str = _NAME,
) -> None:
    """Run a command as a driver in the master's namespace, without recording."""
    state = _state(name)
    proc = subprocess.run(state.driver_command(command), env=state.driver_env(), check=False)
    raise typer.Exit(proc.returncode if proc.returncode >= 0 else 128 - proc.returncode)


@cluster_app.command(
    "record", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def record_command(
    command: list[str] = typer.Argument(..., help="The driver command, after `--`."),
    name: str = _NAME,
    out: Path = typer.Option(
        ..., "--out", "-o", parser=options.output_path, help="Bundle directory to create."
    ),
    interval_ms: int = typer.Option(
        CLUSTER_INTERVAL_MS,
        "--interval-ms",
        min=1,
        max=options.INTERVAL_MS_MAX,
        help="Sampling interval (default 50 ms, as `perfmodel record`'s with the plugin's "
        "sampler: see below).",
    ),
    python_interval_ms: int | None = typer.Option(
        None,
        "--python-interval-ms",
        min=1,
        max=options.INTERVAL_MS_MAX,
        help="py-spy's sampling interval for Python processes (default: --interval-ms).",
    ),
    jfr_on: bool = typer.Option(True, "--jfr/--no-jfr", help="Record JVM stack samples."),
    jvm_sampler: JvmSampler = typer.Option(
        JvmSampler.plugin, "--jvm-sampler", help=JVM_SAMPLER_HELP
    ),
    pyspy_on: bool = typer.Option(
        True, "--pyspy/--no-pyspy", help="Record Python samples with py-spy."
    ),
) -> None:
    """Record a driver command on the cluster, executors included, into one bundle.

    `perfmodel record` with the driver in the master's namespace; every executor the
    workers start is recorded too (the plugin's sampler, py-spy for its Python workers).

    Its defaults are the cheapest way measured to record small executors, `--jvm-sampler
    plugin --interval-ms 50`: no JFR start-up in each executor JVM, and half the samples.
    On the same runs its samples predicted as JFR's at 20 ms did (docs/cluster.md); pass
    `--jvm-sampler jfr --interval-ms 20` for JFR's richer flame graphs (every JVM thread,
    not safepoint-biased).

    Example: perfmodel cluster record -o run1 -- spark-submit app.py
    """
    if pyspy_on:
        require_extra("record", "recording Python stacks (--no-pyspy records without them)")
    from perfmodel.profile.record.run import record
    from perfmodel.profile.record.setup import RecordOptions

    state = _state(name)
    options = RecordOptions(
        out=out,
        interval_ms=interval_ms,
        python_interval_ms=python_interval_ms,
        jfr=jfr_on,
        jvm_sampler=jvm_sampler.value,
        pyspy=pyspy_on,
        daemon_pids=tuple(state.daemon_pids()),
    )
    result = record(state.driver_command(command), options, state.driver_env())
    for warning in result.warnings:
        typer.echo(f"perfmodel: warning: {warning}", err=True)
    samples = result.manifest.samples
    typer.echo(
        f"perfmodel: bundle written to {out} ({samples.get('rows', 0)} samples; "
        f"{samples.get('with_task_id', 0)} tied to tasks; by source: "
        f"{json.dumps(samples.get('by_source', {}))})",
        err=True,
    )
    raise typer.Exit(result.exit_code)
