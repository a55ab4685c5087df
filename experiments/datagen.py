"""Deterministic input data for the validation study's workloads (seeded numpy, no Spark).

    python experiments/datagen.py DATASET --size-mb N --out DIR [--seed 7]

writes ``DIR/<dataset>-<N>mb/`` and a ``_DONE.json`` holding the parameters; a second call
with the same parameters does nothing, so specs can call it before every study. The same
seed and size always give byte-identical files, so runs on different days read the same
data. Datasets:

* ``text``    — Zipf-distributed words (a 200k-word vocabulary), 12 words a line: word count.
* ``graph``   — a directed graph with power-law in-degrees, ``src dst`` lines: PageRank.
* ``records`` — 100-byte records ``KEY(10),PAYLOAD(88)``, TeraSort-like: the sort.
* ``tables``  — Parquet ``orders`` (8 files) and ``customers``: the SQL join + aggregation.
* ``events``  — CSV web-shop events with messy text fields: the Python-UDF ETL.
* ``features`` — Parquet, 16 numeric features, a category and a 0/1 label that depends on
  them (logistic): the ``pyspark.ml`` pipeline.
* ``readings`` — Parquet sensor time series (sensor, minute, value, temperature) with a
  per-sensor trend, daily cycle and noise: the ``applyInPandas`` job.
* ``ratings`` — Parquet (user, item, rating): half-star ratings from a rank-8 latent model
  plus biases and noise, items drawn with Zipf-like popularity: the ALS recommender.

The window-function job reads ``tables`` (orders) too; the n-gram count and the inverted
index read ``text``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MB = 1 << 20
LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    lengths = rng.integers(3, 11, size=size)
    chars = LETTERS[rng.integers(0, 26, size=int(lengths.sum()))].tobytes().decode()
    ends = np.cumsum(lengths)
    starts = ends - lengths
    words = [chars[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    return np.array(words, dtype=object)


def gen_text(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    vocab = _vocabulary(rng, 200_000)
    spaced = np.array([w + " " for w in vocab], dtype=object)
    broken = np.array([w + "\n" for w in vocab], dtype=object)
    target = size_mb * MB
    written = 0
    part = 0
    chunk_words = 300_000  # ~2 MB of text per chunk
    while written < target:
        ranks = rng.zipf(1.15, size=chunk_words)
        idx = (ranks - 1) % len(vocab)
        words = np.where(np.arange(chunk_words) % 12 == 11, broken[idx], spaced[idx])
        data = "".join(words.tolist()).encode()
        with open(out / f"part-{part // 64:05d}.txt", "ab") as fh:
            fh.write(data)
        written += len(data)
        part += 1


def gen_graph(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    edges = size_mb * MB // 14  # ~14 bytes per "src dst\n" line
    nodes = max(1000, edges // 10)
    src = rng.integers(0, nodes, size=edges)
    # Power-law in-degree: popular pages get most links.
    dst = (rng.zipf(1.3, size=edges) - 1 + rng.integers(0, nodes, size=edges) // 1000) % nodes
    lines = np.char.add(np.char.add(src.astype("U7"), " "), dst.astype("U7"))
    (out / "edges.txt").write_text("\n".join(lines.tolist()) + "\n")


def gen_records(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    n = size_mb * MB // 100
    per_file = 500_000
    for part, start in enumerate(range(0, n, per_file)):
        m = min(per_file, n - start)
        rows = np.empty((m, 100), dtype=np.uint8)
        rows[:, :10] = rng.integers(65, 91, size=(m, 10), dtype=np.uint8)
        rows[:, 10] = ord(",")
        rows[:, 11:99] = LETTERS[rng.integers(0, 26, size=(m, 88))]
        rows[:, 99] = ord("\n")
        (out / f"part-{part:05d}.csv").write_bytes(rows.tobytes())


def gen_tables(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    orders = size_mb * MB // 20  # Parquet compresses these rows to roughly 20 bytes
    customers = max(1000, orders // 50)
    countries = np.array(["DE", "FR", "US", "IN", "BR", "JP", "GB", "NG", "CN", "AU"])
    segments = np.array(["consumer", "corporate", "home office", "small business"])
    cust = pa.table(
        {
            "customer_id": np.arange(customers, dtype=np.int64),
            "country": countries[rng.integers(0, len(countries), customers)],
            "segment": segments[rng.integers(0, len(segments), customers)],
            "signup_year": rng.integers(2010, 2025, customers).astype(np.int32),
        }
    )
    (out / "customers").mkdir()
    pq.write_table(cust, out / "customers" / "part-00000.parquet")
    (out / "orders").mkdir()
    files = 8
    for part in range(files):
        m = orders // files
        table = pa.table(
            {
                "order_id": np.arange(part * m, (part + 1) * m, dtype=np.int64),
                "customer_id": (rng.zipf(1.2, m) - 1 + rng.integers(0, customers, m)) % customers,
                "product_id": rng.integers(0, 50_000, m).astype(np.int32),
                "quantity": rng.integers(1, 20, m).astype(np.int32),
                "price": np.round(rng.lognormal(3.0, 1.0, m), 2),
                "day": rng.integers(0, 730, m).astype(np.int32),
            }
        )
        pq.write_table(table, out / "orders" / f"part-{part:05d}.parquet")


def gen_events(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    n = size_mb * MB // 150
    agents = np.array(
        [
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Version/17.5 Mobile Safari",
            "curl/8.8.0",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ]
    )
    paths = np.array(["/", "/cart", "/checkout", "/product/{}", "/search?q=item{}", "/api/v2/{}"])
    currencies = np.array(["USD {:.2f}", "{:.2f} EUR", "GBP{:.2f}", "{:.2f}"])
    per_file = 400_000
    for part, start in enumerate(range(0, n, per_file)):
        m = min(per_file, n - start)
        ts = 1_704_067_200 + rng.integers(0, 86_400 * 60, m)
        user = rng.integers(0, 200_000, m)
        pi = rng.integers(0, len(paths), m)
        ids = rng.integers(0, 100_000, m)
        ci = rng.integers(0, len(currencies), m)
        amount = np.round(rng.lognormal(3.0, 1.2, m), 2)
        ai = rng.integers(0, len(agents), m)
        status = rng.choice([200, 200, 200, 200, 304, 404, 500], m)
        lines = []
        for i in range(m):
            stamp = np.datetime_as_string(np.datetime64(int(ts[i]), "s")) + "Z"
            lines.append(
                f'{stamp},{user[i]},"{paths[pi[i]].format(ids[i])}",'
                f'"{currencies[ci[i]].format(amount[i])}","{agents[ai[i]]}",{status[i]}'
            )
        header = "ts,user_id,url,amount,user_agent,status\n"
        (out / f"part-{part:05d}.csv").write_text(header + "\n".join(lines) + "\n")


def gen_features(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    columns = 16
    n = size_mb * MB // (8 * (columns + 2))  # doubles barely compress
    weights = rng.normal(0.0, 1.0, columns)
    categories = np.array(["web", "store", "phone", "partner", "other"])
    per_file = 50_000  # one row group each: enough input splits for 4 tasks at 60 MB
    for part, start in enumerate(range(0, n, per_file)):
        m = min(per_file, n - start)
        x = rng.normal(0.0, 1.0, (m, columns)) * rng.uniform(0.5, 20.0, columns)
        logit = (x / x.std(axis=0)) @ weights / np.sqrt(columns) * 3.0
        label = (rng.random(m) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
        cols = {f"f{i:02d}": x[:, i] for i in range(columns)}
        cols["channel"] = categories[rng.integers(0, len(categories), m)]
        cols["label"] = label
        pq.write_table(pa.table(cols), out / f"part-{part:05d}.parquet")


def gen_readings(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    n = size_mb * MB // 24  # sensor int32, minute int32, two doubles
    sensors = max(100, n // 20_000)
    per_file = 500_000
    trend = rng.normal(0.0, 0.001, sensors)
    level = rng.normal(50.0, 10.0, sensors)
    for part, start in enumerate(range(0, n, per_file)):
        m = min(per_file, n - start)
        sensor = rng.integers(0, sensors, m).astype(np.int32)
        minute = rng.integers(0, 60 * 24 * 30, m).astype(np.int32)
        cycle = 5.0 * np.sin(2 * np.pi * (minute % 1440) / 1440.0)
        value = level[sensor] + trend[sensor] * minute + cycle + rng.normal(0.0, 2.0, m)
        spikes = rng.random(m) < 0.001
        value[spikes] += rng.normal(0.0, 50.0, int(spikes.sum()))
        table = pa.table(
            {
                "sensor": sensor,
                "minute": minute,
                "value": value,
                "temperature": 20.0 + cycle + rng.normal(0.0, 1.0, m),
            }
        )
        pq.write_table(table, out / f"part-{part:05d}.parquet")


def gen_ratings(out: Path, size_mb: int, rng: np.random.Generator) -> None:
    n = size_mb * MB // 12  # int32 user, int32 item, float32 rating (Parquet: ~5 bytes a row)
    users = max(500, n // 40)
    items = max(200, n // 150)
    rank = 8
    user_factors = rng.normal(0.0, 1.0 / np.sqrt(rank), (users, rank))
    item_factors = rng.normal(0.0, 1.0 / np.sqrt(rank), (items, rank))
    user_bias = rng.normal(0.0, 0.3, users)
    item_bias = rng.normal(0.0, 0.5, items)
    # Zipf-like popularity (a few blockbusters, a long tail), scattered over the item ids.
    popularity = 1.0 / (np.arange(items) + 10.0) ** 0.9
    popularity = popularity[rng.permutation(items)]
    popularity /= popularity.sum()
    activity = 1.0 / (np.arange(users) + 50.0) ** 0.6
    activity = activity[rng.permutation(users)]
    activity /= activity.sum()
    per_file = 500_000
    for part, start in enumerate(range(0, n, per_file)):
        m = min(per_file, n - start)
        user = rng.choice(users, size=m, p=activity)
        item = rng.choice(items, size=m, p=popularity)
        affinity = np.einsum("ij,ij->i", user_factors[user], item_factors[item])
        raw = 3.2 + 1.5 * affinity + user_bias[user] + item_bias[item] + rng.normal(0.0, 0.4, m)
        rating = np.clip(np.round(raw * 2.0) / 2.0, 0.5, 5.0).astype(np.float32)
        table = pa.table(
            {"user": user.astype(np.int32), "item": item.astype(np.int32), "rating": rating}
        )
        pq.write_table(table, out / f"part-{part:05d}.parquet")


GENERATORS: dict[str, Callable[[Path, int, np.random.Generator], None]] = {
    "text": gen_text,
    "graph": gen_graph,
    "records": gen_records,
    "tables": gen_tables,
    "events": gen_events,
    "features": gen_features,
    "readings": gen_readings,
    "ratings": gen_ratings,
}


def generate(dataset: str, size_mb: int, out: Path, seed: int = 7) -> Path:
    """Write the dataset (unless already there with these parameters); returns its dir."""
    target = out / f"{dataset}-{size_mb}mb"
    params = {"dataset": dataset, "size_mb": size_mb, "seed": seed, "version": 1}
    done = target / "_DONE.json"
    if done.is_file() and json.loads(done.read_text()) == params:
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    GENERATORS[dataset](target, size_mb, np.random.default_rng(seed))
    done.write_text(json.dumps(params))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=sorted(GENERATORS))
    parser.add_argument("--size-mb", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(generate(args.dataset, args.size_mb, args.out, args.seed))


if __name__ == "__main__":
    main()
