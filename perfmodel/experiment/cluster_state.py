"""What a namespace cluster is made of, as plain data: the spec `up` is given, the names and
addresses it plans, and the state file it keeps while it builds (`perfmodel.experiment.cluster`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perfmodel.atomic import write_atomically
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
        return [n.pid for n in self.workers if n.pid is not None and alive(n)]

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
        write_atomically(self.directory / STATE_FILE, json.dumps(data, indent=2) + "\n")

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


def alive(node: Node) -> bool:
    if node.pid is None:
        return False
    # Imported here: the CLI reads this module's defaults at start-up, psutil is not needed.
    import psutil

    try:
        proc = psutil.Process(node.pid)
        return proc.create_time() == node.started and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
