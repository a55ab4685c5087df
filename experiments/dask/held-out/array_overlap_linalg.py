"""Held-out Dask workload: an array stencil (map_overlap), a Gram matrix and a tall-skinny
QR, under a LocalCluster: 300,000 × 200 doubles (480 MB) in 30 row blocks. ``--scale``
multiplies the rows."""

import argparse
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

CHUNK = 10_000
COLS = 200


def smooth(block: np.ndarray) -> np.ndarray:
    """A 5-point stencil, three times over: numpy, which releases the GIL."""
    out = block
    for _ in range(3):
        out = 0.2 * (
            out
            + np.roll(out, 1, axis=0)
            + np.roll(out, -1, axis=0)
            + np.roll(out, 1, axis=1)
            + np.roll(out, -1, axis=1)
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    rows = max(2 * CHUNK, int(round(300_000 * a.scale)) // CHUNK * CHUNK)
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
        x = da.random.default_rng(7).standard_normal((rows, COLS), chunks=(CHUNK, COLS))
        y = x.map_overlap(smooth, depth=2, boundary="reflect")
        gram = (y.T @ y).compute()
        q, r = da.linalg.qr(y)
        norms, r = dask.compute(da.linalg.norm(q, axis=0), r)
        print(float(np.trace(gram)), float(np.abs(np.diag(r)).sum()), norms.size)
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
