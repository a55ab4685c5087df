"""Held-out Dask workload (seventh set): meter readings resampled to hourly means per meter
in pandas (``map_partitions``), joined to a small table of meter sites (a broadcast
``merge``), then per site and hour statistics by ``groupby().agg`` and the top sites; under
a LocalCluster: 20 partitions of 120,000 readings. ``--scale`` multiplies the partitions."""

import argparse
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

READINGS_PER_PART = 120_000
METERS = 300


def readings(i: int) -> pd.DataFrame:
    r = np.random.default_rng(4_400 + i)
    n = READINGS_PER_PART
    return pd.DataFrame(
        {
            "meter": r.integers(0, METERS, n),
            "at": pd.to_datetime("2026-10-01")
            + pd.to_timedelta(r.integers(0, 86_400 * 3, n), unit="s"),
            "kw": r.gamma(3.0, 0.7, n),
        }
    )


def hourly(part: pd.DataFrame) -> pd.DataFrame:
    """Each meter's mean load per hour, in this partition's readings."""
    out = part.set_index("at").groupby("meter")["kw"].resample("1h").mean().reset_index()
    return out.rename(columns={"at": "hour"})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(20 * a.scale)))
    sites = pd.DataFrame(
        {"meter": np.arange(METERS), "site": [f"site-{m % 37:02d}" for m in range(METERS)]}
    )
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
        frame = dd.from_map(readings, range(parts), meta=readings(0).iloc[:0])
        per_hour = frame.map_partitions(hourly, meta={"meter": "i8", "hour": "M8[ns]", "kw": "f8"})
        joined = per_hour.merge(sites, on="meter", how="left")
        stats = joined.groupby(["site", "hour"])["kw"].agg(["mean", "max", "count"]).compute()
        top = stats["mean"].groupby(level="site").mean().nlargest(3)
        print(len(stats), list(top.index))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
