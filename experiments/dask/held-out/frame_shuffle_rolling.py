"""Held-out Dask workload: a dataframe shuffle (set_index on a random key), a rolling window
and a group-by, under a LocalCluster. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ROWS_PER_PART = 300_000


def part(i: int) -> pd.DataFrame:
    r = np.random.default_rng(i)
    n = ROWS_PER_PART
    return pd.DataFrame(
        {
            "key": r.integers(0, 50_000_000, n),
            "sensor": r.integers(0, 2_000, n),
            "t": i * n + np.arange(n),
            "value": r.normal(size=n),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(30 * a.scale)))
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
        df = dd.from_map(part, range(parts))
        by_key = df.set_index("key", shuffle_method="tasks")
        rolled = by_key["value"].rolling(50).mean()
        stats = (
            by_key.assign(smooth=rolled)
            .groupby("sensor")
            .agg({"smooth": ["mean", "std"], "t": "max"})
        )
        out = stats.compute()
        print(len(out), float(out.iloc[:, 0].sum()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
