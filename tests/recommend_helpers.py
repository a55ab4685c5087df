"""Shared builders for the recommend tests: synthetic profiles behind the facade's protocol."""

from __future__ import annotations

from perfmodel.dag.model import ApplicationProfile
from perfmodel.recommend.catalog import COLUMNS, MachineType, parse_catalog_text
from perfmodel.simulate.config import BaselineOverrides, ClusterConfig, baseline_config
from perfmodel.simulate.replay import Prediction, replay_baseline, replay_workload
from perfmodel.simulate.workload import Workload, compile_workload

HEADER = ",".join(COLUMNS)


class SyntheticAnalysis:
    """What `perfmodel.analysis.Analysis` offers the search, for a hand-built profile."""

    def __init__(self, profile: ApplicationProfile, overrides: BaselineOverrides | None = None):
        self.profile = profile
        self.source = "synthetic"
        self.notes: list[str] = []
        self._baseline = baseline_config(profile, overrides)
        self._workload = compile_workload(profile, self._baseline)
        self._replayed = replay_baseline(self._workload, self._baseline)
        self.calls = 0

    @property
    def baseline(self) -> ClusterConfig:
        return self._baseline

    @property
    def workload(self) -> Workload:
        return self._workload

    def predict(self, change: object = None) -> Prediction:
        from perfmodel.simulate.config import WhatIf, apply_what_if

        self.calls += 1
        if change is None:
            target = self._baseline
        elif isinstance(change, WhatIf):
            target = apply_what_if(self._baseline, change)
        else:
            assert isinstance(change, ClusterConfig)
            target = change
        return replay_workload(self._workload, self._baseline, target, self._replayed)


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
