"""Study pairs that differ in dynamic allocation: recognised, classified, and turned into
the what-if that moves the baseline to the target (the dynamic allocation study's specs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.experiment import accuracy
from perfmodel.experiment.allocation_pairs import DYNAMIC_ALLOCATION, differs, what_if_fields
from perfmodel.experiment.spec import load_spec
from perfmodel.experiment.what_if_kind import WORKERS, pair_kind

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted((REPO / "experiments" / "cluster" / "dynamic").glob("*.toml"))


def _settings() -> dict[str, dict]:
    spec = load_spec(SPECS[0])
    return {c.name: c.as_dict() for c in spec.configs}


def test_the_study_specs_pair_static_and_dynamic_and_the_two_maxima() -> None:
    assert [p.name for p in SPECS] == ["join.toml", "sort.toml"]
    s = _settings()
    static, big, small = s["static"], s["dynamic max 8"], s["dynamic max 2"]
    for a, b in ((static, big), (big, small), (static, small)):
        assert accuracy._comparable(a, b) and accuracy._comparable(b, a)
        assert differs(a, b)
        assert pair_kind(a, b) == DYNAMIC_ALLOCATION
    assert what_if_fields(static, big) == {
        "dynamic_allocation": True,
        "min_executors": 0,
        "max_executors": 8,
        "initial_executors": None,
    }
    assert what_if_fields(big, small)["max_executors"] == 2  # type: ignore[index]
    assert what_if_fields(big, static) == {"dynamic_allocation": False}
    assert what_if_fields(static, static) is None


def test_other_allocation_settings_are_not_a_what_if() -> None:
    s = _settings()
    timeout = dict(s["dynamic max 8"])
    timeout["conf"] = dict(timeout["conf"]) | {"spark.dynamicAllocation.executorIdleTimeout": "5s"}
    assert not accuracy._comparable(s["dynamic max 8"], timeout)


def test_worker_pairs_keep_their_kind() -> None:
    s = _settings()
    three = dict(s["static"]) | {"workers": 3}
    assert pair_kind(s["static"], three) == WORKERS
    assert what_if_fields(s["static"], three) is None


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_study_specs_load(path: Path) -> None:
    spec = load_spec(path)
    assert {c.workers for c in spec.configs} == {8}  # one cluster shape: built once
    assert spec.script is not None and spec.script.exists()
