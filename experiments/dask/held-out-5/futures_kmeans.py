"""Held-out Dask workload (fifth set): k-means over points kept on the workers as futures
(``client.submit``), numpy work that releases the interpreter lock: each of 8 iterations
assigns every partition's points to the nearest of 12 centres and sums them per centre,
the partial sums are reduced into new centres, and those go back to every partition; under
a LocalCluster: 12 partitions of 120,000 points in 8 dimensions. ``--scale`` multiplies the
points per partition."""

import argparse
import time

import numpy as np
from dask.distributed import Client, LocalCluster

PARTS = 12
POINTS = 120_000
DIMS = 8
CENTRES = 12
ITERATIONS = 8


def points(i: int, n: int) -> np.ndarray:
    r = np.random.default_rng(9_000 + i)
    centre = r.normal(0.0, 5.0, (CENTRES, DIMS))[r.integers(0, CENTRES, n)]
    return centre + r.normal(0.0, 1.0, (n, DIMS))


def partial(x: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per centre: the sum of the points nearest to it, and how many there are."""
    d = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    nearest = d.argmin(axis=1)
    sums = np.zeros_like(centres)
    np.add.at(sums, nearest, x)
    return sums, np.bincount(nearest, minlength=len(centres)).astype(np.float64)


def combine(parts: list[tuple[np.ndarray, np.ndarray]], old: np.ndarray) -> np.ndarray:
    sums = sum(p[0] for p in parts)
    counts = sum(p[1] for p in parts)
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], old)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    n = max(1_000, int(round(POINTS * a.scale)))
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
        data = [client.submit(points, i, n, pure=False) for i in range(PARTS)]
        centres = client.submit(points, 99, CENTRES)
        for _ in range(ITERATIONS):
            sums = [client.submit(partial, x, centres) for x in data]
            centres = client.submit(combine, sums, centres)
        final = centres.result()
        print(final.shape, round(float(np.abs(final).mean()), 3))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
