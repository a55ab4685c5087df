"""Held-out Dask workload (fourth set): string columns of a dataframe cleaned and split by
pandas' object-dtype string methods, a row-wise Python function per partition, and a
group-by over the derived keys, under a LocalCluster: 16 partitions of 60,000 rows.
``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ROWS_PER_PART = 60_000
DOMAINS = ["example.org", "mail.test", "corp.local", "shop.example", "news.test"]


def part(i: int) -> pd.DataFrame:
    r = np.random.default_rng(900 + i)
    n = ROWS_PER_PART
    users = r.integers(0, 40_000, n)
    domains = np.array(DOMAINS, dtype=object)[r.integers(0, len(DOMAINS), n)]
    return pd.DataFrame(
        {
            "email": pd.Series(
                [f" User{u}@{d} " for u, d in zip(users, domains, strict=True)], dtype=object
            ),
            "amount": r.gamma(2.0, 30.0, n),
        }
    )


def bucket(df: pd.DataFrame) -> pd.DataFrame:
    """A row-wise Python rule over the cleaned addresses."""
    out = df.copy()
    out["tier"] = [
        "a" if len(u) % 3 == 0 else ("b" if d.endswith(".test") else "c")
        for u, d in zip(out["user"], out["domain"], strict=True)
    ]
    return out


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
        df = dd.from_map(part, range(parts), meta=part(0).iloc[:0])
        clean = df["email"].str.strip().str.lower()
        pieces = clean.str.split("@", n=1, expand=True)
        df = df.assign(user=pieces[0], domain=pieces[1])
        df = df.map_partitions(bucket, meta={**df.dtypes.to_dict(), "tier": "object"})
        totals = df.groupby(["domain", "tier"])["amount"].agg(["sum", "count"]).compute()
        users = df["user"].nunique().compute()
        print(len(totals), int(users))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
