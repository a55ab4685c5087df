"""Frames -> operation vectors: plumbing skipped, leaf-weighted, sample-weighted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from perfmodel.embed.aggregate import (
    LEAF_ONLY,
    AggregationPolicy,
    frame_weights,
    is_plumbing,
    stage_vector,
    stage_vectors,
)
from perfmodel.embed.aggregate_eval import evaluate_policies

NET = {"cpu": 0.1, "disk": 0.1, "network": 0.8}
DISK = {"cpu": 0.1, "disk": 0.8, "network": 0.1}
CPU = {"cpu": 0.8, "disk": 0.1, "network": 0.1}
FLAT = {"cpu": 1 / 3, "disk": 1 / 3, "network": 1 / 3}

TABLE = {
    "java.lang.Thread.run": FLAT,
    "org.apache.spark.executor.Executor$TaskRunner.run": FLAT,
    "org.apache.spark.rdd.RDD.iterator": FLAT,
    "com.example.Job.process": CPU,
    "java.net.SocketInputStream.read": NET,
    "java.io.FileInputStream.readBytes": DISK,
}
ROOT = [
    "java.lang.Thread.run",
    "org.apache.spark.executor.Executor$TaskRunner.run",
    "org.apache.spark.rdd.RDD.iterator",
]


class Table:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def frame_vectors(self, frames: Sequence[str]) -> list[Mapping[str, float]]:
        self.asked.append(list(frames))
        return [TABLE[f] for f in frames]


def test_plumbing_frames_are_recognised() -> None:
    assert is_plumbing("java.lang.Thread.run")
    assert is_plumbing("org.apache.spark.executor.Executor$TaskRunner.run(Executor.scala:620)")
    assert is_plumbing("_bootstrap_inner (threading.py:1045)")
    assert not is_plumbing("java.net.SocketInputStream.read")
    assert not is_plumbing("recv_into (socket.py:700)")


def test_frame_weights_decay_from_the_leaf_and_skip_plumbing() -> None:
    stack = [*ROOT, "com.example.Job.process", "java.net.SocketInputStream.read"]
    fw = frame_weights(stack, AggregationPolicy(decay=0.5))
    assert fw == [("java.net.SocketInputStream.read", 1.0), ("com.example.Job.process", 0.5)]
    assert frame_weights(stack, LEAF_ONLY) == [("java.net.SocketInputStream.read", 1.0)]
    # an all-plumbing stack still counts, by its leaf
    assert frame_weights(ROOT, AggregationPolicy()) == [("org.apache.spark.rdd.RDD.iterator", 1.0)]


def test_stage_vector_is_sample_weighted() -> None:
    net = [*ROOT, "java.net.SocketInputStream.read"]
    disk = [*ROOT, "java.io.FileInputStream.readBytes"]
    rv = stage_vector(Table(), [(net, 3.0), (disk, 1.0), (net, 0.0)], LEAF_ONLY)
    assert rv.get("network") == pytest.approx(0.75 * 0.8 + 0.25 * 0.1)
    assert rv.get("disk") == pytest.approx(0.75 * 0.1 + 0.25 * 0.8)
    assert rv.dominant == "network"
    assert sum(rv.shares.values()) == pytest.approx(1.0)


def test_stage_vectors_classify_each_frame_once_and_handle_empty_stages() -> None:
    table = Table()
    net = [*ROOT, "com.example.Job.process", "java.net.SocketInputStream.read"]
    out = stage_vectors(table, {1: [(net, 1.0)], 2: [(net, 2.0)], 3: []})
    assert len(table.asked) == 1
    assert sorted(table.asked[0]) == sorted(set(table.asked[0]))
    assert "java.lang.Thread.run" not in table.asked[0]  # plumbing never classified
    assert out[1].shares == pytest.approx(out[2].shares)
    assert out[3].shares == {}
    # leaf weight 1, caller 0.25: (0.8*1 + 0.1*0.25)/1.25 network
    assert out[1].get("network") == pytest.approx((0.8 + 0.025) / 1.25)


def test_policy_evaluation_prefers_skipping_plumbing() -> None:
    funcs = [(f"a.Net.f{i}", "network", NET) for i in range(20)]
    funcs += [(f"a.Disk.f{i}", "disk", DISK) for i in range(20)]
    funcs += [(f"a.Cpu.f{i}", "cpu", CPU) for i in range(20)]
    plumbing = {f: FLAT for f in TABLE if f not in ("com.example.Job.process",)}
    from perfmodel.embed.aggregate_eval import EXECUTOR_PLUMBING

    plumbing |= {f: FLAT for f in EXECUTOR_PLUMBING}
    res = evaluate_policies(funcs, plumbing, ["cpu", "disk", "network"], seed=1, n_operations=40)
    default = res["decay 0.25, plumbing skipped (default)"]
    assert default["mean_tv_distance"] < res["uniform over all frames"]["mean_tv_distance"]
    assert 0.0 <= default["dominant_accuracy"] <= 1.0
