"""Held-out Dask workload (eighth set): per partition a diamond of ``dask.delayed`` tasks: a
generated table of sensor samples, two feature extractors on it (a numpy spectrum, a pure
Python run-length count of threshold crossings), a step that joins the two, and a final
ranking over all partitions; under a LocalCluster: 20 partitions of 1,500,000 samples.
``--scale`` multiplies the partitions."""

import argparse
import time

import dask
import numpy as np
from dask.distributed import Client, LocalCluster

SAMPLES = 1_500_000


def samples(i: int) -> np.ndarray:
    rng = np.random.default_rng(8_800 + i)
    t = np.arange(SAMPLES)
    return np.sin(t / (50 + i)) + 0.4 * rng.standard_normal(SAMPLES)


def spectrum(x: np.ndarray) -> float:
    power = np.abs(np.fft.rfft(x)) ** 2
    return float(np.argmax(power[1:]) + 1)


def crossings(x: np.ndarray) -> int:
    above, runs = False, 0
    for v in x.tolist():
        now = v > 0.5
        if now and not above:
            runs += 1
        above = now
    return runs


def joined(i: int, peak: float, runs: int) -> tuple[int, float]:
    return i, runs / peak


def ranking(rows: list[tuple[int, float]]) -> list[int]:
    return [i for i, _ in sorted(rows, key=lambda r: -r[1])[:5]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(20 * a.scale)))
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
        rows = []
        for i in range(parts):
            x = dask.delayed(samples)(i)
            rows.append(
                dask.delayed(joined)(i, dask.delayed(spectrum)(x), dask.delayed(crossings)(x))
            )
        print(dask.delayed(ranking)(rows).compute())
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
