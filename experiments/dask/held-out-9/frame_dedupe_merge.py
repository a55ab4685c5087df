"""Held-out Dask workload (ninth set): click events with repeated deliveries, de-duplicated
by event id (a task-based shuffle), merged with a product table of its own partitions by
a hash-shuffled ``merge``, then per brand and per day several aggregations at once (count,
mean, max, distinct buyers); under a LocalCluster: 24 partitions of 60,000 events and
6 of 10,000 products. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

EVENTS_PER_PART = 60_000
PRODUCTS_PER_PART = 10_000
BRANDS = np.array([f"brand-{i:02d}" for i in range(30)], dtype=object)


def events(i: int, products: int) -> pd.DataFrame:
    r = np.random.default_rng(9_100 + i)
    n = EVENTS_PER_PART
    # About one event in eight is delivered twice, with the same id, in the same partition
    # or a neighbour's (ids are drawn from a range shared by neighbouring partitions).
    ids = r.integers(i * n * 7 // 8, (i + 1) * n * 7 // 8 + n // 4, n)
    return pd.DataFrame(
        {
            "event": ids,
            "product": r.integers(0, products, n),
            "buyer": r.integers(0, 200_000, n),
            "day": r.integers(0, 28, n),
            "price": np.round(r.gamma(2.0, 15.0, n), 2),
        }
    )


def products(i: int) -> pd.DataFrame:
    r = np.random.default_rng(9_500 + i)
    n = PRODUCTS_PER_PART
    return pd.DataFrame(
        {
            "product": np.arange(i * n, (i + 1) * n),
            "brand": BRANDS[r.integers(0, len(BRANDS), n)],
            "weight": r.uniform(0.1, 20.0, n),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    event_parts = max(2, int(round(24 * a.scale)))
    product_parts = max(1, int(round(6 * a.scale)))
    total_products = product_parts * PRODUCTS_PER_PART
    # Task-based shuffles: each shuffle's pieces are tasks of the graph, like the rest.
    dask.config.set({"dataframe.shuffle.method": "tasks"})
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
        ev = dd.from_map(
            events, range(event_parts), products=total_products, meta=events(0, 1).iloc[:0]
        )
        prod = dd.from_map(products, range(product_parts), meta=products(0).iloc[:0])
        unique = ev.drop_duplicates(subset=["event"], split_out=event_parts // 2)
        joined = unique.merge(prod, on="product", how="inner")
        summary = (
            joined.groupby(["brand", "day"])
            .agg(
                sales=("price", "count"),
                mean_price=("price", "mean"),
                top_price=("price", "max"),
                heavy=("weight", "max"),
            )
            .compute()
        )
        buyers = joined.groupby("brand")["buyer"].nunique().compute()
        print(len(summary), int(buyers.sum()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
