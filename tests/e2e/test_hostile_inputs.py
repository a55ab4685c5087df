"""Issue 42, class 3: inputs that are devices, FIFOs or far larger than any real recording
of their kind are refused up front, before anything is copied or read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfmodel.profile.bundle import BundleError
from perfmodel.profile.record import bundle_write
from tests.fuzz_support import Worker, check_calm, worker_fixture
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
