"""Held-out Dask workload (tenth set): per partition a random sparse graph built in pure
Python by ``dask.delayed``, breadth-first distances from a few sources over it (pure
Python), each partition's histogram of distances, and the histograms summed by a tree of
delayed additions four at a time; under a LocalCluster: 32 partitions of 30,000 nodes.
``--scale`` multiplies the partitions."""

import argparse
import random
import time
from collections import Counter, deque

import dask
from dask.distributed import Client, LocalCluster

NODES = 30_000
EDGES_PER_NODE = 3
SOURCES = 4


@dask.delayed
def graph(i: int) -> dict[int, list[int]]:
    r = random.Random(10_500 + i)
    adjacency: dict[int, list[int]] = {n: [] for n in range(NODES)}
    for n in range(NODES):
        for _ in range(EDGES_PER_NODE):
            m = r.randrange(NODES)
            adjacency[n].append(m)
            adjacency[m].append(n)
    return adjacency


@dask.delayed
def distances(adjacency: dict[int, list[int]], i: int) -> Counter:
    r = random.Random(10_700 + i)
    counts: Counter = Counter()
    for source in r.sample(range(NODES), SOURCES):
        seen = {source: 0}
        queue = deque([source])
        while queue:
            n = queue.popleft()
            for m in adjacency[n]:
                if m not in seen:
                    seen[m] = seen[n] + 1
                    queue.append(m)
        counts.update(seen.values())
    return counts


@dask.delayed
def added(*parts: Counter) -> Counter:
    total: Counter = Counter()
    for part in parts:
        total.update(part)
    return total


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
        level = [distances(graph(i), i) for i in range(parts)]
        while len(level) > 1:
            level = [added(*level[k : k + 4]) for k in range(0, len(level), 4)]
        (total,) = dask.compute(level[0])
        print(max(total), sum(total.values()))
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
