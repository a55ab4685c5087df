"""The shaped cluster an experiment's ``master = "cluster"`` runs need (docs/cluster.md).

Configurations come in grid order, which keeps those of one shape (workers, link rate)
together, so a cluster is built once per shape and torn down when the shape changes or the
experiment ends, however it ends.
"""

from __future__ import annotations

import os
from types import TracebackType

from perfmodel.experiment import cluster
from perfmodel.experiment.cluster import ClusterSpec, ClusterState
from perfmodel.experiment.spec import CLUSTER
from perfmodel.experiment.spec_grid import RunConfig

STUDY_NAME = "pms"
STUDY_SUBNET = "10.77.2"
"""The study clusters' name and subnet; ``PERFMODEL_STUDY_CLUSTER`` and
``PERFMODEL_STUDY_SUBNET`` give others, so two studies on one machine do not take down each
other's cluster (`study_cluster`)."""
WORKER_MEMORY = "4g"
"""What each worker offers; the executors' heaps are the configs' ``executor_memory``."""
WORKER_CPU = 0.5
"""Each worker's CPU quota, in cores. Worker "hosts" share this machine's cores: uncapped,
three 1-core workers on 2 cores would get 2/3 of a core each, so a 2 → 3 worker change would
add slots but no CPU, and the worker-count what-if would be tested against a machine that
does not have the hosts it assumes. Capped at 0.5, three workers (1.5 cores) leave half a
core to the driver, the master and worker daemons and the samplers. At 0.6 (the first
study) they did not: the join's tasks ran 25% longer on three workers than on two with the
same CPU time per task, the shared host, not the model, capping the speed-up.
``PERFMODEL_CLUSTER_WORKER_CPU`` overrides it (``none``: no cap)."""


def worker_cpu() -> float | None:
    """The CPU quota per worker of the study's clusters (`WORKER_CPU` unless overridden)."""
    text = os.environ.get("PERFMODEL_CLUSTER_WORKER_CPU", "").strip().lower()
    if not text:
        return WORKER_CPU
    if text == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 64:
        raise cluster.ClusterError(
            f"PERFMODEL_CLUSTER_WORKER_CPU={text!r}: give cores per worker (e.g. 0.5) or none"
        )
    return value


def study_cluster() -> tuple[str, str]:
    """(name, subnet) of the study's clusters: `STUDY_NAME` and `STUDY_SUBNET` unless the
    environment gives others."""
    name = os.environ.get("PERFMODEL_STUDY_CLUSTER", "").strip() or STUDY_NAME
    subnet = os.environ.get("PERFMODEL_STUDY_SUBNET", "").strip() or STUDY_SUBNET
    return name, subnet


class ClusterSession:
    """Hands out the cluster a config runs on (None for local mode), building it as needed."""

    def __init__(self, name: str | None = None, subnet: str | None = None) -> None:
        default_name, default_subnet = study_cluster()
        self.name = name or default_name
        self.subnet = subnet or default_subnet
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
            cpu_cores=worker_cpu(),
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
