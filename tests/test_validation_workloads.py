"""The validation corpus's workloads of other shapes: their generated data, and one of them
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


@pytest.mark.slow
def test_pandas_groups_runs_on_spark_and_keeps_nearly_every_hour(
    datagen: ModuleType, tmp_path: Path
) -> None:
    """applyInPandas + pandas_udf in real Python workers (pandas and pyarrow there): every
    (sensor, hour) with readings comes out, bar the rare hour holding only spikes."""
    source = datagen.generate("readings", 1, tmp_path / "data")
    target = tmp_path / "hourly"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [str(SPARK_SUBMIT), "--master", "local[1]", "--conf", "spark.ui.enabled=false"]
        + ["--conf", "spark.sql.shuffle.partitions=2"]
        + [str(REPO / "experiments" / "workloads" / "pandas_groups.py"), str(source), str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    readings = pq.read_table(source)
    sensors, minutes = readings.column("sensor").to_pylist(), readings.column("minute").to_pylist()
    hours = {(s, m // 60) for s, m in zip(sensors, minutes, strict=True)}
    out = pq.read_table(target)
    assert f"hours: {out.num_rows}" in proc.stdout
    assert 0.99 * len(hours) <= out.num_rows <= len(hours)
    assert pc.min(out.column("readings")).as_py() >= 1
