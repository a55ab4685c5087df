"""Dask study workload: a bag pipeline of pure-Python functions, run under a LocalCluster.

Synthetic log lines are generated, parsed, filtered and normalised by plain Python
functions, and reduced to per-user word frequencies and the most common words. ``--scale``
multiplies the lines.
"""

import argparse
import random
import time

import dask.bag as db
from dask.distributed import Client, LocalCluster

WORDS = [f"w{i:03d}" for i in range(400)]
LINES_PER_PART = 10_000


def lines(part: int) -> list[str]:
    r = random.Random(part)
    out = []
    for i in range(LINES_PER_PART):
        user = f"user{r.randrange(500)}"
        text = " ".join(r.choice(WORDS) for _ in range(r.randrange(5, 25)))
        out.append(f"{part}-{i}|{user}|{r.choice(['GET', 'PUT', 'DEL'])}|{text}")
    return out


def parse(line: str) -> dict:
    ident, user, verb, text = line.split("|")
    return {"id": ident, "user": user, "verb": verb, "words": text.split()}


def normalise(record: dict) -> dict:
    words = [w.upper()[::-1].lower()[::-1] for w in record["words"] if not w.endswith("7")]
    return {**record, "words": sorted(set(words))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    parts = max(2, int(round(32 * a.scale)))
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
            .map(lines)
            .flatten()
            .map(parse)
            .filter(lambda r: r["verb"] != "DEL")
            .map(normalise)
        )
        top = records.pluck("words").flatten().frequencies().topk(10, key=lambda kv: kv[1])
        users = records.map(lambda r: (r["user"], len(r["words"]))).foldby(
            lambda kv: kv[0], lambda acc, kv: acc + kv[1], 0, lambda a, b: a + b, 0
        )
        print(top.compute()[:3], len(users.compute()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
