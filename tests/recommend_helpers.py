"""Shared builders for the recommend tests: synthetic profiles behind the facade's protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfmodel.analysis import Analysis, PartitionKnob, Prediction, analyse_profile
from perfmodel.dag.model import ApplicationProfile
from perfmodel.recommend.catalog import COLUMNS, MachineType, parse_catalog_text
from perfmodel.simulate.config import BaselineOverrides, ClusterConfig
from perfmodel.simulate.workload import Workload

HEADER = ",".join(COLUMNS)


class SyntheticAnalysis:
    """The facade's engine (`perfmodel.analysis.Engine`) on a hand-built profile, counting
    the replays a search asks for."""

    def __init__(self, profile: ApplicationProfile, overrides: BaselineOverrides | None = None):
        self.analysis: Analysis = analyse_profile(profile, overrides=overrides)
        self.profile = profile
        self.source = "synthetic"
        self.notes: list[str] = []
        self.calls = 0

    @property
    def baseline(self) -> ClusterConfig:
        return self.analysis.baseline

    @property
    def workload(self) -> Workload:
        return self.analysis.workload

    def predict(self, change: object = None) -> Prediction:
        self.calls += 1
        return self.analysis.predict(change)  # type: ignore[arg-type]

    def slot_only_s(self, change: object = None) -> float:
        return self.analysis.slot_only_s(change)  # type: ignore[arg-type]

    def lower_bounds_s(self, targets: Sequence[ClusterConfig]) -> np.ndarray:
        return self.analysis.lower_bounds_s(targets)

    def refined_bound_s(self, target: ClusterConfig) -> float:
        return self.analysis.refined_bound_s(target)

    @property
    def fast_replays(self) -> bool:
        return self.analysis.fast_replays

    def predict_settings(
        self, settings: Mapping[str, str], change: object = None, *, strict: bool = True
    ) -> Prediction:
        self.calls += 1
        return self.analysis.predict_settings(settings, change, strict=strict)  # type: ignore[arg-type]

    def partition_knob(self) -> PartitionKnob | None:
        return self.analysis.partition_knob()


def row(
    vm_type: str,
    vcpu: int,
    memory_gib: float,
    price: float,
    *,
    disk_mbps: float = 250,
    network_gbps: float = 10,
    cpu_speed: float = 1.0,
    granularity: int = 1,
    minimum: int = 0,
) -> str:
    return (
        f"{vm_type},test,{vcpu},{memory_gib},{network_gbps},{disk_mbps},{cpu_speed},{price},"
        f"{granularity},{minimum},nowhere,hand-written for a test,2026-01-01"
    )


def catalog(*rows: str) -> list[MachineType]:
    return parse_catalog_text("\n".join([HEADER, *rows]), "test.csv")
