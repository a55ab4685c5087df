"""Held-out Dask workload (seventh set): a pipeline of futures. ``client.map`` generates
documents in pure Python, a second ``client.map`` on those futures normalises and tokenises
each (regular expressions), a third counts character trigrams per document, and
``client.submit`` merges the counters in groups of eight, then once more; under a
LocalCluster: 64 documents of 4,000 sentences. ``--scale`` multiplies the documents."""

import argparse
import random
import re
import time
from collections import Counter

from dask.distributed import Client, LocalCluster

SENTENCES = 4_000
WORDS = [f"w{a}{b}" for a in "bcdfghklmnprst" for b in "aeiou"]
TOKEN = re.compile(r"[a-z0-9]+")


def document(i: int) -> str:
    r = random.Random(3_300 + i)
    return "\n".join(
        " ".join(
            r.choice(WORDS).upper() if r.random() < 0.1 else r.choice(WORDS) for _ in range(12)
        )
        + "."
        for _ in range(SENTENCES)
    )


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def trigrams(words: list[str]) -> Counter:
    out: Counter = Counter()
    for w in words:
        for j in range(len(w) - 2):
            out[w[j : j + 3]] += 1
    return out


def merge(*counters: Counter) -> Counter:
    total: Counter = Counter()
    for c in counters:
        total.update(c)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--memory", default="2GiB")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    docs = max(8, int(round(64 * a.scale)))
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
        texts = client.map(document, range(docs))
        words = client.map(tokens, texts)
        grams = client.map(trigrams, words)
        groups = [client.submit(merge, *grams[i : i + 8]) for i in range(0, len(grams), 8)]
        total = client.submit(merge, *groups).result()
        print(len(total), total.most_common(1)[0])
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
