"""Held-out Dask workload (third set): batches of small linear systems solved block by
block (``map_blocks`` over a stack of 96 × 96 matrices), an ``einsum`` contraction of the
solutions and a top-k, under a LocalCluster: 16 blocks of 1,000 systems. ``--scale``
multiplies the blocks."""

import argparse
import time

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

N = 96
PER_BLOCK = 1_000


def solve(block: np.ndarray) -> np.ndarray:
    """Solve each system A x = b of the block, with A made well-conditioned."""
    a = block @ np.swapaxes(block, 1, 2) / N + np.eye(N)
    b = block[:, :, :1]
    return np.linalg.solve(a, b)[:, :, 0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    blocks = max(2, int(round(16 * a.scale)))
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
        m = da.random.default_rng(3).standard_normal(
            (blocks * PER_BLOCK, N, N), chunks=(PER_BLOCK, N, N)
        )
        x = m.map_blocks(solve, drop_axis=2, chunks=(PER_BLOCK, N), dtype=np.float64)
        energy = da.einsum("ij,ij->i", x, x)
        top = da.topk(energy, 10).compute()
        print(float(top[0]), float(x.mean().compute()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
