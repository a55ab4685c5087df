"""Held-out Dask workload (third set): sensor readings bucketed by hour and sensor, joined
with a small sensor table (broadcast), de-duplicated and counted, under a LocalCluster: 24
partitions of 250,000 readings. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

ROWS_PER_PART = 250_000


def readings(i: int) -> pd.DataFrame:
    r = np.random.default_rng(300 + i)
    n = ROWS_PER_PART
    start = pd.Timestamp("2026-01-01") + pd.Timedelta(hours=6 * i)
    return pd.DataFrame(
        {
            "when": start + pd.to_timedelta(np.sort(r.integers(0, 6 * 3600, n)), unit="s"),
            "sensor": r.integers(0, 5_000, n),
            "value": r.normal(20.0, 5.0, n),
            "flag": r.integers(0, 50, n),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(24 * a.scale)))
    sensors = pd.DataFrame({"sensor": np.arange(5_000), "site": np.arange(5_000) % 40})
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
        df = dd.from_map(readings, range(parts), meta=readings(0).iloc[:0])
        df["hour"] = df["when"].dt.floor("h")
        df = df.merge(sensors, on="sensor", how="left", broadcast=True)
        hourly = df.groupby(["site", "hour"])["value"].agg(["mean", "std", "count"]).compute()
        distinct = df[["sensor", "flag"]].drop_duplicates().shape[0].compute()
        flags = df["flag"].value_counts().compute()
        print(len(hourly), int(distinct), int(flags.sum()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
