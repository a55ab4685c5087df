"""Held-out Dask workload (ninth set): a tall random matrix standardised column by column
(means and standard deviations by tree reductions over the row blocks), each row's
largest standardised value, the 20 largest of those by ``topk``, and a histogram of
the row norms; under a LocalCluster: 32 row blocks of 10,000 × 200. ``--scale``
multiplies the row blocks."""

import argparse
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

ROWS_PER_BLOCK = 10_000
COLUMNS = 200


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    blocks = max(2, int(round(32 * a.scale)))
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
        rng = da.random.default_rng(9_900)
        x = rng.standard_normal(
            (blocks * ROWS_PER_BLOCK, COLUMNS), chunks=(ROWS_PER_BLOCK, COLUMNS)
        )
        x = x * da.arange(1, COLUMNS + 1, chunks=COLUMNS) + 3.0
        mean, std = da.compute(x.mean(axis=0, split_every=4), x.std(axis=0, split_every=4))
        z = (x - mean) / std
        peak = z.max(axis=1)
        top = peak.topk(20).compute()
        norms = da.sqrt((z * z).sum(axis=1))
        counts, _ = da.histogram(norms, bins=40, range=(0.0, 40.0))
        counts = counts.compute()
        print(round(float(top[0]), 3), int(np.argmax(counts)))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
