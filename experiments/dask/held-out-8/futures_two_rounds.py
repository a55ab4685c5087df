"""Held-out Dask workload (eighth set): a Monte Carlo estimate in two rounds of futures. The
first round, ``client.map`` over batches, simulates random walks in pure Python and returns
each batch's statistics; the script gathers them, picks a threshold from them, and a second
``client.map`` counts, per new batch, the walks that cross it (numpy), reduced by
``client.submit`` in groups of four; under a LocalCluster: 24 batches of 900 walks a round.
``--scale`` multiplies the batches."""

import argparse
import random
import time

import numpy as np
from dask.distributed import Client, LocalCluster

WALKS = 900
STEPS = 200


def walk_stats(seed: int) -> tuple[float, float]:
    r = random.Random(seed)
    peaks = []
    for _ in range(WALKS):
        x = peak = 0.0
        for _ in range(STEPS):
            x += r.gauss(0.0, 1.0)
            peak = max(peak, x)
        peaks.append(peak)
    return sum(peaks) / len(peaks), max(peaks)


def crossings(seed: int, threshold: float) -> int:
    rng = np.random.default_rng(seed)
    paths = rng.standard_normal((WALKS * 20, STEPS)).cumsum(axis=1)
    return int((paths.max(axis=1) > threshold).sum())


def total(*counts: int) -> int:
    return sum(counts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    batches = max(4, int(round(24 * a.scale)))
    with (
        LocalCluster(
            n_workers=a.workers,
            threads_per_worker=a.threads,
            memory_limit=a.memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        began = time.time()
        stats = client.gather(client.map(walk_stats, range(batches)))
        threshold = float(np.mean([mean for mean, _ in stats]) * 1.5)
        counts = client.map(crossings, range(1_000, 1_000 + batches), threshold=threshold)
        groups = [client.submit(total, *counts[i : i + 4]) for i in range(0, len(counts), 4)]
        print(round(threshold, 2), client.submit(total, *groups).result())
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
