"""Shared by the per-thread CPU tests: hand-built ``thread_cpu.parquet`` rows."""

from __future__ import annotations

import pyarrow as pa


def thread_rows(rows: list[tuple[float, int, str, str, float]]) -> pa.Table:
    """A per-thread CPU table from (t_ms, tid, executor id, kind, cumulative cpu_ms) rows,
    one pid, no run-queue delay."""
    t, tid, executor, kind, cpu = zip(*rows, strict=True)
    return pa.table(
        {
            "t_ms": pa.array(t, pa.float64()),
            "pid": pa.array([1] * len(t), pa.int32()),
            "tid": pa.array(tid, pa.int32()),
            "kind": pa.array(kind, pa.string()),
            "executor_id": pa.array(executor, pa.string()),
            "name": pa.array(["x"] * len(t), pa.string()),
            "cpu_ms": pa.array(cpu, pa.float64()),
            "wait_ms": pa.array([0.0] * len(t), pa.float64()),
        }
    )
