"""Each runtime law against answers worked out by hand."""

import numpy as np
import pytest

from perfmodel.simulate import laws


def test_compute_scales_with_speed() -> None:
    assert laws.compute_factor(1.0, 2.0) == 0.5
    assert laws.compute_factor(1.0, 0.5) == 2.0


def test_contention_only_beyond_the_host_cores() -> None:
    # 2 tasks each keeping 1 core busy on 4 cores: no slowdown.
    assert laws.contention_factor(2, 1.0, 4) == 1.0
    # 4 such tasks on 2 cores: processor sharing halves their speed.
    assert laws.contention_factor(4, 1.0, 2) == 2.0
    # A PySpark task keeping 1.25 cores busy (task thread + Python worker), 2 on 2 cores.
    assert laws.contention_factor(2, 1.25, 2) == pytest.approx(1.25)


def test_bandwidth_shared_by_streams() -> None:
    # Twice the bandwidth halves I/O time.
    assert laws.bandwidth_factor(100.0, 200.0, 1, 1) == 0.5
    # Twice the concurrent streams on the same device: each task's I/O takes twice as long.
    assert laws.bandwidth_factor(100.0, 100.0, 2, 4) == 2.0
    # Streams never count below one.
    assert float(laws.io_streams(4, 0.1)) == 1.0
    assert float(laws.io_streams(4, 1.0)) == 4.0


def test_reversed_roofline_is_linear_then_flat() -> None:
    ws = np.array([1000.0])
    points = [float(laws.overflow_bytes(ws, m)[0]) for m in (0, 250, 500, 1000, 2000)]
    assert points == [1000.0, 750.0, 500.0, 0.0, 0.0]


def test_spill_time_scales_with_overflow_or_is_charged_per_byte() -> None:
    base = np.array([100.0, 0.0])
    over0 = np.array([1000.0, 0.0])
    over1 = np.array([500.0, 200.0])
    out = laws.spill_time(base, over0, over1, ms_per_overflow_byte=0.5)
    assert out.tolist() == [50.0, 100.0]


def test_usable_memory_follows_spark() -> None:
    heap = 2 << 30
    assert laws.usable_memory(heap) == pytest.approx((heap - (300 << 20)) * 0.6)


def test_gc_inverse_to_heap_and_bounded() -> None:
    assert laws.gc_factor(1.0, 2.0) == 0.5
    assert laws.gc_factor(1.0, 100.0) == 0.25
    assert laws.gc_factor(100.0, 1.0) == 4.0


def test_remote_share_of_a_shuffle_grows_with_hosts() -> None:
    # A reducer fetches (h-1)/h of its input from other hosts: 1/2 on 2, 2/3 on 3.
    assert laws.remote_share_factor(2, 3) == pytest.approx((2 / 3) / (1 / 2))
    assert laws.remote_share_factor(3, 2) == pytest.approx((1 / 2) / (2 / 3))
    assert laws.remote_share_factor(4, 4) == pytest.approx(1.0)
    # Down to one host, nothing crosses a link; from one host there is nothing to scale.
    assert laws.remote_share_factor(2, 1) == pytest.approx(0.0)
    assert laws.remote_share_factor(1, 8) == pytest.approx(1.0)
    many = laws.remote_share_factor(2, np.array([2.0, 4.0, 100.0]))
    assert np.all(np.diff(many) > 0) and many[-1] < 2.0


def test_the_wait_for_remote_data_goes_only_where_nothing_is_remote() -> None:
    # One peer fetches nothing: the wait beyond the wire goes; elsewhere it is kept, as how
    # it grows with peers is not measured; a one-peer baseline waited for nothing remote.
    assert laws.fetch_latency_factor(2, 1) == 0.0
    assert laws.fetch_latency_factor(4, 1) == 0.0
    assert laws.fetch_latency_factor(2, 8) == 1.0
    assert laws.fetch_latency_factor(1, 4) == 1.0
    assert laws.fetch_latency_factor(3, np.array([1.0, 2.0, 3.0])).tolist() == [0.0, 1.0, 1.0]


def test_executor_background_is_paid_once_per_executor() -> None:
    # rho = B/(W/E) = 1: two executors each spend as much beside their tasks as on them.
    # Three executors: each does 2/3 of the task work but all of its own background, so a
    # unit of task work carries 1 + 1.5 instead of 1 + 1.
    assert float(laws.executor_background_factor(1.0, 2, 3)) == pytest.approx(2.5 / 2.0)
    assert float(laws.executor_background_factor(1.0, 3, 2)) == pytest.approx((1 + 2 / 3) / 2)
    assert float(laws.executor_background_factor(0.7, 4, 4)) == 1.0
    assert float(laws.executor_background_factor(0.0, 2, 8)) == 1.0
    # Whole-run check of the model it stands for: W = 40 core-s of tasks, B = 20 per JVM,
    # executors capped at c = 0.5 cores: the runtime is (W/E + B)/c.
    w, b, c = 40.0, 20.0, 0.5
    t2, t3 = (w / 2 + b) / c, (w / 3 + b) / c
    slots_only = t2 * 2 / 3
    factor = float(laws.executor_background_factor(b / (w / 2), 2, 3))
    assert slots_only * factor == pytest.approx(t3)


def test_co_running_tasks_each_take_more_cpu() -> None:
    # gamma 0.1: two tasks side by side on 2 cores each take 1.1× the CPU of one alone.
    assert float(laws.co_running_factor(0.1, 1, 2, 2, 2)) == pytest.approx(1.1)
    assert float(laws.co_running_factor(0.1, 2, 1, 2, 2)) == pytest.approx(1 / 1.1)
    # Beyond the cores tasks wait for a core (contention), which adds no CPU time.
    assert float(laws.co_running_factor(0.1, 1, 8, 2, 2)) == pytest.approx(1.1)
    # On more cores γ is per share of the host's other cores busy: a full host of any size
    # grows a task's CPU by γ, as the full 2-core host did (not 1 + 15γ on 16 cores).
    assert float(laws.co_running_factor(0.1, 1, 4, 2, 4)) == pytest.approx(1.1)
    assert float(laws.co_running_factor(0.1, 1, 16, 2, 16)) == pytest.approx(1.1)
    assert float(laws.co_running_factor(0.0, 1, 4, 4, 4)) == 1.0
    np.testing.assert_allclose(
        laws.co_running_factor(np.array([0.1, 0.2]), 1.0, np.array([2.0, 3.0]), 4, 4),
        [1.0 + 0.1 / 3, 1.0 + 0.2 * 2 / 3],
    )
    np.testing.assert_allclose(
        laws.co_running_load(np.array([1.0, 2.0, 3.0, 8.0]), 4), [1.0, 4 / 3, 5 / 3, 2.0]
    )
    np.testing.assert_allclose(laws.co_running_load(np.array([0.5, 2.0, 3.0]), 2), [1, 2, 2])


def test_a_shared_interpreter_lock_serialises_what_holds_it() -> None:
    # Pure Python (g = 1): two threads of one process run one at a time.
    assert laws.lock_factor(2, 1.0) == 2.0
    # One thread per process never waits for its lock.
    assert laws.lock_factor(1, 1.0) == 1.0
    # Code that holds the lock 30% of its CPU time: two threads fit, four do not.
    assert laws.lock_factor(2, 0.3) == 1.0
    assert laws.lock_factor(4, 0.3) == pytest.approx(1.2)
