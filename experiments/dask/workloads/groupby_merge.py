"""Dask study workload: a dataframe group-by and merge (shuffle), run under a LocalCluster.

Orders (customer, amount, quantity) are generated in the workers, aggregated per customer,
and merged with a customers table split into partitions of its own (a hash join through a
shuffle); the result is summarised per region. ``--scale`` multiplies the rows.
"""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ROWS_PER_PART = 250_000
CUSTOMERS = 200_000


def orders(part: int) -> pd.DataFrame:
    rng = np.random.default_rng(part)
    n = ROWS_PER_PART
    return pd.DataFrame(
        {
            "customer": rng.integers(0, CUSTOMERS, n),
            "amount": rng.gamma(2.0, 30.0, n),
            "quantity": rng.integers(1, 10, n),
        }
    )


def customers(part: int, parts: int) -> pd.DataFrame:
    ids = np.arange(part, CUSTOMERS, parts)
    rng = np.random.default_rng(10_000 + part)
    return pd.DataFrame({"customer": ids, "region": rng.integers(0, 50, len(ids))})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(24 * a.scale)))
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
        o = dd.from_map(orders, range(parts))
        c = dd.from_map(customers, range(8), parts=8)
        per_customer = o.groupby("customer").agg({"amount": "sum", "quantity": "sum"})
        joined = per_customer.reset_index().merge(c, on="customer", how="inner")
        by_region = joined.groupby("region")[["amount", "quantity"]].sum().compute()
        print(len(by_region), float(by_region.amount.sum()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
