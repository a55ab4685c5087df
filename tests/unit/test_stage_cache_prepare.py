"""`rescale._working_sets_and_idle_rows`: every stage's working set and idle rows from
all stages' tasks at once must equal, value for value, the per-stage `working_set` and
idle rows it replaced (`idle_rows` below), including stages without tasks, -0.0, NaN and
infinities."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.simulate.rescale import _working_sets_and_idle_rows, working_set
from perfmodel.simulate.stage_work import (
    COMPONENTS,
    CPU,
    CPU_OTHER,
    DISK,
    GC,
    NETWORK,
    SPILL,
    StageWork,
)
from tests.conftest import SHARED_EVENTLOGS

DATA = Path(__file__).resolve().parents[1] / "data" / "eventlogs"
LOGS = [
    DATA / "wordcount.zstd",
    SHARED_EVENTLOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd",
    SHARED_EVENTLOGS / "tasks_executors_fail_compressed_eventlog.zstd",
]


def idle_rows(work: StageWork, ws: np.ndarray) -> tuple[bool, bool, bool, bool, bool]:
    """One stage at a time, as the replay cache computed it before."""
    c = work.components
    return (
        not (c[CPU].any() or c[CPU_OTHER].any()),
        not c[GC].any(),
        not c[NETWORK].any(),
        not c[DISK].any(),
        not (c[SPILL].any() or work.memory_spill.any() or np.signbit(c[SPILL]).any())
        and bool(np.isfinite(ws).all()),
    )


def reference(works: list[StageWork]) -> tuple[list[np.ndarray], list[tuple[bool, ...]]]:
    sets = [working_set(w) for w in works]
    return sets, [idle_rows(w, ws) for w, ws in zip(works, sets, strict=True)]


def assert_same(works: list[StageWork]) -> None:
    sets, idle = _working_sets_and_idle_rows(works)
    want_sets, want_idle = reference(works)
    assert idle == want_idle
    assert len(sets) == len(want_sets)
    for got, want in zip(sets, want_sets, strict=True):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_real_logs(log: Path) -> None:
    if not log.exists():
        pytest.skip(f"{log} not found (shared event logs absent)")
    works = perfmodel.load(log).workload.stages
    assert works
    assert_same(works)


@pytest.fixture(scope="module")
def template() -> StageWork:
    return perfmodel.load(DATA / "wordcount.zstd").workload.stages[0]


VALUES = st.sampled_from([0.0, -0.0, 1.5, 3e9, np.nan, np.inf, -np.inf, -2.0])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(data=st.data(), sizes=st.lists(st.integers(0, 3), min_size=1, max_size=6))
def test_any_stages_any_values(template: StageWork, data: st.DataObject, sizes: list[int]) -> None:
    works = []
    for n in sizes:

        def row(n: int = n) -> np.ndarray:
            return np.array(data.draw(st.lists(VALUES, min_size=n, max_size=n)), dtype=float)

        works.append(
            replace(
                template,
                components=np.stack([row() for _ in COMPONENTS]).reshape(len(COMPONENTS), n),
                peak_memory=row(),
                memory_spill=row(),
                disk_spill=row(),
                read_bytes=row(),
            )
        )
    with np.errstate(invalid="ignore"):
        assert_same(works)


def test_no_tasks_at_all(template: StageWork) -> None:
    empty = np.zeros(0)
    stage = replace(
        template,
        components=np.zeros((len(COMPONENTS), 0)),
        peak_memory=empty,
        memory_spill=empty,
        disk_spill=empty,
        read_bytes=empty,
    )
    assert_same([stage, stage])
    assert _working_sets_and_idle_rows([]) == ([], [])
