"""Held-out Dask workload (tenth set): sales rows binned by price in pandas per partition
(``map_partitions`` with ``pd.cut``), mean, spread and count per bin and region, Dask's
approximate quantiles of the price, and the largest sales by ``nlargest``; under a
LocalCluster: 24 partitions of 100,000 sales. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

SALES_PER_PART = 100_000
REGIONS = np.array(["ams", "ber", "cph", "dub", "hel", "lis", "mad"], dtype=object)
EDGES = [0, 5, 10, 20, 50, 100, 200, 500, 1_000, 10_000]


def sales(i: int) -> pd.DataFrame:
    r = np.random.default_rng(10_100 + i)
    n = SALES_PER_PART
    return pd.DataFrame(
        {
            "region": REGIONS[r.integers(0, len(REGIONS), n)],
            "price": np.round(r.pareto(1.8, n) * 12.0 + 1.0, 2),
            "units": r.integers(1, 12, n),
        }
    )


def binned(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.assign(bin=pd.cut(frame["price"], EDGES, labels=False))
    return out.assign(total=out["price"] * out["units"])


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
        frame = dd.from_map(sales, range(parts), meta=sales(0).iloc[:0])
        rows = frame.map_partitions(binned, meta=binned(sales(0).iloc[:0]))
        per_bin = rows.groupby(["bin", "region"])["total"].agg(["mean", "std", "count"]).compute()
        cuts = rows["price"].quantile([0.5, 0.9, 0.99]).compute()
        top = rows.nlargest(20, "total").compute()
        print(len(per_bin), round(float(cuts.iloc[-1]), 2), round(float(top["total"].iloc[0]), 1))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
