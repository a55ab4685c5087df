"""Dask study workload: array reductions (tree reductions over chunks), run under a
LocalCluster.

A random matrix generated in chunks is reduced to column means, standard deviations and a
clipped total: each reduction combines chunk results in a tree. ``--scale`` multiplies the
matrix's side.
"""

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
    side = max(1000, int(14_000 * a.scale) // 1000 * 1000)
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
        x = da.random.default_rng(42).standard_normal((side, side), chunks=(1000, 2000))
        mean, std, clipped = dask.compute(
            x.mean(axis=0), x.std(axis=0), da.clip(x, -1.0, 1.0).sum()
        )
        print(float(mean.sum()), float(std.mean()), float(clipped))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
