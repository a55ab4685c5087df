"""The price of a shuffled byte a switched join pays (`perfmodel.simulate.join_switch`)."""

from __future__ import annotations

import pytest

from perfmodel.simulate.config import baseline_config
from perfmodel.simulate.join_switch import shuffle_cost
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload

MB = 1 << 20


def test_a_tiny_final_stage_does_not_price_the_shuffled_byte() -> None:
    """A map stage writes 200 MB of shuffle, a reduce stage reads it in 8 s of task time,
    and a final aggregation reads 1 KB in 0.5 s of fixed work. A byte costs what the 200 MB
    cost (about 8 s / 200 MB): a median of per-stage rates would have taken the
    aggregation's half-second per kilobyte, which priced a TPC-H join's shuffle at hours."""
    mapper = TaskSpec(
        run_ms=1500, cpu_ms=1000, shuffle_write_ms=500, input_bytes=100 * MB, shuffle_write=50 * MB
    )
    reducer = TaskSpec(run_ms=2000, cpu_ms=1800, remote_read=50 * MB, shuffle_write=256)
    final = TaskSpec(run_ms=500, cpu_ms=400, remote_read=1024)
    p = build_synthetic(
        [
            [
                StageSpec(0, [mapper] * 4),
                StageSpec(1, [reducer] * 4, [0]),
                StageSpec(2, [final], [1]),
            ]
        ],
        2,
    )
    cost = shuffle_cost(p, compile_workload(p, baseline_config(p)))
    assert cost is not None
    reduce_rate = 4 * 2000 / (200 * MB)
    assert 0.8 * reduce_rate < cost.read_ms_per_byte < 1.3 * reduce_rate
    assert cost.write_ms_per_byte == pytest.approx(4 * 500 / (200 * MB + 4 * 256))


def test_where_every_reader_is_tiny_a_byte_costs_what_it_adds_to_a_task() -> None:
    """2,000 partitions of a small shuffle: every task reads a few kilobytes and spends its
    ~10 ms on being a task. A byte costs what a task's time grows by with its bytes (here
    10 ms per 100 KB), not the stage's whole time over its bytes (about 3× that)."""
    mapper = TaskSpec(
        run_ms=1500, cpu_ms=1000, shuffle_write_ms=500, input_bytes=100 * MB, shuffle_write=MB
    )
    readers = [
        TaskSpec(run_ms=10 + 10 * (k % 4) / 4, cpu_ms=5, remote_read=100_000 * (k % 4) // 4)
        for k in range(2000)
    ]
    p = build_synthetic([[StageSpec(0, [mapper] * 4), StageSpec(1, readers, [0])]], 2)
    cost = shuffle_cost(p, compile_workload(p, baseline_config(p)))
    assert cost is not None
    assert cost.read_ms_per_byte == pytest.approx(10 / 100_000, rel=0.05)
