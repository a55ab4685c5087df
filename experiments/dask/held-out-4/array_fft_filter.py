"""Held-out Dask workload (fourth set): images filtered in the frequency domain block by
block (``map_blocks`` with 2-D FFTs), then per-image statistics and a percentile of the
filtered values, under a LocalCluster: 288 images of 512 × 512 in 36 blocks. ``--scale``
multiplies the images."""

import argparse
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

SIDE = 512
PER_BLOCK = 8


def low_pass(block: np.ndarray) -> np.ndarray:
    """Keep the lowest frequencies of each image of the block."""
    f = np.fft.fft2(block, axes=(1, 2))
    fy = np.fft.fftfreq(SIDE)[:, None]
    fx = np.fft.fftfreq(SIDE)[None, :]
    mask = (fy**2 + fx**2) < 0.05**2
    return np.real(np.fft.ifft2(f * mask, axes=(1, 2)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    images = max(2 * PER_BLOCK, int(round(288 * a.scale)) // PER_BLOCK * PER_BLOCK)
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
        x = da.random.default_rng(17).random((images, SIDE, SIDE), chunks=(PER_BLOCK, SIDE, SIDE))
        y = x.map_blocks(low_pass, dtype=np.float64)
        stats = dask.compute(y.mean(axis=(1, 2)), y.max(axis=(1, 2)), y.var())
        p99 = da.percentile(y.ravel(), 99).compute()
        print(float(stats[0].mean()), float(stats[2]), float(np.asarray(p99).ravel()[0]))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
