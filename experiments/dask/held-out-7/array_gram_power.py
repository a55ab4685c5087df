"""Held-out Dask workload (seventh set): the leading singular vector of a tall matrix by
power iteration, all in one graph: the Gram matrix ``X.T @ X`` summed over row blocks in a
tree, then six steps of ``v ← G v / |G v|``, and the residual ``|X v|``; under a
LocalCluster: 600,000 × 200 float64 in 40 row blocks. ``--scale`` multiplies the rows."""

import argparse
import time

import dask.array as da
from dask.distributed import Client, LocalCluster

ROWS_PER_BLOCK = 15_000
COLUMNS = 200


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    blocks = max(2, int(round(40 * a.scale)))
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
        rng = da.random.default_rng(21)
        x = rng.standard_normal(
            (blocks * ROWS_PER_BLOCK, COLUMNS), chunks=(ROWS_PER_BLOCK, COLUMNS)
        )
        x = x + 0.5 * x[:, :1]  # one strong direction
        gram = (x.T @ x).rechunk((COLUMNS, COLUMNS))
        v = da.ones((COLUMNS,), chunks=COLUMNS)
        for _ in range(6):
            w = gram @ v
            v = w / da.linalg.norm(w)
        residual = da.linalg.norm(x @ v)
        value, res = da.compute(v[:3], residual)
        print([round(float(t), 4) for t in value], round(float(res), 1))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
