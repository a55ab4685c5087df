"""The shaped cluster an experiment's ``master = "cluster"`` runs need (docs/cluster.md).

Configurations come in grid order, which keeps those of one shape (workers, link rate)
together, so a cluster is built once per shape and torn down when the shape changes or the
experiment ends, however it ends.
"""

from __future__ import annotations

from types import TracebackType

from perfmodel.experiment import cluster
from perfmodel.experiment.cluster import ClusterSpec, ClusterState
from perfmodel.experiment.spec import CLUSTER, RunConfig

STUDY_NAME = "pms"
STUDY_SUBNET = "10.77.2"
WORKER_MEMORY = "4g"
"""What each worker offers; the executors' heaps are the configs' ``executor_memory``."""


class ClusterSession:
    """Hands out the cluster a config runs on (None for local mode), building it as needed."""

    def __init__(self, name: str = STUDY_NAME, subnet: str = STUDY_SUBNET) -> None:
        self.name = name
        self.subnet = subnet
        self.state: ClusterState | None = None
        self.shape: tuple[int | None, float | None] | None = None

    def for_config(self, config: RunConfig) -> ClusterState | None:
        if config.master != CLUSTER:
            return None
        shape = (config.workers, config.rate_mbit)
        if self.state is not None and shape == self.shape:
            return self.state
        self.close()
        cluster.down(self.name)  # whatever an interrupted earlier study left
        spec = ClusterSpec(
            name=self.name,
            workers=config.workers or 2,
            rate_mbit=config.rate_mbit,
            worker_memory=WORKER_MEMORY,
            subnet=self.subnet,
        )
        self.state = cluster.up(spec)
        self.shape = shape
        return self.state

    def close(self) -> None:
        if self.state is not None:
            self.state = None
            self.shape = None
            cluster.down(self.name)

    def __enter__(self) -> ClusterSession:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()
