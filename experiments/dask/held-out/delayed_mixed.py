"""Held-out Dask workload: a dask.delayed pipeline of numpy tasks (FFT filtering of signals)
and pure-Python tasks (parsing and scoring text records), joined at the end, under a
LocalCluster. ``--scale`` multiplies the tasks."""

import argparse
import random
import time

import numpy as np
from dask import delayed
from dask.distributed import Client, LocalCluster

SIGNAL = 1 << 20
RECORDS = 12_000


def signal(i: int) -> np.ndarray:
    return np.random.default_rng(i).normal(size=SIGNAL)


def band_pass(x: np.ndarray) -> np.ndarray:
    f = np.fft.rfft(x)
    f[: len(f) // 20] = 0
    f[len(f) // 4 :] = 0
    return np.fft.irfft(f, n=len(x))


def energy(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x * x)))


def records(i: int) -> list[str]:
    r = random.Random(i)
    return [
        ",".join(str(r.randrange(1000)) for _ in range(r.randrange(4, 16))) for _ in range(RECORDS)
    ]


def score(lines: list[str]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for line in lines:
        values = [int(v) for v in line.split(",")]
        key = sum(v % 7 for v in values) % 50
        counts[key] = counts.get(key, 0) + max(values) - min(values)
    return counts


def merge(scores: list[dict[int, int]], energies: list[float]) -> tuple[int, float]:
    total: dict[int, int] = {}
    for s in scores:
        for k, v in s.items():
            total[k] = total.get(k, 0) + v
    return max(total.values()), sum(energies)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    n = max(2, int(round(64 * a.scale)))
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
        energies = [delayed(energy)(delayed(band_pass)(delayed(signal)(i))) for i in range(n)]
        scores = [delayed(score)(delayed(records)(i)) for i in range(n)]
        result = delayed(merge)(scores, energies).compute()
        print(result)
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
