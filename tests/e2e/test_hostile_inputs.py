"""Issue 42, class 3: inputs that are devices, FIFOs or far larger than any real recording
of their kind are refused up front, before anything is copied or read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from perfmodel.experiment.spec import MAX_SPEC_BYTES, load_spec
from perfmodel.experiment.spec_grid import SpecError
from perfmodel.profile.bundle import BundleError
from perfmodel.profile.record import bundle_write
from tests.fuzz_support import ROLLING_LOG, Worker, check_calm, worker_fixture
from tests.unit.hostile_helpers import WORDCOUNT

worker = pytest.fixture(scope="module")(worker_fixture)

CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "example-cloud.csv"


@pytest.fixture(scope="module")
def fifo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fifo") / "recording.json"
    os.mkfifo(path)  # nobody ever writes to it: reading it would wait forever
    return path


@pytest.mark.parametrize("option", ["--pyspy", "--jfr"])
@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo"])
def test_profile_refuses_special_files_as_recordings(
    worker: Worker, tmp_path: Path, fifo: Path, option: str, special: str
) -> None:
    given = fifo if special == "fifo" else Path(special)
    out = tmp_path / "bundle"
    argv = ("profile", WORDCOUNT, option, given, "-o", out)
    answer = worker.cli(*argv)
    check_calm(answer, argv)
    assert answer["exit_code"] == 2
    assert "not a recording" in answer["output"]
    assert not out.exists()


def test_a_recording_far_larger_than_any_real_one_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:  # sparse: no disk is used
        f.truncate(bundle_write.MAX_RECORDING_BYTES["py-spy"] + 1)
    with pytest.raises(BundleError, match="far larger than any real recording"):
        bundle_write.check_input(huge, "py-spy")
    bundle_write.check_input(WORDCOUNT, "event log")  # a real one passes


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_recommend_refuses_a_catalog_that_is_no_file(
    worker: Worker, fifo: Path, special: str
) -> None:
    given = fifo if special == "fifo" else Path(special)
    argv = ("recommend", WORDCOUNT, "--catalog", given, "--deadline", "1h")
    answer = worker.cli(*argv)
    check_calm(answer, argv)
    assert answer["exit_code"] == 2
    assert "not a regular file" in answer["output"]


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_diagnose_refuses_special_files(worker: Worker, fifo: Path, special: str) -> None:
    given = fifo if special == "fifo" else Path(special)
    answer = worker.cli("diagnose", given)
    check_calm(answer, ("diagnose", given))
    assert answer["exit_code"] == 2


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "fifo", "folder"])
def test_experiment_refuses_a_spec_that_is_no_file(
    worker: Worker, tmp_path: Path, fifo: Path, special: str
) -> None:
    given = {"fifo": fifo, "folder": tmp_path}.get(special, Path(special))
    with pytest.raises(SpecError, match=r"is (a device|a FIFO|a folder)"):
        load_spec(given)
    argv = ("experiment", "run", given)
    answer = worker.cli(*argv)
    check_calm(answer, argv)
    assert answer["exit_code"] == 2
    assert "not a spec file" in answer["output"]


def test_experiment_refuses_a_spec_larger_than_any_real_one(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(MAX_SPEC_BYTES + 1)  # sparse: no disk used
    with pytest.raises(SpecError, match="larger than"):
        load_spec(big)


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (f"{sub}events_{n}_wordcount-rolling{ext}", kind)
        for sub, n, ext, kind in [
            ("", 4, "", "fifo"),
            ("", 2_000_000, ".zstd", "fifo"),
            ("", 5, ".zstd", "device"),
            ("deeper/", 1, "", "fifo"),
            ("deeper/", 9, ".zstd", "device"),
        ]
    ],
)
def test_profile_and_diagnose_of_a_folder_holding_special_files(
    worker: Worker, tmp_path: Path, name: str, kind: str
) -> None:
    """A FIFO or device inside a log folder, named like a rolling part or one level down:
    reading skips it and says so, `profile` refuses to copy it; neither waits on it."""
    log = tmp_path / "eventlog_v2_wordcount-rolling"
    shutil.copytree(ROLLING_LOG, log)
    (log / name).parent.mkdir(exist_ok=True)
    _special(log / name, kind)
    out = tmp_path / "bundle"
    answer = worker.cli("profile", log, "-o", out)
    check_calm(answer, ("profile", log))
    assert answer["exit_code"] == 2
    assert "not a recording" in answer["output"]
    assert not out.exists()
    answer = worker.cli("diagnose", "--json", log)
    check_calm(answer, ("diagnose", log))
    assert answer["exit_code"] == 0
    if "/" not in name:
        text = " ".join(p["message"] for p in answer["json"]["problems"])
        assert "not a log file" in text
