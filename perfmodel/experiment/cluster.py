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

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType

import psutil

from perfmodel.experiment import netns
from perfmodel.experiment.netns import ClusterError

DEFAULT_NAME = "pmc"
DEFAULT_SUBNET = "10.77.0"
MASTER_PORT = 7077
STATE_FILE = "state.json"
MASTER_READY = "I have been elected leader"
WORKER_READY = "Successfully registered with master"
_NAME = re.compile(r"^[a-z][a-z0-9]{0,5}$")
_PRIVATE = re.compile(r"^(10\.\d{1,3}|172\.(1[6-9]|2\d|3[01])|192\.168)\.\d{1,3}$")


def state_root() -> Path:
    """Where clusters keep their state, logs and work directories."""
    return Path(os.environ.get("PERFMODEL_CLUSTER_DIR", "/tmp/perfmodel-cluster"))


@dataclass(slots=True)
class ClusterSpec:
    """What to build. Rates in Mbit/s, disk in MB/s; None leaves that resource unlimited."""

    name: str = DEFAULT_NAME
    workers: int = 2
    rate_mbit: float | None = None
    cpu_cores: float | None = None
    disk_mbps: float | None = None
    worker_cores: int = 1
    worker_memory: str = "2g"
    subnet: str = DEFAULT_SUBNET
    """The first three octets of a private /24: master .2, workers .11, .12, …"""
    start_timeout_s: float = 180.0

    def validate(self) -> None:
        if not _NAME.match(self.name):
            raise ClusterError(
                f"cluster name {self.name!r}: 1-6 lowercase letters or digits, starting with a "
                "letter (it prefixes interface names, which Linux limits to 15 characters)"
            )
        if not 1 <= self.workers <= 9:
            raise ClusterError(f"workers must be 1-9, not {self.workers}")
        if not _PRIVATE.match(self.subnet) or any(int(o) > 255 for o in self.subnet.split(".")):
            raise ClusterError(
                f"subnet {self.subnet!r}: give three octets of a private range, e.g. 10.77.0"
            )
        for label, value in (("rate", self.rate_mbit), ("cpu", self.cpu_cores)):
            if value is not None and value <= 0:
                raise ClusterError(f"{label} limit must be positive, not {value}")
        if self.disk_mbps is not None and self.disk_mbps <= 0:
            raise ClusterError(f"disk limit must be positive, not {self.disk_mbps}")
        if self.worker_cores < 1:
            raise ClusterError(f"worker cores must be at least 1, not {self.worker_cores}")


@dataclass(slots=True)
class Node:
    """One host: its namespace, address, link, cgroups and daemon process."""

    role: str
    namespace: str
    address: str
    host_link: str
    cgroups: list[str] = field(default_factory=list)
    pid: int | None = None
    started: float | None = None
    """The daemon's create time (psutil), so a reused pid is never taken for it."""
    log: str = ""


@dataclass(slots=True)
class ClusterState:
    spec: ClusterSpec
    directory: Path
    bridge: str
    nodes: list[Node]
    created: list[str] = field(default_factory=list)
    """What has been built, in order (a log for the reader; `down` finds things by name)."""

    @property
    def master(self) -> Node:
        return self.nodes[0]

    @property
    def workers(self) -> list[Node]:
        return self.nodes[1:]

    @property
    def master_url(self) -> str:
        return f"spark://{self.master.address}:{MASTER_PORT}"

    @property
    def conf_dir(self) -> Path:
        """The drivers' ``SPARK_CONF_DIR``: master URL and the driver's address."""
        return self.directory / "conf"

    def daemon_pids(self) -> list[int]:
        """The running workers, whose descendants are the applications' executors."""
        return [n.pid for n in self.workers if n.pid is not None and _alive(n)]

    def driver_command(self, command: Sequence[str]) -> list[str]:
        """``command`` run as a driver in the master's namespace."""
        return ["ip", "netns", "exec", self.master.namespace, *command]

    def driver_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The driver's environment: the cluster's configuration, the master's address, and
        this Python for PySpark's workers (unless set)."""
        env = dict(os.environ if base is None else base)
        env["SPARK_CONF_DIR"] = str(self.conf_dir)
        env["SPARK_LOCAL_IP"] = self.master.address
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        env.setdefault("PYSPARK_DRIVER_PYTHON", env["PYSPARK_PYTHON"])
        return env

    def save(self) -> None:
        data = {
            "spec": asdict(self.spec),
            "directory": str(self.directory),
            "bridge": self.bridge,
            "nodes": [asdict(n) for n in self.nodes],
            "created": self.created,
        }
        tmp = self.directory / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.directory / STATE_FILE)

    @classmethod
    def load(cls, name: str) -> ClusterState | None:
        path = state_root() / name / STATE_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                spec=ClusterSpec(**data["spec"]),
                directory=Path(data["directory"]),
                bridge=data["bridge"],
                nodes=[Node(**n) for n in data["nodes"]],
                created=list(data.get("created", [])),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ClusterError(
                f"{path} is not a readable cluster state ({exc}); `down` still removes "
                "everything named after the cluster"
            ) from None


def plan(spec: ClusterSpec) -> ClusterState:
    """Names and addresses of everything `up` will build, before anything is built."""
    spec.validate()
    name = spec.name
    nodes = [Node("master", f"{name}-m", f"{spec.subnet}.2", f"{name}-m-h")]
    for i in range(1, spec.workers + 1):
        nodes.append(Node("worker", f"{name}-w{i}", f"{spec.subnet}.{10 + i}", f"{name}-w{i}-h"))
    return ClusterState(spec, state_root() / name, f"{name}-br", nodes)


def leftovers(name: str) -> list[str]:
    """Everything on this machine named after cluster ``name``."""
    prefix = f"{name}-"
    found = [f"namespace {ns}" for ns in netns.namespaces() if ns.startswith(prefix)]
    found += [f"link {link}" for link in netns.links() if link.startswith(prefix)]
    found += [f"cgroup {c}/{g}" for c, g in netns.cgroups_named(prefix)]
    return found


def up(spec: ClusterSpec) -> ClusterState:
    """Build and start the cluster; on any failure or interruption, remove what was built."""
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
    try:
        import pyspark
    except ImportError:
        raise ClusterError("pyspark is not installed in this environment") from None
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
            elif not _alive(node):
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


def _alive(node: Node) -> bool:
    if node.pid is None:
        return False
    try:
        proc = psutil.Process(node.pid)
        return proc.create_time() == node.started and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _cluster_processes(name: str, state: ClusterState | None) -> list[psutil.Process]:
    """The daemons and every process in the cluster's namespaces (drivers, executors,
    Python workers)."""
    pids: set[int] = set()
    if state is not None:
        pids |= {n.pid for n in state.nodes if n.pid is not None and _alive(n)}
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
                "running": _alive(node),
                "cgroups": node.cgroups,
                "qdisc": netns.qdiscs(node.namespace, "eth0") if present else "",
                "log": node.log,
            }
        )
    out["hosts"] = hosts
    return out
