"""Held-out Dask workload (fourth set): ``dask.delayed`` Monte-Carlo simulations of a
single-server queue in pure Python, one per seed, summarised per scenario with numpy and
combined, under a LocalCluster: 6 scenarios × 8 seeds of 160,000 customers. ``--scale``
multiplies the customers."""

import argparse
import random
import time

import numpy as np
from dask import compute, delayed
from dask.distributed import Client, LocalCluster


def simulate(load: float, seed: int, customers: int) -> list[float]:
    """Waiting times of ``customers`` arrivals at a queue running at ``load``."""
    r = random.Random(seed)
    clock = free_at = 0.0
    waits = []
    for _ in range(customers):
        clock += r.expovariate(load)
        start = max(clock, free_at)
        waits.append(start - clock)
        free_at = start + r.expovariate(1.0)
    return waits


def summarise(runs: list[list[float]]) -> tuple[float, float]:
    waits = np.concatenate([np.asarray(w) for w in runs])
    return float(waits.mean()), float(np.percentile(waits, 95))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    customers = max(1_000, int(round(160_000 * a.scale)))
    with (
        LocalCluster(
            n_workers=a.workers,
            threads_per_worker=a.threads,
            memory_limit=a.memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster),
    ):
        began = time.time()
        scenarios = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9]
        summaries = [
            delayed(summarise)([delayed(simulate)(load, 100 * i + s, customers) for s in range(8)])
            for i, load in enumerate(scenarios)
        ]
        results = compute(*summaries)
        print([round(m, 2) for m, _ in results])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
