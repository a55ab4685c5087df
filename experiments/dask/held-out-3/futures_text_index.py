"""Held-out Dask workload (third set): futures (``client.map``/``client.submit``) building
an inverted index of generated documents in pure Python, merged by a tree of dictionary
merges, then scored, under a LocalCluster: 32 chunks of 6,000 documents. ``--scale``
multiplies the chunks."""

import argparse
import random
import time
from collections import Counter

from dask.distributed import Client, LocalCluster

DOCS_PER_CHUNK = 6_000
VOCAB = [f"t{i:04d}" for i in range(3_000)]


def index_chunk(chunk: int) -> dict[str, list[int]]:
    """Generate a chunk of documents and index them: term → document ids."""
    r = random.Random(700 + chunk)
    index: dict[str, list[int]] = {}
    for d in range(DOCS_PER_CHUNK):
        doc = chunk * DOCS_PER_CHUNK + d
        for term in {r.choice(VOCAB) for _ in range(r.randrange(20, 80))}:
            index.setdefault(term, []).append(doc)
    return index


def merge(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {t: list(ids) for t, ids in a.items()}
    for t, ids in b.items():
        out.setdefault(t, []).extend(ids)
    return out


def score(index: dict[str, list[int]]) -> list[tuple[str, int]]:
    counts = Counter({t: len(ids) for t, ids in index.items()})
    return counts.most_common(5)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    chunks = max(2, int(round(32 * a.scale)))
    with (
        LocalCluster(
            n_workers=a.workers,
            threads_per_worker=a.threads,
            memory_limit=a.memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        began = time.time()
        level = client.map(index_chunk, range(chunks))
        while len(level) > 1:
            pairs = [level[i : i + 2] for i in range(0, len(level), 2)]
            level = [client.submit(merge, *p) if len(p) == 2 else p[0] for p in pairs]
        top = client.submit(score, level[0]).result()
        print(top[:2])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
