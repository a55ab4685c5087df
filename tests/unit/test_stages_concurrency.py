"""`rescale.stages_concurrency`: every stage's expected concurrency in one array pass must be,
to the bit, what the replay computed one stage at a time before (`one_stage` below), on
real logs and what-ifs that change slots, hosts or neither."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf, apply_what_if
from perfmodel.simulate.rescale import (
    all_stage_times,
    base_totals,
    scaled_concurrency,
    stages_concurrency,
)
from perfmodel.simulate.stage_work import StageWork
from tests.conftest import SHARED_EVENTLOGS

DATA = Path(__file__).resolve().parents[1] / "data" / "eventlogs"
LOGS = [
    DATA / "wordcount.zstd",
    SHARED_EVENTLOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd",
    SHARED_EVENTLOGS / "application_1538416563558_0014",
]
CHANGES = [
    WhatIf(),
    WhatIf(cores=1),
    WhatIf(cores=16),
    WhatIf(executors=1),
    WhatIf(executors=7, executor_cores=3),
    WhatIf(memory_bytes=512 * 1024**2),
]


def one_stage(work: StageWork, base: ClusterConfig, new: ClusterConfig) -> float:
    """One stage at a time, as the replay computed it before."""
    if new.slots == base.slots and new.hosts == base.hosts:
        return work.concurrency
    total, longest = base_totals(work)
    k1 = scaled_concurrency(
        work.concurrency, total, longest, base, new.slots, new.hosts, new.slots_per_host
    )
    return float(k1)


def k0_of(works: list[StageWork]) -> np.ndarray:
    return np.array([w.concurrency for w in works], dtype=np.float64)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_one_pass_equals_stage_by_stage(log: Path) -> None:
    if not log.exists():
        pytest.skip(f"{log} not found (shared event logs absent)")
    analysis = perfmodel.load(log)
    works = analysis.workload.stages
    base = analysis.baseline
    assert works
    tried = 0
    for change in CHANGES:
        try:
            new = apply_what_if(base, change)
        except ConfigError:  # executors in local mode
            continue
        tried += 1
        one_by_one = np.array([one_stage(w, base, new) for w in works])
        kept = [base_totals(w) if i % 2 else None for i, w in enumerate(works)]
        at_once = stages_concurrency(works, k0_of(works), base, new, kept)
        assert at_once.dtype == np.float64 and at_once.shape == (len(works),)
        assert at_once.tobytes() == one_by_one.tobytes(), change
    assert tried >= 4


def test_a_stage_without_task_time_keeps_its_concurrency() -> None:
    log = DATA / "wordcount.zstd"
    analysis = perfmodel.load(log)
    base = analysis.baseline
    new = apply_what_if(base, WhatIf(cores=8))
    works = analysis.workload.stages
    at_once = stages_concurrency(works, k0_of(works), base, new, [(0.0, 0.0)] * len(works))
    assert at_once.tolist() == [w.concurrency for w in works]


def test_co_running_cpu_change_is_a_plain_float() -> None:
    """A stage whose co-running moves its CPU work gave a numpy float, which made the
    prediction's runtime (through the CPU floor) and the recommender's bounds numpy floats
    that `json.dumps` refuses (a flaky end-to-end test, whichever point was cheapest)."""
    analysis = perfmodel.load(DATA / "wordcount.zstd")
    base = analysis.baseline
    works = [replace(w, co_running=0.5) for w in analysis.workload.stages]
    times = all_stage_times(works, base, apply_what_if(base, WhatIf(cores=1)))
    changes = [t.cpu_work_change_ms for t in times]
    assert any(c != 0.0 for c in changes)
    assert all(type(c) is float for c in changes)
