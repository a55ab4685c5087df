"""Optional parts and their extras: a feature whose libraries are missing stops before it
starts, with one `error:` line naming the `pip install` that adds them.

A missing library is made by hiding it (``sys.modules[name] = None``): the import system then
reports it absent to `importlib.util.find_spec` and fails its import, as in an environment
where it was never installed. The wheel check (scripts/check_wheel.sh) runs the same commands
in a real install without extras; the commands run without their extras, each in an interpreter
of its own, are in tests/e2e/test_extras_cli.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfmodel.errors import PerfmodelError
from perfmodel.extras import EXTRAS, Extra, MissingExtraError, missing_from, require_extra


def test_a_hidden_module_makes_the_extra_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtraError) as caught:
        require_extra("models", "perfmodel classify")
    message = str(caught.value)
    assert isinstance(caught.value, PerfmodelError)
    assert message.startswith("perfmodel classify needs perfmodel's [models] extra")
    assert "missing: torch" in message
    assert message.endswith("pip install 'perfmodel[models]'")
    assert "\n" not in message
    assert caught.value.extra == "models" and caught.value.missing == ["torch"]


def test_modules_and_executables_are_both_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        EXTRAS,
        "probe",
        Extra(modules=("json", "perfmodel_no_such_module"), executables=("perfmodel-no-such-exe",)),
    )
    assert missing_from("probe") == ["perfmodel_no_such_module", "perfmodel-no-such-exe"]


def test_an_executable_beside_this_python_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A venv's bin/ need not be on PATH: `perfmodel` run by its full path finds its py-spy.
    monkeypatch.setenv("PATH", "")
    monkeypatch.setitem(
        EXTRAS, "probe", Extra(modules=(), executables=(Path(sys.executable).name,))
    )
    assert missing_from("probe") == []


def test_every_extra_is_installed_in_the_development_environment() -> None:
    # The lock installs every extra; a name in the table that no extra installs would make
    # the feature refuse to run everywhere.
    for extra in EXTRAS:
        assert missing_from(extra) == [], extra


def test_pyarrow_is_named_by_every_extra_whose_feature_reads_or_writes_parquet() -> None:
    # Bundles and object stores are pyarrow's; recording writes a bundle, the models read
    # GloVe's Parquet index, pyspark's toArrow brings fleet --engine spark's rows back.
    for extra in ("bundles", "remote", "record", "models", "spark", "train"):
        assert "pyarrow" in EXTRAS[extra].modules, extra


def test_the_table_matches_the_extras_pyproject_declares() -> None:
    import tomllib

    declared = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    optional = declared["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(optional)
    base = " ".join(declared["project"]["dependencies"])
    assert "pyarrow" not in base and "networkx" not in base
    for extra in ("bundles", "remote", "spark"):
        assert any(d.startswith("pyarrow") for d in optional[extra]), extra
    for extra, includes in (("record", "bundles"), ("models", "bundles")):
        assert f"perfmodel[{includes}]" in optional[extra], extra


@pytest.mark.parametrize("extra", ["bundles", "remote"])
def test_hidden_pyarrow_names_the_extra(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingExtraError) as caught:
        require_extra(extra, "a feature")
    assert caught.value.missing == ["pyarrow"]
    assert str(caught.value).endswith(f"pip install 'perfmodel[{extra}]'")
