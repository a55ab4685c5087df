"""The `sessions` study workload's own logic (experiments/workloads/sessions.py), without
Spark: its parser reads what experiments/datagen.py writes, and a user's clicks are cut into
sessions at 30-minute gaps with the sums the job aggregates."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.conftest import REPO, load_script


@pytest.fixture(scope="module")
def workload() -> ModuleType:
    pytest.importorskip("pyspark", reason="the workload imports pyspark (the [spark] extra)")
    return load_script("sessions_workload", REPO / "experiments" / "workloads" / "sessions.py")


@pytest.fixture(scope="module")
def datagen() -> ModuleType:
    return load_script("datagen", REPO / "experiments" / "datagen.py")


def test_every_generated_line_parses(
    workload: ModuleType, datagen: ModuleType, tmp_path: Path
) -> None:
    datagen.gen_events(tmp_path, 1, np.random.default_rng(3))
    lines = (tmp_path / "part-00000.csv").read_text().splitlines()
    parsed = [workload.parse(line) for line in lines]
    assert parsed[0] is None  # the header
    rows = parsed[1:]
    assert len(rows) > 5000 and all(r is not None for r in rows)
    kinds = {r[1][1] for r in rows}
    assert {"home", "cart", "checkout", "product", "search", "api"} == kinds
    assert all(r[1][2] >= 0 and r[1][3] in (200, 304, 404, 500) for r in rows)
    # Amounts keep their value whatever the currency's spelling ("USD 1.50", "1.50 EUR").
    assert any(r[1][2] > 0 for r in rows if r[1][1] == "checkout")


def test_clicks_are_cut_into_sessions_at_thirty_minute_gaps(workload: ModuleType) -> None:
    day = 1_704_067_200.0  # 2024-01-01T00:00:00Z
    clicks = [
        (day + 1900.0, "checkout", 12.5, 200),  # 29 min after the first: same session
        (day + 100.0, "home", 0.0, 200),  # out of order: sessions follow time, not input
        (day + 1900.0 + 1801.0, "api", 0.0, 500),  # 30 min 1 s later: a new session
        (day + 86_400.0 * 2, "product", 3.0, 200),
    ]
    out = workload.sessions(clicks)
    assert out == [
        (("2024-01-01", "home"), (1, 2, 1800, 1, 1250, 0)),
        (("2024-01-01", "api"), (1, 1, 0, 0, 0, 1)),
        (("2024-01-03", "product"), (1, 1, 0, 0, 0, 0)),
    ]
    assert workload.sessions([]) == []
