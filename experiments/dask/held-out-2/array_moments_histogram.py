"""Held-out Dask workload (second set): elementwise transcendental functions over a 3-D
array, moments and arg-reductions along each axis, a histogram and a rechunked cumulative
sum, under a LocalCluster: 64 × 1,500 × 1,000 doubles (768 MB) in 16 blocks. ``--scale``
multiplies the first axis."""

import argparse
import time

import dask
import dask.array as da
from dask.distributed import Client, LocalCluster


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    depth = max(8, int(round(64 * a.scale)) // 4 * 4)
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
        x = da.random.default_rng(11).random((depth, 1_500, 1_000), chunks=(4, 1_500, 1_000))
        y = da.log1p(x) * da.cos(3.0 * x) + da.sqrt(x)
        moments = dask.compute(y.mean(axis=0), y.std(axis=(1, 2)), y.argmax(axis=2).max())
        hist, _ = da.histogram(y, bins=64, range=(-1.0, 2.0))
        running = y.rechunk((depth, 250, 1_000)).cumsum(axis=0)[-1].sum()
        counts, total = dask.compute(hist, running)
        print(float(moments[0].sum()), int(counts.sum()), float(total))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
