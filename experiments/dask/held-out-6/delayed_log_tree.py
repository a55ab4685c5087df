"""Held-out Dask workload (sixth set): web-server log lines generated and parsed in pure
Python by ``dask.delayed`` (a regular expression per line), per-chunk counters of status
codes and paths merged pairwise in a binary tree of delayed merges, and the slowest paths
picked from the merged result; under a LocalCluster: 48 chunks of 25,000 lines.
``--scale`` multiplies the chunks."""

import argparse
import random
import re
import time
from collections import Counter

import dask
from dask.distributed import Client, LocalCluster

LINES_PER_CHUNK = 25_000
LINE = re.compile(r'^(\S+) - - \[([^\]]+)\] "(\w+) (\S+) HTTP/1\.1" (\d{3}) (\d+) (\d+)ms$')
PATHS = [f"/api/v1/{a}/{b}" for a in ("users", "orders", "items", "carts") for b in range(40)]


def chunk(i: int) -> list[str]:
    r = random.Random(5_000 + i)
    out = []
    for n in range(LINES_PER_CHUNK):
        status = r.choices((200, 201, 304, 404, 500), (70, 5, 15, 8, 2))[0]
        out.append(
            f"10.0.{r.randrange(256)}.{r.randrange(256)} - - [30/Nov/2026:12:{n % 60:02d}:00] "
            f'"{r.choice(("GET", "POST"))} {r.choice(PATHS)} HTTP/1.1" {status} '
            f"{r.randrange(100, 90_000)} {int(r.expovariate(1 / 80))}ms"
        )
    return out


def parse(lines: list[str]) -> tuple[Counter, dict[str, list[int]]]:
    statuses: Counter = Counter()
    times: dict[str, list[int]] = {}
    for line in lines:
        m = LINE.match(line)
        if m is None:
            continue
        statuses[m.group(5)] += 1
        times.setdefault(m.group(4), []).append(int(m.group(7)))
    return statuses, times


def merge(
    a: tuple[Counter, dict[str, list[int]]], b: tuple[Counter, dict[str, list[int]]]
) -> tuple[Counter, dict[str, list[int]]]:
    times = {k: list(v) for k, v in a[1].items()}
    for k, v in b[1].items():
        times.setdefault(k, []).extend(v)
    return a[0] + b[0], times


def slowest(merged: tuple[Counter, dict[str, list[int]]]) -> list[tuple[str, float]]:
    p95 = {k: sorted(v)[int(0.95 * (len(v) - 1))] for k, v in merged[1].items()}
    return sorted(p95.items(), key=lambda kv: -kv[1])[:5]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    chunks = max(2, int(round(48 * a.scale)))
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
        level = [dask.delayed(parse)(dask.delayed(chunk)(i)) for i in range(chunks)]
        while len(level) > 1:
            halves = zip(level[::2], level[1::2], strict=False)
            pairs = [dask.delayed(merge)(x, y) for x, y in halves]
            level = pairs + ([level[-1]] if len(level) % 2 else [])
        top = dask.delayed(slowest)(level[0]).compute()
        print(top[0])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
