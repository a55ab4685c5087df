"""A Spark standalone cluster on this machine, each host in its own network namespace, with the
links, CPU and disk shaped: the multi-host setting `perfmodel record` and the what-if models
are checked in (docs/cluster.md).

``up`` builds a bridge, a namespace per host (``<name>-m`` for the master, ``<name>-w1``… for
the workers) joined to it by a veth pair on a private /24 it numbers itself, limits each
worker's link with a `tc` token bucket (both directions), optionally caps each worker's CPU
(CFS quota) and disk bandwidth (blkio) with cgroup v1, and starts a master and one worker per
namespace. Every step is written to a state file as it is taken, and any failure (Ctrl-C and
SIGTERM included) tears down what was built. ``down`` is idempotent and needs no state file:
whatever carries the cluster's name (namespaces, links, cgroups, processes in the namespaces)
is removed. Applications run as the driver in the master's namespace (`driver_command`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from types import FrameType

import psutil

from perfmodel.experiment import netns
from perfmodel.experiment.cluster_state import (
    DEFAULT_NAME,
    DEFAULT_SUBNET,
    MASTER_PORT,
    MASTER_READY,
    STATE_FILE,
    WORKER_READY,
    ClusterSpec,
    ClusterState,
    Node,
    alive,
    plan,
    state_root,
)
from perfmodel.experiment.netns import ClusterError
from perfmodel.extras import require_extra

__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_SUBNET",
    "MASTER_PORT",
    "ClusterError",
    "ClusterSpec",
    "ClusterState",
    "down",
    "leftovers",
    "plan",
    "running",
    "status",
    "up",
]


def leftovers(name: str) -> list[str]:
    """Everything on this machine named after cluster ``name``."""
    prefix = f"{name}-"
    found = [f"namespace {ns}" for ns in netns.namespaces() if ns.startswith(prefix)]
    found += [f"link {link}" for link in netns.links() if link.startswith(prefix)]
    found += [f"cgroup {c}/{g}" for c, g in netns.cgroups_named(prefix)]
    return found


def up(spec: ClusterSpec) -> ClusterState:
    """Build and start the cluster; on any failure or interruption, remove what was built."""
    require_extra("spark", "perfmodel cluster up")
    reason = netns.unavailable_reason()
    if reason:
        raise ClusterError(f"cannot build a cluster: {reason}")
    state = plan(spec)
    existing = leftovers(spec.name)
    if existing or (state.directory / STATE_FILE).exists():
        raise ClusterError(
            f"cluster {spec.name!r} already exists ({', '.join(existing) or 'state file'}); "
            f"run `perfmodel cluster down --name {spec.name}` first"
        )
    state.directory.mkdir(parents=True, exist_ok=True)
    try:
        with _sigterm_interrupts():
            _build(state)
            _start(state)
    except BaseException:
        down(spec.name)
        raise
    return state


@contextmanager
def running(spec: ClusterSpec) -> Iterator[ClusterState]:
    """A cluster for the duration of a block, torn down however the block ends."""
    state = up(spec)
    try:
        yield state
    finally:
        down(spec.name)


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt meanwhile, so a killed `up` still cleans up."""

    def _raise(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGTERM")

    try:
        previous = signal.signal(signal.SIGTERM, _raise)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _build(state: ClusterState) -> None:
    spec = state.spec
    state.save()
    netns.add_bridge(state.bridge)
    state.created.append(f"bridge {state.bridge}")
    state.save()
    device = netns.backing_device(state.directory) if spec.disk_mbps else None
    for node in state.nodes:
        netns.add_namespace(node.namespace)
        state.created.append(f"namespace {node.namespace}")
        state.save()
        netns.add_veth(node.namespace, node.host_link, state.bridge, node.address)
        state.created.append(f"link {node.host_link} ({node.address})")
        if node.role == "worker":
            if spec.rate_mbit is not None:
                netns.shape_link(node.namespace, node.host_link, spec.rate_mbit)
                state.created.append(f"tbf {spec.rate_mbit:g} Mbit/s on {node.namespace}")
            node.cgroups = netns.make_cgroup(
                node.namespace,
                cpu_cores=spec.cpu_cores,
                disk_bps=int(spec.disk_mbps * 1e6) if spec.disk_mbps else None,
                disk_device=device,
            )
            state.created += [f"cgroup {c}/{node.namespace}" for c in node.cgroups]
        state.save()


def _spark_home() -> Path:
    require_extra("spark", "perfmodel cluster")
    import pyspark

    return Path(pyspark.__file__).parent


def _start(state: ClusterState) -> None:
    home = _spark_home()
    daemon_conf = state.directory / "daemon-conf"
    daemon_conf.mkdir(exist_ok=True)
    _write_driver_conf(state)
    master = state.master
    _launch(
        state,
        master,
        home,
        daemon_conf,
        ["org.apache.spark.deploy.master.Master", "--host", master.address],
        ["--port", str(MASTER_PORT), "--webui-port", "8080"],
    )
    _wait_for_log(state, [master], MASTER_READY)
    cores, memory = state.spec.worker_cores, state.spec.worker_memory
    for node in state.workers:
        work = state.directory / node.namespace
        (work / "local").mkdir(parents=True, exist_ok=True)
        _launch(
            state,
            node,
            home,
            daemon_conf,
            ["org.apache.spark.deploy.worker.Worker", "--host", node.address],
            ["--cores", str(cores), "--memory", memory, "--work-dir", str(work / "work")]
            + ["--webui-port", "8081", state.master_url],
        )
    _wait_for_log(state, state.workers, WORKER_READY)


def _write_driver_conf(state: ClusterState) -> None:
    state.conf_dir.mkdir(parents=True, exist_ok=True)
    address = state.master.address
    lines = [
        "# written by perfmodel cluster up: drivers run in the master's namespace",
        f"spark.master {state.master_url}",
        f"spark.driver.host {address}",
        f"spark.driver.bindAddress {address}",
    ]
    (state.conf_dir / "spark-defaults.conf").write_text("\n".join(lines) + "\n", "utf-8")


def _launch(
    state: ClusterState,
    node: Node,
    home: Path,
    daemon_conf: Path,
    main: list[str],
    args: list[str],
) -> None:
    """Start a daemon in ``node``'s namespace and cgroups, in its own session (so `down` can
    end it with everything it started)."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(home),
        SPARK_CONF_DIR=str(daemon_conf),
        SPARK_LOCAL_IP=node.address,
        SPARK_LOCAL_DIRS=str(state.directory / node.namespace / "local"),
        PYSPARK_PYTHON=env.get("PYSPARK_PYTHON") or sys.executable,
    )
    env.pop("SPARK_MASTER", None)
    log = state.directory / f"{node.namespace}.log"
    node.log = str(log)
    group, controllers = node.namespace, list(node.cgroups)
    with open(log, "wb") as out:  # a log of an earlier cluster would read as ready
        proc = subprocess.Popen(
            ["ip", "netns", "exec", node.namespace, str(home / "bin" / "spark-class"), *main]
            + args,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=(lambda: netns.join_cgroups(group, controllers)) if controllers else None,
        )
    node.pid = proc.pid
    node.started = psutil.Process(proc.pid).create_time()
    state.created.append(f"{node.role} pid {proc.pid} in {node.namespace}")
    state.save()


def _wait_for_log(state: ClusterState, nodes: list[Node], marker: str) -> None:
    deadline = time.monotonic() + state.spec.start_timeout_s
    waiting = list(nodes)
    while waiting:
        for node in list(waiting):
            text = Path(node.log).read_text(encoding="utf-8", errors="replace")
            if marker in text:
                waiting.remove(node)
            elif not alive(node):
                raise ClusterError(
                    f"the {node.role} in {node.namespace} exited while starting; "
                    f"its log ({node.log}) ends:\n{_tail(text)}"
                )
        if waiting and time.monotonic() > deadline:
            node = waiting[0]
            raise ClusterError(
                f"the {node.role} in {node.namespace} was not ready after "
                f"{state.spec.start_timeout_s:.0f} s; its log ({node.log}) ends:\n"
                + _tail(Path(node.log).read_text(encoding="utf-8", errors="replace"))
            )
        time.sleep(0.25)


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _cluster_processes(name: str, state: ClusterState | None) -> list[psutil.Process]:
    """The daemons and every process in the cluster's namespaces (drivers, executors,
    Python workers)."""
    pids: set[int] = set()
    if state is not None:
        pids |= {n.pid for n in state.nodes if n.pid is not None and alive(n)}
    for ns in netns.namespaces():
        if ns.startswith(f"{name}-"):
            pids |= set(netns.namespace_pids(ns))
    procs = []
    for pid in sorted(pids):
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            continue
    return procs


def down(name: str = DEFAULT_NAME, *, grace_s: float = 15.0) -> list[str]:
    """Stop the cluster's processes and remove all it built; what was removed. Idempotent."""
    reason = netns.unavailable_reason()
    if reason:
        raise ClusterError(f"cannot tear down a cluster: {reason}")
    state = ClusterState.load(name)
    removed: list[str] = []
    procs = _cluster_processes(name, state)
    for proc in procs:
        _signal(proc, signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        _signal(proc, signal.SIGKILL)
    psutil.wait_procs(alive, timeout=5)
    removed += [f"process {p.pid}" for p in procs]
    prefix = f"{name}-"
    for controller, group in netns.cgroups_named(prefix):
        _remove_cgroup_when_empty(controller, group)
        removed.append(f"cgroup {controller}/{group}")
    for ns in netns.namespaces():
        if ns.startswith(prefix):
            netns.remove_namespace(ns)
            removed.append(f"namespace {ns}")
    for link in netns.links():
        if link.startswith(prefix):
            netns.remove_link(link)
            removed.append(f"link {link}")
    state_file = state_root() / name / STATE_FILE
    if state_file.exists():
        state_file.unlink()
        removed.append(f"state {state_file}")
    return removed


def _signal(proc: psutil.Process, signum: int) -> None:
    try:
        proc.send_signal(signum)
    except psutil.Error:
        pass


def _remove_cgroup_when_empty(controller: str, group: str) -> None:
    """A cgroup can be removed once its last task has gone, which lags the task's exit."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            netns.remove_cgroup(controller, group)
            return
        except ClusterError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def status(name: str = DEFAULT_NAME) -> dict[str, object]:
    """What exists of cluster ``name``: state, hosts with their daemons and link limits."""
    state = ClusterState.load(name)
    existing = leftovers(name) if netns.unavailable_reason() is None else []
    out: dict[str, object] = {"name": name, "state_file": state is not None, "found": existing}
    if state is None:
        return out
    out["master_url"] = state.master_url
    out["conf_dir"] = str(state.conf_dir)
    out["spec"] = asdict(state.spec)
    hosts = []
    namespaces = set(netns.namespaces())
    for node in state.nodes:
        present = node.namespace in namespaces
        hosts.append(
            {
                "role": node.role,
                "namespace": node.namespace,
                "address": node.address,
                "present": present,
                "pid": node.pid,
                "running": alive(node),
                "cgroups": node.cgroups,
                "qdisc": netns.qdiscs(node.namespace, "eth0") if present else "",
                "log": node.log,
            }
        )
    out["hosts"] = hosts
    return out
