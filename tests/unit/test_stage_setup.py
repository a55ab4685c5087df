"""`stage_work.stage_setup`: the part of a stage's first task on each executor that was the
stage's set-up there, on hand-built task arrays whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.simulate.stage_work import COMPONENTS, CPU, GC, SCHEDULING, stage_setup


def _tasks(cpu: list[float], sched: list[float], gc: list[float] | None = None) -> np.ndarray:
    comp = np.zeros((len(COMPONENTS), len(cpu)))
    comp[CPU] = cpu
    comp[SCHEDULING] = sched
    if gc is not None:
        comp[GC] = gc
    return comp


def test_the_first_task_on_each_executor_pays_the_stages_set_up() -> None:
    # One stage, two executors, six tasks in launch order; the first on each executor
    # deserialised 600 / 500 ms (the others 100) and ran 5 s where the others ran 1 s, for
    # the same 1000 records.
    executor = np.array([0, 1, 0, 1, 0, 1])
    deser = np.array([600.0, 500, 100, 100, 100, 100])
    records = np.full(6, 1000.0)
    comp = _tasks([5000, 5000, 1000, 1000, 1000, 1000], [700, 700, 150, 150, 150, 150])
    parts, paid = stage_setup(executor, deser, records, comp, np.array([0]), np.array([6]))
    assert paid == [2]
    # Scheduling: the deserialisation beyond the later tasks' mean.
    np.testing.assert_allclose(parts[SCHEDULING], [500, 400, 0, 0, 0, 0])
    # The rest of the 4550 ms beyond a later task's 1150 per 1000 records, from the other
    # components in proportion (only CPU here).
    np.testing.assert_allclose(parts[CPU], [4050, 4150, 0, 0, 0, 0])
    assert parts.sum(axis=0)[2:].sum() == 0.0


def test_a_first_task_that_read_more_pays_only_its_excess_per_record() -> None:
    # The first task read twice the records of the later ones: 2 × 1100 ms is expected of
    # it, so only 3000 − 2200 of its CPU (and GC in proportion) was set-up.
    executor = np.array([3, 3, 3])
    deser = np.zeros(3)
    records = np.array([2000.0, 1000, 1000])
    comp = _tasks([2400, 1000, 1000], [0, 0, 0], gc=[600, 100, 100])
    parts, paid = stage_setup(executor, deser, records, comp, np.array([0]), np.array([3]))
    assert paid == [1]
    excess = 3000 - 2 * 1100
    np.testing.assert_allclose(parts[CPU], [excess * 0.8, 0, 0])
    np.testing.assert_allclose(parts[GC], [excess * 0.2, 0, 0])


def test_a_stage_of_first_tasks_only_counts_their_deserialisation() -> None:
    # Stage 0: each task the first on its executor, nothing to compare with; stage 1: one
    # task on each executor, its first, and the same task lengths (no set-up beyond them).
    executor = np.array([0, 1, 0, 1])
    deser = np.array([300.0, 200, 0, 0])
    records = np.full(4, 10.0)
    comp = _tasks([900, 800, 500, 500], [400, 100, 5, 5])
    parts, paid = stage_setup(executor, deser, records, comp, np.array([0, 2]), np.array([2, 2]))
    np.testing.assert_allclose(parts[SCHEDULING], [300, 100, 0, 0])  # capped at scheduling
    assert parts[CPU].sum() == 0.0
    assert paid == [2, 0]  # stage 1 measured no set-up


def test_nothing_to_pay_where_the_first_tasks_were_no_slower() -> None:
    executor = np.array([0, 0, 1, 1])
    comp = _tasks([800, 1000, 900, 1000], [10, 10, 10, 10])
    parts, paid = stage_setup(
        executor, np.zeros(4), np.zeros(4), comp, np.array([0]), np.array([4])
    )
    assert parts.sum() == pytest.approx(0.0)
    assert paid == [0]


def test_no_tasks() -> None:
    parts, paid = stage_setup(
        np.zeros(0, np.int64),
        np.zeros(0),
        np.zeros(0),
        np.zeros((len(COMPONENTS), 0)),
        np.zeros(2, np.int64),
        np.zeros(2, np.int64),
    )
    assert parts.shape == (len(COMPONENTS), 0) and paid == [0, 0]
