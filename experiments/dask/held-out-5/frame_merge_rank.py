"""Held-out Dask workload (fifth set): page views joined to their visitors' accounts by a
hash-shuffled ``merge`` of two dataframes, then, per country, each account's views ranked
by a ``groupby().apply`` of pandas code, and a summary; under a LocalCluster: 16 partitions
of 80,000 views and 8 of 20,000 accounts. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

VIEWS_PER_PART = 80_000
ACCOUNTS_PER_PART = 20_000
COUNTRIES = np.array(["de", "fr", "us", "br", "jp", "in", "ng", "au"], dtype=object)


def views(i: int, accounts: int) -> pd.DataFrame:
    r = np.random.default_rng(7_000 + i)
    n = VIEWS_PER_PART
    return pd.DataFrame(
        {
            "account": r.integers(0, accounts, n),
            "seconds": r.exponential(40.0, n),
            "page": r.integers(0, 500, n),
        }
    )


def accounts(i: int) -> pd.DataFrame:
    r = np.random.default_rng(8_000 + i)
    n = ACCOUNTS_PER_PART
    return pd.DataFrame(
        {
            "account": np.arange(i * n, (i + 1) * n),
            "country": COUNTRIES[r.integers(0, len(COUNTRIES), n)],
            "age": r.integers(16, 80, n),
        }
    )


def ranked(group: pd.DataFrame) -> pd.DataFrame:
    """Each account's total time and its rank within the country."""
    per = group.groupby("account")["seconds"].sum().sort_values(ascending=False)
    return pd.DataFrame({"seconds": per, "rank": np.arange(1, len(per) + 1)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    view_parts = max(2, int(round(16 * a.scale)))
    account_parts = max(1, int(round(8 * a.scale)))
    total_accounts = account_parts * ACCOUNTS_PER_PART
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
        v = dd.from_map(
            views, range(view_parts), accounts=total_accounts, meta=views(0, 1).iloc[:0]
        )
        acc = dd.from_map(accounts, range(account_parts), meta=accounts(0).iloc[:0])
        joined = v.merge(acc, on="account", how="inner")
        top = (
            joined.groupby("country")[["account", "seconds"]]
            .apply(ranked, meta={"seconds": "f8", "rank": "i8"})
            .query("rank <= 10")
            .compute()
        )
        ages = joined.groupby("country")["age"].mean().compute()
        print(len(top), round(float(ages.mean()), 2))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
