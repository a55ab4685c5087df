"""The validation corpus's workloads of other shapes: their generated data, and two of them
run for real on Spark at a tiny size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, load_script

SPARK_SUBMIT = Path(sys.executable).with_name("spark-submit")


@pytest.fixture(scope="module")
def datagen() -> ModuleType:
    return load_script("datagen", REPO / "experiments" / "datagen.py")


def test_features_are_deterministic_and_the_label_depends_on_them(
    datagen: ModuleType, tmp_path: Path
) -> None:
    a = pq.read_table(datagen.generate("features", 2, tmp_path / "a"))
    b = pq.read_table(datagen.generate("features", 2, tmp_path / "b"))
    assert a.equals(b)
    assert a.num_rows == 2 * (1 << 20) // (8 * 18)
    assert {f"f{i:02d}" for i in range(16)} | {"channel", "label"} == set(a.column_names)
    label = a.column("label").to_numpy()
    assert set(np.unique(label)) == {0.0, 1.0}
    # The label is learnable: some feature correlates with it (what the pipeline fits).
    corr = [abs(np.corrcoef(a.column(f"f{i:02d}").to_numpy(), label)[0, 1]) for i in range(16)]
    assert max(corr) > 0.1


def test_readings_cover_many_sensors_over_a_month(datagen: ModuleType, tmp_path: Path) -> None:
    table = pq.read_table(datagen.generate("readings", 2, tmp_path))
    assert table.num_rows == 2 * (1 << 20) // 24
    assert pc.count_distinct(table.column("sensor")).as_py() == 100
    assert 0 <= pc.min(table.column("minute")).as_py() < pc.max(table.column("minute")).as_py()
    assert pc.max(table.column("minute")).as_py() < 60 * 24 * 30


def test_ratings_are_deterministic_half_stars_with_popular_items(
    datagen: ModuleType, tmp_path: Path
) -> None:
    a = pq.read_table(datagen.generate("ratings", 2, tmp_path / "a"))
    b = pq.read_table(datagen.generate("ratings", 2, tmp_path / "b"))
    assert a.equals(b)
    assert a.num_rows == 2 * (1 << 20) // 12
    assert a.column_names == ["user", "item", "rating"]
    rating = a.column("rating").to_numpy()
    assert set(np.unique(rating * 2)) <= set(range(1, 11))
    assert 2.5 < rating.mean() < 4.0 and rating.std() > 0.5
    # Zipf-like popularity: the top 1% of items hold far more than 1% of the ratings.
    per_item = np.sort(np.bincount(a.column("item").to_numpy()))[::-1]
    assert per_item[: len(per_item) // 100].sum() > 0.08 * a.num_rows
    # The low-rank model makes ratings predictable from the user and item: their means
    # explain part of the variance (what ALS fits).
    users, items = a.column("user").to_numpy(), a.column("item").to_numpy()
    user_mean = np.bincount(users, rating) / np.maximum(np.bincount(users), 1)
    item_mean = np.bincount(items, rating) / np.maximum(np.bincount(items), 1)
    assert np.corrcoef(item_mean[items], rating)[0, 1] > 0.3
    assert np.corrcoef(user_mean[users], rating)[0, 1] > 0.3


def _spark_submit(script: str, *args: Path | str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run(
        [str(SPARK_SUBMIT), "--master", "local[1]", "--conf", "spark.ui.enabled=false"]
        + ["--conf", "spark.sql.shuffle.partitions=2"]
        + [str(REPO / "experiments" / "workloads" / script), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
def test_ngrams_runs_on_spark_and_counts_the_top_bigrams(
    datagen: ModuleType, tmp_path: Path
) -> None:
    """Tokenizer → NGram → groupBy in the JVM: the top bigrams and their counts match the
    same count done in Python over the generated text."""
    source = datagen.generate("text", 1, tmp_path / "data")
    target = tmp_path / "bigrams"
    proc = _spark_submit("ngrams.py", source, target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected: dict[str, int] = {}
    for path in sorted(source.glob("part-*.txt")):
        for line in path.read_text().splitlines():
            words = line.lower().split()
            for pair in zip(words, words[1:], strict=False):
                key = " ".join(pair)
                expected[key] = expected.get(key, 0) + 1
    out = pq.read_table(target)
    got = dict(zip(out.column("bigram").to_pylist(), out.column("count").to_pylist(), strict=True))
    frequent = sorted((c for c in expected.values() if c > 1), reverse=True)
    assert out.num_rows == min(1000, len(frequent))
    assert sorted(got.values(), reverse=True) == frequent[: out.num_rows]
    assert all(expected[b] == c for b, c in got.items())


@pytest.mark.slow
def test_pandas_groups_runs_on_spark_and_keeps_nearly_every_hour(
    datagen: ModuleType, tmp_path: Path
) -> None:
    """applyInPandas + pandas_udf in real Python workers (pandas and pyarrow there): every
    (sensor, hour) with readings comes out, bar the rare hour holding only spikes."""
    source = datagen.generate("readings", 1, tmp_path / "data")
    target = tmp_path / "hourly"
    proc = _spark_submit("pandas_groups.py", source, target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    readings = pq.read_table(source)
    sensors, minutes = readings.column("sensor").to_pylist(), readings.column("minute").to_pylist()
    hours = {(s, m // 60) for s, m in zip(sensors, minutes, strict=True)}
    out = pq.read_table(target)
    assert f"hours: {out.num_rows}" in proc.stdout
    assert 0.99 * len(hours) <= out.num_rows <= len(hours)
    assert pc.min(out.column("readings")).as_py() >= 1


@pytest.mark.slow
def test_components_runs_on_spark_and_finds_a_small_graphs_components(tmp_path: Path) -> None:
    """Label propagation over a hand-made edge list: a path of three (its far end two hops
    from the smallest id, so two rounds to settle), a triangle, a pair, a self-loop alone
    (a vertex with no other edge is in no component: the workload reads vertices off edges);
    the sizes per smallest id are those components, and the rounds stop once nothing moves."""
    source = tmp_path / "graph"
    source.mkdir()
    edges = ["3 2", "2 1", "10 11", "11 12", "12 10", "20 21", "30 30"]
    (source / "edges.txt").write_text("\n".join(edges) + "\n")
    target = tmp_path / "components"
    proc = _spark_submit("components.py", source, "10", target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = pq.read_table(target)
    sizes = dict(zip(out.column("label").to_pylist(), out.column("count").to_pylist(), strict=True))
    assert sizes == {1: 3, 10: 3, 20: 2}
    assert "components: 3, largest: 3 vertices" in proc.stdout
    assert "round 2: 1 labels changed" in proc.stdout
    assert "round 3: 0 labels changed" in proc.stdout and "round 4" not in proc.stdout
