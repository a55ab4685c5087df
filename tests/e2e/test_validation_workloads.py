"""The validation corpus's workloads of other shapes: their generated data, and three of them
run for real on Spark at a tiny size, one after the other in one `spark-submit`
(tests/data/workloads/one_driver.py: one JVM start instead of three)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, load_script

SPARK_SUBMIT = Path(sys.executable).with_name("spark-submit")
WORKLOADS = REPO / "experiments" / "workloads"
ONE_DRIVER = REPO / "tests" / "data" / "workloads" / "one_driver.py"
GRAPH = ["3 2", "2 1", "10 11", "11 12", "12 10", "20 21", "30 30"]
"""components' input: a path of three, a triangle, a pair and a self-loop."""


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


@dataclass(frozen=True)
class Ran:
    """The one `spark-submit` of the three workloads: its exit code and stderr, each
    workload's own output (after its ``== workload NAME`` line), and their folders."""

    returncode: int
    stderr: str
    output: dict[str, str]
    data: Path
    text: Path
    readings: Path


def _sections(stdout: str) -> dict[str, str]:
    out: dict[str, str] = {}
    name = None
    for line in stdout.splitlines(keepends=True):
        if line.startswith("== workload "):
            name = line.split(maxsplit=2)[2].strip()
            out[name] = ""
        elif name is not None:
            out[name] += line
    return out


@pytest.fixture(scope="module")
def ran(datagen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """ngrams over 1 MB of generated text, pandas_groups over a month of generated readings,
    components (10 rounds at most) over a hand-made graph (see its test), on ``local[1]``."""
    tmp = tmp_path_factory.mktemp("workloads")
    text = datagen.generate("text", 1, tmp / "text")
    readings = datagen.generate("readings", 1, tmp / "readings")
    graph = tmp / "graph"
    graph.mkdir()
    (graph / "edges.txt").write_text("\n".join(GRAPH) + "\n")
    runs = [
        ["ngrams.py", text, tmp / "bigrams"],
        ["pandas_groups.py", readings, tmp / "hourly"],
        ["components.py", graph, "10", tmp / "components"],
    ]
    args: list[str] = []
    for script, *rest in runs:
        args += ["---"] if args else []  # one_driver.py's separator between applications
        args += [str(WORKLOADS / script), *map(str, rest)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [str(SPARK_SUBMIT), "--master", "local[1]", "--conf", "spark.ui.enabled=false"]
        + ["--conf", "spark.sql.shuffle.partitions=2", str(ONE_DRIVER), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    return Ran(proc.returncode, proc.stderr, _sections(proc.stdout), tmp, text, readings)


@pytest.mark.slow
def test_ngrams_runs_on_spark_and_counts_the_top_bigrams(ran: Ran) -> None:
    """Tokenizer → NGram → groupBy in the JVM: the top bigrams and their counts match the
    same count done in Python over the generated text."""
    assert ran.returncode == 0, ran.stderr[-3000:]
    source, target = ran.text, ran.data / "bigrams"
    assert "top bigram: " in ran.output["ngrams"]
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
def test_pandas_groups_runs_on_spark_and_keeps_nearly_every_hour(ran: Ran) -> None:
    """applyInPandas + pandas_udf in real Python workers (pandas and pyarrow there): every
    (sensor, hour) with readings comes out, bar the rare hour holding only spikes."""
    assert ran.returncode == 0, ran.stderr[-3000:]
    source, target = ran.readings, ran.data / "hourly"
    readings = pq.read_table(source)
    sensors, minutes = readings.column("sensor").to_pylist(), readings.column("minute").to_pylist()
    hours = {(s, m // 60) for s, m in zip(sensors, minutes, strict=True)}
    out = pq.read_table(target)
    assert f"hours: {out.num_rows}" in ran.output["pandas_groups"]
    assert 0.99 * len(hours) <= out.num_rows <= len(hours)
    assert pc.min(out.column("readings")).as_py() >= 1


@pytest.mark.slow
def test_components_runs_on_spark_and_finds_a_small_graphs_components(ran: Ran) -> None:
    """Label propagation over a hand-made edge list (`GRAPH`): a path of three (its far end
    two hops from the smallest id, so two rounds to settle), a triangle, a pair, a self-loop
    alone (a vertex with no other edge is in no component: the workload reads vertices off
    edges); the sizes per smallest id are those components, and the rounds stop once nothing
    moves."""
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = pq.read_table(ran.data / "components")
    stdout = ran.output["components"]
    sizes = dict(zip(out.column("label").to_pylist(), out.column("count").to_pylist(), strict=True))
    assert sizes == {1: 3, 10: 3, 20: 2}
    assert "components: 3, largest: 3 vertices" in stdout
    assert "round 2: 1 labels changed" in stdout
    assert "round 3: 0 labels changed" in stdout and "round 4" not in stdout
