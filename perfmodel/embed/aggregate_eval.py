"""Evaluate frame-aggregation policies on synthetic stacks built from held-out functions.

No labeled operations exist (a stage's measured decomposition comes from Spark's task
metrics, without per-stack truth), so the policies are compared on stacks assembled the
way real ones look: a held-out corpus function as the leaf (its label is the resource the
sample spends), one to three other held-out functions of any class as callers, and real
executor plumbing frames at the root. An operation mixes samples whose leaf classes
follow random shares (Dirichlet, alpha 0.5); a policy is scored by the total-variation
distance between its vector and those shares, and by whether it names the dominant
resource. Frame vectors are the trained models' held-out predictions, plumbing frames are
classified from their names, as in a real profile. The assumption that the leaf decides
the resource is built into the data, so the figures measure robustness to callers and
plumbing, not the truth of that assumption.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perfmodel.embed.aggregate import LEAF_ONLY, UNIFORM, AggregationPolicy, stage_vectors

EXECUTOR_PLUMBING = (
    "java.lang.Thread.run",
    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
    "java.util.concurrent.ThreadPoolExecutor.runWorker",
    "org.apache.spark.executor.Executor$TaskRunner.run",
    "org.apache.spark.scheduler.Task.run",
    "org.apache.spark.scheduler.ResultTask.runTask",
    "org.apache.spark.rdd.RDD.iterator",
    "org.apache.spark.rdd.MapPartitionsRDD.compute",
    "scala.collection.Iterator$$anon$10.hasNext",
)

POLICIES: dict[str, AggregationPolicy] = {
    "leaf only": LEAF_ONLY,
    "uniform over all frames": UNIFORM,
    "decay 0.5, plumbing kept": AggregationPolicy(decay=0.5, skip_plumbing=False),
    "decay 0.5, plumbing skipped": AggregationPolicy(decay=0.5),
    "decay 0.25, plumbing skipped (default)": AggregationPolicy(),
}


@dataclass
class _Table:
    vectors: Mapping[str, Mapping[str, float]]

    def frame_vectors(self, frames: Sequence[str]) -> list[Mapping[str, float]]:
        return [self.vectors[f] for f in frames]


def evaluate_policies(
    functions: Sequence[tuple[str, str, Mapping[str, float]]],
    plumbing_vectors: Mapping[str, Mapping[str, float]],
    classes: Sequence[str],
    seed: int,
    n_operations: int = 300,
    samples_per_operation: int = 40,
) -> dict[str, dict[str, float]]:
    """Mean total-variation distance and dominant-resource accuracy per policy.

    ``functions``: (frame name, true label, predicted vector) of held-out functions.
    """
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    by_label = {c: [f for f in functions if f[1] == c] for c in classes}
    labels = [c for c in classes if by_label[c]]
    table = {name: vec for name, _, vec in functions} | dict(plumbing_vectors)
    ops: dict[int, list[tuple[list[str], float]]] = {}
    truth: dict[int, np.ndarray] = {}
    for op in range(n_operations):
        shares = nprng.dirichlet([0.5] * len(labels))
        samples = []
        counts = np.zeros(len(labels))
        for _ in range(samples_per_operation):
            k = int(nprng.choice(len(labels), p=shares))
            counts[k] += 1
            leaf = rng.choice(by_label[labels[k]])[0]
            callers = [rng.choice(functions)[0] for _ in range(rng.randint(1, 3))]
            root = list(EXECUTOR_PLUMBING[: rng.randint(3, len(EXECUTOR_PLUMBING))])
            samples.append(([*root, *callers, leaf], 1.0))
        ops[op] = samples
        truth[op] = counts / counts.sum()
    out: dict[str, dict[str, float]] = {}
    for name, policy in POLICIES.items():
        vecs = stage_vectors(_Table(table), ops, policy)
        tv, hit = [], []
        for op, rv in vecs.items():
            pred = np.array([rv.get(c) for c in labels])
            tv.append(0.5 * float(np.abs(pred - truth[op]).sum()))
            hit.append(labels[int(pred.argmax())] == labels[int(truth[op].argmax())])
        out[name] = {
            "mean_tv_distance": float(np.mean(tv)),
            "dominant_accuracy": float(np.mean(hit)),
        }
    return out
