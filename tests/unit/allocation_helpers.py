"""Cluster-mode profiles with known answers for the allocation replay's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfmodel.dag.model import ApplicationProfile, ExecutorInfo
from perfmodel.simulate.allocation import AllocationCosts
from perfmodel.simulate.allocation_replay import DynamicPlan
from perfmodel.simulate.allocation_settings import AllocationSettings
from perfmodel.simulate.config import ClusterConfig, baseline_config
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import Workload, compile_workload


def cluster_profile(
    jobs: Sequence[Sequence[StageSpec]],
    slots: int = 4,
    properties: Mapping[str, str] | None = None,
    driver_gap_ms: float = 0.0,
) -> ApplicationProfile:
    """A synthetic profile (`perfmodel.simulate.synthetic`) as if run on one standalone
    executor of ``slots`` cores that was there from the start."""
    profile = build_synthetic(
        jobs, slots, master="spark://master:7077", driver_gap_ms=driver_gap_ms
    )
    profile.framework_version = "3.5.1"
    r = profile.resources
    r.local_mode = False
    r.executor_instances = 1
    r.executor_cores = slots
    profile.executors["1"] = ExecutorInfo("1", "worker-1", cores=slots, added_ms=0.0)
    profile.properties.update(properties or {})
    profile.properties.setdefault("spark.master", r.master)
    return profile


def compiled(profile: ApplicationProfile) -> tuple[ClusterConfig, Workload]:
    base = baseline_config(profile)
    return base, compile_workload(profile, base)


def slot_durations(workload: Workload) -> list[list[float]]:
    """Each task's observed duration (what slot-only replay schedules)."""
    return [w.components.sum(axis=0).tolist() for w in workload.stages]


def equal_tasks(stage_id: int, n: int, ms: float, parents: Sequence[int] = ()) -> StageSpec:
    return StageSpec(stage_id, [TaskSpec(run_ms=ms, cpu_ms=ms)] * n, tuple(parents))


def plan(
    tasks_per_executor: int = 1,
    costs: AllocationCosts | None = None,
    capacity: int | None = None,
    **settings: object,
) -> DynamicPlan:
    values: dict[str, object] = {"enabled": True} | dict(settings)
    return DynamicPlan(
        AllocationSettings(**values),  # type: ignore[arg-type]
        tasks_per_executor,
        costs or AllocationCosts(),
        capacity,
    )
