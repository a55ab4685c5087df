"""Held-out Dask workload (sixth set): click events sorted by time (``set_index``, a
task-based shuffle), a rolling one-minute count per partition in pandas
(``map_partitions``), then per-user statistics by a ``groupby().agg`` over the sorted frame;
under a LocalCluster: 24 partitions of 150,000 events. ``--scale`` multiplies the
partitions."""

import argparse
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.distributed import Client, LocalCluster

EVENTS_PER_PART = 150_000


def events(i: int) -> pd.DataFrame:
    r = np.random.default_rng(9_100 + i)
    n = EVENTS_PER_PART
    return pd.DataFrame(
        {
            "at": pd.to_datetime("2026-11-01")
            + pd.to_timedelta(r.integers(0, 86_400 * 7, n), unit="s"),
            "user": r.integers(0, 30_000, n),
            "latency": r.gamma(2.0, 30.0, n),
        }
    )


def per_minute(part: pd.DataFrame) -> pd.DataFrame:
    """Events and mean latency in the trailing minute, at each event (pandas' rolling)."""
    window = part["latency"].rolling("60s")
    return part.assign(recent=window.count(), recent_latency=window.mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(24 * a.scale)))
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
        frame = dd.from_map(events, range(parts), meta=events(0).iloc[:0])
        ordered = frame.set_index("at", npartitions=parts)
        windowed = ordered.map_partitions(per_minute)
        users = (
            windowed.groupby("user")
            .agg({"latency": ["mean", "max"], "recent": "max", "recent_latency": "mean"})
            .compute()
        )
        print(len(users), round(float(users[("latency", "mean")].mean()), 2))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
