"""Held-out Dask workload (second set): a dataframe join of orders with products and
stores, then a multi-column group-by with several aggregations and a top-N, under a
LocalCluster: 20 partitions of 200,000 orders. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ORDERS_PER_PART = 200_000
PRODUCTS = 300_000


def orders(i: int) -> pd.DataFrame:
    r = np.random.default_rng(100 + i)
    n = ORDERS_PER_PART
    return pd.DataFrame(
        {
            "product": r.integers(0, PRODUCTS, n),
            "store": r.integers(0, 400, n),
            "day": r.integers(0, 365, n),
            "qty": r.integers(1, 9, n),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(20 * a.scale)))
    r = np.random.default_rng(5)
    products = pd.DataFrame(
        {
            "product": np.arange(PRODUCTS),
            "price": r.gamma(2.0, 10.0, PRODUCTS),
            "category": r.integers(0, 60, PRODUCTS),
        }
    )
    stores = pd.DataFrame({"store": np.arange(400), "region": np.arange(400) % 12})
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
        meta = orders(0).iloc[:0]
        facts = dd.from_map(orders, range(parts), meta=meta)
        items = dd.from_pandas(products, npartitions=6)
        joined = facts.merge(items, on="product", how="inner", shuffle_method="tasks")
        joined = joined.merge(stores, on="store", how="left")
        joined["revenue"] = joined["qty"] * joined["price"]
        summary = (
            joined.groupby(["region", "category"])
            .agg({"revenue": ["sum", "mean"], "qty": "max", "day": ["min", "max"]})
            .compute()
        )
        best = joined.groupby("product")["revenue"].sum().nlargest(20).compute()
        print(len(summary), float(best.iloc[0]))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
