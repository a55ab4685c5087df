"""Held-out Dask workload (fifth set): word pairs that occur together in generated short
documents, counted with ``dask.bag`` in pure Python: documents tokenised per partition,
each document's distinct pairs emitted, counted by ``foldby`` (a reduction whose partial
dictionaries cross between workers), and the most frequent pairs kept; under a
LocalCluster: 24 partitions of 1,200 documents. ``--scale`` multiplies the partitions."""

import argparse
import itertools
import random
import time

import dask.bag as db
from dask.distributed import Client, LocalCluster

DOCS_PER_PART = 1_200
VOCABULARY = [f"w{i}" for i in range(3_000)]


def documents(i: int) -> list[str]:
    """Short documents whose words follow a skewed distribution (a few are frequent)."""
    r = random.Random(5_000 + i)
    weights = [1.0 / (k + 1) ** 0.8 for k in range(len(VOCABULARY))]
    return [
        " ".join(r.choices(VOCABULARY, weights=weights, k=r.randint(6, 14)))
        for _ in range(DOCS_PER_PART)
    ]


def pairs(doc: str) -> list[tuple[str, str]]:
    words = sorted(set(doc.split()))
    return list(itertools.combinations(words, 2))


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
        docs = db.from_sequence(range(parts), npartitions=parts).map(documents).flatten()
        counted = (
            docs.map(pairs)
            .flatten()
            .foldby(lambda p: p, lambda n, _: n + 1, 0, lambda x, y: x + y, 0)
        )
        top = counted.topk(20, key=lambda kv: kv[1]).compute()
        print(len(top), top[0])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
