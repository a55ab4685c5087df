"""Held-out Dask workload (eighth set): an orders dataframe built, cleaned and ``persist()``ed
on the workers, then three separate queries on it, each its own graph: revenue per
category by ``groupby().sum``, the share of late deliveries per region, and a per-customer
order count kept where it is above a quantile; under a LocalCluster: 16 partitions of
150,000 orders. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ORDERS_PER_PART = 150_000
REGIONS = np.array(["north", "south", "east", "west", "centre"], dtype=object)


def orders(i: int) -> pd.DataFrame:
    r = np.random.default_rng(6_600 + i)
    n = ORDERS_PER_PART
    return pd.DataFrame(
        {
            "customer": r.integers(0, 50_000, n),
            "category": r.integers(0, 40, n),
            "region": REGIONS[r.integers(0, len(REGIONS), n)],
            "amount": r.lognormal(3.0, 0.8, n),
            "promised": r.integers(1, 6, n),
            "took": r.integers(1, 9, n),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(16 * a.scale)))
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
        frame = dd.from_map(orders, range(parts), meta=orders(0).iloc[:0])
        clean = frame[frame["amount"] < 500].assign(late=lambda d: d["took"] > d["promised"])
        clean = clean.persist()
        revenue = clean.groupby("category")["amount"].sum().compute()
        late = clean.groupby("region")["late"].mean().compute()
        per_customer = clean["customer"].value_counts()
        cut = per_customer.quantile(0.9).compute()
        loyal = int((per_customer > cut).sum().compute())
        print(round(float(revenue.max()), 1), round(float(late.mean()), 3), loyal)
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
