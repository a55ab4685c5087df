"""experiments/settings/*.toml are what scripts/make_settings_specs.py writes, and each is a
valid spec of the settings study (one machine shape, the settings varied)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from perfmodel.experiment.spec import load_spec
from perfmodel.experiment.split import HELD_OUT, load_split
from tests.conftest import REPO, load_script

SETTINGS = REPO / "experiments" / "settings"


@pytest.fixture(scope="module")
def maker() -> ModuleType:
    return load_script("make_settings_specs", REPO / "scripts" / "make_settings_specs.py")


def test_the_written_specs_are_up_to_date(maker: ModuleType) -> None:
    sources = {p.stem: p for p in (REPO / "experiments").glob("*.toml")} | maker.EXTRA
    assert {p.stem for p in SETTINGS.glob("*.toml")} == set(sources)
    for stem, source in sources.items():
        assert (SETTINGS / f"{stem}.toml").read_text() == maker.spec(source, stem), stem


@pytest.mark.parametrize("path", sorted(SETTINGS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_settings_spec_loads_and_runs_one_machine_shape(path: Path) -> None:
    spec = load_spec(path)
    assert spec.script is not None and spec.script.is_file()
    assert {(c.master, c.driver_memory) for c in spec.configs} == {("local[2]", "2g")}
    assert len({c.name for c in spec.configs}) == len(spec.configs) >= 5


def test_tpcds_and_the_wide_shuffle_are_held_out_sql_workloads() -> None:
    split = load_split(REPO / "experiments" / "splits" / "default.toml")
    for stem in ("tpcds", "wide_shuffle"):
        spec = load_spec(SETTINGS / f"{stem}.toml")
        assert split.role(spec.workload) == HELD_OUT, stem
        # SQL family: the shuffle partition count is the setting varied, 1 to 2,000.
        assert {c.shuffle_partitions for c in spec.configs} == {1, 8, 64, 200, 400, 2000}, stem
    wide = load_spec(SETTINGS / "wide_shuffle.toml")
    assert wide.script.name == "wide_shuffle.py" and wide.params["partitions"] == "conf"
    assert all(c.master != "cluster" for c in wide.configs)


def test_the_output_file_study_spec_runs_the_settings_study_s_shape() -> None:
    spec = load_spec(SETTINGS / "output" / "prefix_counts.toml")
    assert spec.script is not None and spec.script.is_file()
    assert {(c.master, c.driver_memory) for c in spec.configs} == {("local[2]", "2g")}
    assert {c.shuffle_partitions for c in spec.configs} == {8, 64, 200, 400, 2000}
