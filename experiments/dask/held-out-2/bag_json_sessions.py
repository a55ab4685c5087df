"""Held-out Dask workload (second set): a dask.bag over JSON event records, decoded,
grouped into per-user sessions by pure-Python code, and reduced to session statistics and
the most frequent page paths, under a LocalCluster: 24 partitions of 12,000 events.
``--scale`` multiplies the partitions."""

import argparse
import json
import random
import time

import dask.bag as db
from dask.distributed import Client, LocalCluster

EVENTS_PER_PART = 12_000
PAGES = ["home", "search", "item", "cart", "pay", "help", "account", "list"]


def events(part: int) -> list[str]:
    r = random.Random(1_000 + part)
    out = []
    t = part * 100_000
    for _ in range(EVENTS_PER_PART):
        t += r.randrange(1, 30)
        out.append(
            json.dumps(
                {
                    "user": f"u{r.randrange(2_000)}",
                    "t": t,
                    "page": r.choice(PAGES),
                    "ms": r.randrange(5, 900),
                    "tags": [r.choice(PAGES) for _ in range(3)],
                }
            )
        )
    return out


def sessions(user_events: tuple[str, list[dict]]) -> list[dict]:
    """Split one user's events into sessions at gaps over 600 time units."""
    user, evs = user_events
    evs = sorted(evs, key=lambda e: e["t"])
    out, current = [], [evs[0]]
    for e in evs[1:]:
        if e["t"] - current[-1]["t"] > 600:
            out.append(current)
            current = []
        current.append(e)
    out.append(current)
    return [
        {
            "user": user,
            "n": len(s),
            "ms": sum(e["ms"] for e in s),
            "path": ">".join(e["page"] for e in s[:3]),
        }
        for s in out
    ]


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
        records = (
            db.from_sequence(range(parts), npartitions=parts)
            .map(events)
            .flatten()
            .map(json.loads)
            .filter(lambda e: e["page"] != "help")
        )
        by_user = records.groupby(lambda e: e["user"], shuffle="tasks").map(sessions).flatten()
        stats = by_user.map(lambda s: (s["n"], s["ms"])).fold(
            lambda acc, x: (acc[0] + 1, acc[1] + x[0], acc[2] + x[1]),
            lambda a, b: (a[0] + b[0], a[1] + b[1], a[2] + b[2]),
            initial=(0, 0, 0),
        )
        paths = by_user.pluck("path").frequencies().topk(5, key=lambda kv: kv[1])
        print(stats.compute(), paths.compute()[:2])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
