"""Baseline resolution and what-if changes, including their stated sources."""

import pytest

from perfmodel.dag.model import ApplicationProfile, ResourceConfig
from perfmodel.simulate.config import (
    DEFAULT_MEMORY_BYTES,
    BaselineOverrides,
    ConfigError,
    WhatIf,
    apply_what_if,
    baseline_config,
)


def _cluster() -> ApplicationProfile:
    p = ApplicationProfile(app_id="a")
    p.resources = ResourceConfig(
        master="yarn",
        executor_instances=8,
        executor_cores=4,
        executor_memory_bytes=10 << 30,
        hosts=4,
        total_slots=32,
    )
    return p


def test_cluster_baseline() -> None:
    b = baseline_config(_cluster())
    assert (b.executors, b.executor_cores, b.hosts, b.slots) == (8, 4, 4, 32)
    assert b.slots_per_host == 8
    assert b.host_cores == 8
    assert b.memory_bytes == 10 << 30
    assert b.sources["disk_bw"].startswith("default")


def test_missing_memory_uses_stated_default() -> None:
    p = ApplicationProfile(app_id="a")
    p.resources = ResourceConfig(master="local[2]", executor_cores=2, local_mode=True, hosts=1)
    b = baseline_config(p)
    assert b.memory_bytes == DEFAULT_MEMORY_BYTES
    assert "default" in b.sources["memory_bytes"]
    assert b.host_cores_assumed
    assert "--host-cores" in b.sources["host_cores"]


def test_local_star_knows_its_cores() -> None:
    p = ApplicationProfile(app_id="a")
    p.resources = ResourceConfig(master="local[*]", executor_cores=12, local_mode=True, hosts=1)
    b = baseline_config(p)
    assert b.host_cores == 12 and not b.host_cores_assumed


def test_cores_change_in_cluster_mode_adds_executors_and_hosts() -> None:
    b = baseline_config(_cluster())
    t = apply_what_if(b, WhatIf(cores=64))
    assert (t.executors, t.executor_cores, t.hosts, t.slots) == (16, 4, 8, 64)


def test_local_host_stays_the_same_machine() -> None:
    p = ApplicationProfile(app_id="a")
    p.resources = ResourceConfig(master="local[1]", executor_cores=1, local_mode=True, hosts=1)
    b = baseline_config(p, BaselineOverrides(host_cores=2))
    t = apply_what_if(b, WhatIf(cores=4))
    assert t.slots == 4 and t.host_cores == 2


def test_cluster_hosts_given_cores_stay_that_machine() -> None:
    """``--host-cores`` names the profiled hosts: no change replays them as they are, and a
    change keeps them unless its executors need more cores per host than they have."""
    b = baseline_config(_cluster(), BaselineOverrides(host_cores=16))
    assert b.host_cores == 16 and not b.host_cores_assumed
    assert apply_what_if(b, WhatIf()).host_cores == 16
    assert apply_what_if(b, WhatIf(executors=16)).host_cores == 16
    assert apply_what_if(b, WhatIf(executor_cores=8)).host_cores == 16
    assert apply_what_if(b, WhatIf(executor_cores=12)).host_cores == 24
    assumed = baseline_config(_cluster())  # assumed: the cores the cluster manager allots
    assert apply_what_if(assumed, WhatIf(executor_cores=2)).host_cores == 4


def test_contradictory_cores_are_refused() -> None:
    b = baseline_config(_cluster())
    with pytest.raises(ConfigError, match="give two of the three"):
        apply_what_if(b, WhatIf(cores=10, executors=2, executor_cores=4))
    with pytest.raises(ConfigError):
        apply_what_if(b, WhatIf(cores=0))


def test_executors_make_no_sense_in_local_mode() -> None:
    p = ApplicationProfile(app_id="a")
    p.resources = ResourceConfig(master="local[2]", executor_cores=2, local_mode=True, hosts=1)
    with pytest.raises(ConfigError, match="local mode"):
        apply_what_if(baseline_config(p), WhatIf(executors=4))


def test_bandwidth_factor_and_absolute() -> None:
    b = baseline_config(_cluster(), BaselineOverrides(disk_bw=100e6))
    assert apply_what_if(b, WhatIf(disk_factor=2.0)).disk_bw == 200e6
    assert apply_what_if(b, WhatIf(disk_bw=500e6)).disk_bw == 500e6
    assert apply_what_if(b, WhatIf()) == b
