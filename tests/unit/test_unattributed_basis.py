"""The diagnosis model places the finding on what unattributed task time is made of (its
basis) from where the unattributed-time finding is, not by searching findings' text."""

from __future__ import annotations

from pathlib import Path

from perfmodel.analysis import read
from perfmodel.analysis.diagnosis import diagnose
from tests.conftest import shared_eventlogs

WORDCOUNT = Path(__file__).resolve().parents[1] / "data" / "eventlogs" / "wordcount.zstd"


def _findings(log: Path, basis: str) -> tuple[list[str], list[str]]:
    loaded = read(log)
    return diagnose(loaded).findings, diagnose(loaded, unattributed_basis=basis).findings


def test_the_basis_follows_the_unattributed_finding() -> None:
    plain, with_basis = _findings(WORDCOUNT, "made of sand")
    (at,) = [i for i, f in enumerate(plain) if "not broken down by Spark's metrics" in f]
    assert with_basis == plain[: at + 1] + ["Of that: made of sand."] + plain[at + 1 :]


def test_without_an_unattributed_finding_the_basis_ends_the_findings() -> None:
    log = shared_eventlogs() / "spark2-eventlog.zstd"  # 25% unattributed: no finding of its own
    plain, with_basis = _findings(log, "made of sand")
    assert not any("not broken down" in f for f in plain)
    assert with_basis == plain + ["Unattributed task time: made of sand."]
