"""Held-out Dask workload (ninth set): web-server log lines generated per partition in
pure Python, parsed by a regular expression into records, then per (path, status) a
``foldby`` of request counts and byte totals, the slowest requests by ``topk``, and each
client's request count by ``frequencies``; under a LocalCluster: 24 partitions of 8,000
lines. ``--scale`` multiplies the partitions."""

import argparse
import random
import re
import time

import dask.bag as db
from dask.distributed import Client, LocalCluster

LINES_PER_PART = 8_000
PATHS = [f"/shop/item/{i}" for i in range(40)] + ["/", "/cart", "/login", "/search"]
STATUS = [200] * 17 + [301, 404, 500]
LINE = re.compile(
    r'(?P<client>\d+\.\d+\.\d+\.\d+) - - \[(?P<time>[^\]]+)\] "(?P<method>\w+) (?P<path>\S+) '
    r'HTTP/1\.1" (?P<status>\d{3}) (?P<bytes>\d+) (?P<ms>\d+)'
)


def lines(i: int) -> list[str]:
    r = random.Random(9_700 + i)
    out = []
    for k in range(LINES_PER_PART):
        client = f"10.{r.randrange(4)}.{r.randrange(256)}.{r.randrange(256)}"
        stamp = f"{1 + (k % 28):02d}/Nov/2026:{r.randrange(24):02d}:{r.randrange(60):02d}:00"
        path, status = r.choice(PATHS), r.choice(STATUS)
        size, ms = r.randrange(200, 90_000), int(r.expovariate(1 / 40)) + 1
        out.append(f'{client} - - [{stamp}] "GET {path} HTTP/1.1" {status} {size} {ms}')
    return out


def parse(line: str) -> dict:
    m = LINE.match(line)
    if m is None:
        return {"client": "?", "path": "?", "status": 0, "bytes": 0, "ms": 0}
    d = m.groupdict()
    return {
        "client": d["client"],
        "path": d["path"],
        "status": int(d["status"]),
        "bytes": int(d["bytes"]),
        "ms": int(d["ms"]),
    }


def add(total: tuple[int, int], record: dict) -> tuple[int, int]:
    return total[0] + 1, total[1] + record["bytes"]


def merge(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]


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
        records = db.from_sequence(range(parts), npartitions=parts).map(lines).flatten()
        records = records.map(parse)
        per_route = records.foldby(
            lambda r: (r["path"], r["status"]), add, (0, 0), merge, (0, 0)
        ).compute()
        slowest = records.topk(10, key=lambda r: r["ms"]).compute()
        busiest = records.pluck("client").frequencies().topk(5, key=lambda kv: kv[1]).compute()
        print(len(per_route), slowest[0]["ms"], busiest[0][1])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
