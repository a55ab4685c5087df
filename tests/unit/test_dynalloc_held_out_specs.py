"""The held-out dynamic allocation specs (experiments/cluster/dynamic-held-out/,
dynamic-held-out-2/ and dynamic-held-out-3/): held-out workloads only, run exactly as the fit
specs of experiments/cluster/dynamic/ are, so the studies' held-out figures test the same
what-ifs the development figures did."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.experiment import allocation_pairs
from perfmodel.experiment.accuracy import _comparable
from perfmodel.experiment.spec import load_spec
from perfmodel.experiment.split import HELD_OUT, load_split
from perfmodel.experiment.what_if_kind import pair_kind

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "experiments" / "cluster"
FIRST = sorted((CLUSTER / "dynamic-held-out").glob("*.toml"))
SECOND = sorted((CLUSTER / "dynamic-held-out-2").glob("*.toml"))
THIRD = sorted((CLUSTER / "dynamic-held-out-3").glob("*.toml"))
HELD_OUT_SPECS = FIRST + SECOND + THIRD
FIT_SORT = ROOT / "experiments" / "cluster" / "dynamic" / "sort.toml"


def test_each_study_has_two_held_out_workloads_of_its_own() -> None:
    first = [load_spec(p) for p in FIRST]
    second = [load_spec(p) for p in SECOND]
    third = [load_spec(p) for p in THIRD]
    assert sorted(s.workload for s in first) == ["inverted-index", "ngrams"]
    assert sorted(s.workload for s in second) == ["components", "tpch"]
    assert sorted(s.workload for s in third) == ["als", "tpcds"]
    split = load_split(ROOT / "experiments" / "splits" / "default.toml")
    assert all(split.role(s.workload) == HELD_OUT for s in first + second + third)
    python = next(s for s in first if s.workload == "inverted-index")
    assert python.record.pyspy  # its work is in the Python workers: sampled there


@pytest.mark.parametrize("path", HELD_OUT_SPECS, ids=lambda p: p.stem)
def test_held_out_specs_run_the_fit_specs_configurations(path: Path) -> None:
    spec, fit = load_spec(path), load_spec(FIT_SORT)
    assert spec.configs == fit.configs
    assert spec.script is not None and spec.script.is_file()
    assert Path(spec.prepare[1].replace("{spec_dir}", str(path.parent))).resolve().is_file()
    assert spec.data_dir.resolve() == (ROOT / "build" / "experiments" / "data").resolve()
    # Every pair of configurations is a dynamic allocation what-if the study predicts.
    settings = {c.name: c.as_dict() for c in spec.configs}
    names = sorted(settings)
    for a in names:
        for b in names:
            if a != b:
                assert _comparable(settings[a], settings[b])
                assert pair_kind(settings[a], settings[b]) == allocation_pairs.DYNAMIC_ALLOCATION
