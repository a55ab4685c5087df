"""Held-out Dask workload (tenth set): the singular value decomposition of a tall,
skinny matrix by Dask's tree of block QR factorisations (``da.linalg.svd``), every row
projected onto the five leading right singular vectors, and the rows whose projection is
farthest out counted per block; under a LocalCluster: 32 row blocks of 25,000 × 60.
``--scale`` multiplies the row blocks."""

import argparse
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

ROWS_PER_BLOCK = 25_000
COLUMNS = 60


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
        rng = da.random.default_rng(10_300)
        mixing = np.random.default_rng(10_301).standard_normal((COLUMNS, COLUMNS))
        x = rng.standard_normal(
            (blocks * ROWS_PER_BLOCK, COLUMNS), chunks=(ROWS_PER_BLOCK, COLUMNS)
        )
        x = x @ mixing
        _, s, v = da.linalg.svd(x)
        s, v = da.compute(s, v)
        scores = x @ v[:5].T
        far = (abs(scores) > 3 * s[:5] / np.sqrt(x.shape[0])).any(axis=1)
        per_block = far.map_blocks(lambda b: np.array([b.sum()]), chunks=(1,)).compute()
        print(round(float(s[0]), 1), int(per_block.sum()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
