"""Held-out Dask workload (sixth set): a chain of array stages over a 2-D field. A five-point
stencil (``map_overlap``, so each block fetches its neighbours' edges), a pointwise
nonlinearity, a rechunk from row blocks to column blocks, and per-column statistics reduced
in a tree; under a LocalCluster: an 8,000 × 4,000 float64 field in 32 row blocks.
``--scale`` multiplies the rows."""

import argparse
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

COLUMNS = 4_000
ROWS = 8_000
BLOCKS = 32


def laplacian(block: np.ndarray) -> np.ndarray:
    out = -4.0 * block
    out[1:, :] += block[:-1, :]
    out[:-1, :] += block[1:, :]
    out[:, 1:] += block[:, :-1]
    out[:, :-1] += block[:, 1:]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    blocks = max(2, int(round(BLOCKS * a.scale)))
    rows = blocks * (ROWS // BLOCKS)
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
        field = da.random.default_rng(11).standard_normal(
            (rows, COLUMNS), chunks=(ROWS // BLOCKS, COLUMNS)
        )
        for _ in range(2):
            field = field + 0.1 * field.map_overlap(laplacian, depth=1, boundary="reflect")
        energy = np.tanh(field) ** 2
        by_column = energy.rechunk((rows, COLUMNS // 8))
        stats = da.stack([by_column.mean(axis=0), by_column.std(axis=0)]).compute()
        print(stats.shape, round(float(stats[0].mean()), 4))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
