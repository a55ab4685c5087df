"""Worker-count pairs grouped by scale factor and direction (the scale-out study's report)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from perfmodel.experiment import scale_factor as sf
from perfmodel.experiment import what_if_kind as wk
from perfmodel.experiment.accuracy import _comparable
from perfmodel.experiment.results import AccuracyReport, PairResult
from perfmodel.experiment.spec import load_spec
from perfmodel.experiment.split import DEFAULT_SPLIT, HELD_OUT, load_split
from perfmodel.report.jsonrenderer import accuracy_json
from perfmodel.report.markdown import render_markdown, render_scales
from tests.conftest import REPO


def _pair(
    base: int,
    target: int,
    measured: float,
    predicted: float,
    *,
    bare_log: float = math.nan,
    slot_only: float | None = None,
    workload: str = "sort",
    kind: str = wk.WORKERS,
) -> PairResult:
    slot = measured if slot_only is None else slot_only
    return PairResult(
        experiment="scaleout-sort",
        workload=workload,
        baseline_run=base,
        baseline_config=f"{base} executors",
        target_config=f"{target} executors",
        target_runs=[target],
        measured_s=measured,
        measured_sd_s=0.0,
        measured_wall_s=measured,
        predicted_s=predicted,
        error=abs(predicted - measured) / measured,
        slot_only_s=slot,
        slot_only_error=abs(slot - measured) / measured,
        bottleneck="cpu",
        baseline_observed_s=10.0,
        baseline_model_error=0.0,
        bare_log_s=bare_log,
        bare_log_error=abs(bare_log - measured) / measured,
        kind=kind,
        baseline_slots=base,
        target_slots=target,
    )


# Measured: 100 s on 2 executors, 60 s on 4, 40 s on 8 (two workloads, the same numbers).
# Slot-only: the baseline's time × its executors ÷ the target's. Errors: bundle / bare log.
STUDY = [
    _pair(2, 8, 40.0, 44.0, bare_log=30.0, slot_only=25.0, workload=w)  # +10% / −25%
    for w in ("sort", "wide-shuffle")
] + [
    _pair(8, 2, 100.0, 80.0, bare_log=150.0, slot_only=160.0),  # −20% / +50%
    _pair(4, 8, 40.0, 42.0, bare_log=36.0, slot_only=30.0),  # +5% / −10%
    _pair(2, 4, 60.0, 54.0, bare_log=51.0, slot_only=50.0),  # −10% / −15%
    _pair(8, 4, 60.0, 63.0, bare_log=66.0, slot_only=80.0),  # +5% / +10%
    _pair(4, 2, 100.0, 110.0, bare_log=130.0, slot_only=120.0),  # +10% / +30%
]


def test_direction_and_factor_of_a_pair() -> None:
    assert sf.scale_of(_pair(2, 8, 40.0, 40.0)) == (sf.OUT, 4.0)
    assert sf.scale_of(_pair(8, 2, 40.0, 40.0)) == (sf.IN, 4.0)
    assert sf.scale_of(_pair(4, 8, 40.0, 40.0)) == (sf.OUT, 2.0)
    assert sf.scale_of(_pair(3, 2, 40.0, 40.0)) == (sf.IN, 1.5)
    # Not a pure executor-count change, not known, or no change at all: not grouped.
    assert sf.scale_of(_pair(2, 8, 40.0, 40.0, kind=wk.COMBINED)) is None
    assert sf.scale_of(_pair(1, 2, 40.0, 40.0, kind=wk.CORES)) is None
    unknown = _pair(2, 8, 40.0, 40.0)
    unknown.target_slots = None
    assert sf.scale_of(unknown) is None
    assert sf.scale_of(_pair(4, 4, 40.0, 40.0)) is None


def test_pairs_grouped_by_factor_and_direction_scale_out_first() -> None:
    rows = sf.summarise_scales(STUDY)
    assert [(r.direction, r.factor, r.steps) for r in rows] == [
        (sf.OUT, 4.0, ["2 → 8"]),
        (sf.OUT, 2.0, ["2 → 4", "4 → 8"]),
        (sf.IN, 4.0, ["8 → 2"]),
        (sf.IN, 2.0, ["8 → 4", "4 → 2"]),
    ]
    out4, out2, in4, in2 = rows
    assert out4.pairs == 2 and out4.workloads == ["sort", "wide-shuffle"]
    assert out4.mean_error == pytest.approx(0.10)
    assert out4.signed_mean_error == pytest.approx(0.10)
    assert out4.bare_log_mean_error == pytest.approx(0.25)
    assert out4.bare_log_signed_mean_error == pytest.approx(-0.25)
    assert out4.slot_only_signed_mean_error == pytest.approx(-0.375)
    # 2× out: 2 → 4 (−10%) and 4 → 8 (+5%): the errors average, the biases cancel in part.
    assert out2.pairs == 2
    assert out2.mean_error == pytest.approx(0.075)
    assert out2.signed_mean_error == pytest.approx(-0.025)
    assert out2.bare_log_mean_error == pytest.approx(0.125)
    assert out2.slot_only_mean_error == pytest.approx((10 / 60 + 10 / 40) / 2)
    assert out2.slot_only_signed_mean_error == pytest.approx(-(10 / 60 + 10 / 40) / 2)
    assert in4.signed_mean_error == pytest.approx(-0.20)
    assert in4.bare_log_signed_mean_error == pytest.approx(0.50)
    assert in4.slot_only_mean_error == pytest.approx(0.60)
    assert in2.mean_error == pytest.approx(0.075)
    assert in2.signed_mean_error == pytest.approx(0.075)
    assert in2.bare_log_mean_error == pytest.approx(0.20)
    assert in2.worst_error == pytest.approx(0.10)
    assert in2.worst_pair == "sort: 4 executors (run 4) → 2 executors, +10.0%"


def test_steps_are_each_their_own_row() -> None:
    rows = sf.summarise_steps(STUDY)
    assert [r.steps for r in rows] == [
        ["2 → 8"],
        ["2 → 4"],
        ["4 → 8"],
        ["8 → 2"],
        ["4 → 2"],
        ["8 → 4"],
    ]
    assert [r.pairs for r in rows] == [2, 1, 1, 1, 1, 1]
    assert rows[2].mean_error == pytest.approx(0.05)
    assert rows[1].bare_log_signed_mean_error == pytest.approx(-0.15)


def test_missing_readings_stay_out_of_the_means() -> None:
    # Without --variants there is no bare-log reading: n/a, not a zero that would flatter.
    rows = sf.summarise_scales([_pair(2, 8, 40.0, 44.0), _pair(2, 8, 40.0, 36.0, bare_log=30.0)])
    assert rows[0].bare_log_mean_error == pytest.approx(0.25)
    only_bundle = sf.summarise_scales([_pair(2, 8, 40.0, 44.0)])
    assert math.isnan(only_bundle[0].bare_log_mean_error)
    assert "| **10.0%** | n/a | 0.0% | +10.0% | n/a | +0.0% |" in "\n".join(
        render_scales(only_bundle, only_bundle)
    )


def test_other_kinds_make_no_scale_rows() -> None:
    local = [_pair(1, 2, 40.0, 44.0, kind=wk.CORES), _pair(2, 8, 40.0, 44.0, kind=wk.COMBINED)]
    assert sf.summarise_scales(local) == []
    assert sf.summarise_steps(local) == []
    assert render_scales([], []) == []


def _report(pairs: list[PairResult]) -> AccuracyReport:
    return AccuracyReport(
        pairs=pairs,
        workloads=[],
        mean_error=math.nan,
        worst_error=math.nan,
        slot_only_mean_error=math.nan,
        slot_only_worst_error=math.nan,
        model_version="test",
        created="2026-11-28 00:00:00 UTC",
        host="h",
        machine="m",
        cores=2,
        load_avg=[],
        runs=len(pairs),
        scales=sf.summarise_scales(pairs),
        scale_steps=sf.summarise_steps(pairs),
    )


def test_markdown_and_json_carry_the_scale_tables() -> None:
    report = _report(STUDY)
    md = render_markdown(report)
    assert "### Worker count by scale factor and direction" in md
    row = next(line for line in md.splitlines() if line.startswith("| 4× in (8 → 2) |"))
    assert row.split(" | ")[1:9] == [
        "1",
        "sort",
        "**20.0%**",
        "50.0%",
        "60.0%",
        "-20.0%",
        "+50.0%",
        "+60.0%",
    ]
    assert "| 2× out (2 → 4, 4 → 8) | 2 |" in md
    assert "| 8 → 4 | 1 |" in md
    payload = json.loads(accuracy_json(report))
    assert [(s["direction"], s["factor"], s["steps"]) for s in payload["scales"]][0] == (
        "out",
        4.0,
        ["2 → 8"],
    )
    assert len(payload["scale_steps"]) == 6
    assert payload["pairs"][0]["baseline_slots"] == 2
    assert payload["pairs"][0]["target_slots"] == 8


SCALEOUT_SPECS = sorted((REPO / "experiments" / "cluster" / "scaleout").glob("*.toml"))
HELD_OUT_SCALEOUT_SPECS = sorted(
    p
    for study in ("scaleout", "scaleout-held-out-2", "scaleout-held-out-3")
    for p in (REPO / "experiments" / "cluster" / study).glob("*.toml")
)
"""Every held-out scale-out study's specs: each study's workloads are new to the what-if."""


@pytest.mark.parametrize(
    "path",
    HELD_OUT_SCALEOUT_SPECS,
    ids=[f"{p.parent.name}/{p.stem}" for p in HELD_OUT_SCALEOUT_SPECS],
)
def test_scaleout_specs_differ_in_executors_only(path: Path) -> None:
    spec = load_spec(path)
    assert [(c.master, c.workers, c.cores) for c in spec.configs] == [
        ("cluster", n, n) for n in (2, 4, 8)
    ]
    # One plan, one heap, unlimited links: every pair is a worker-count what-if, predicted.
    assert len({(c.shuffle_partitions, c.conf, c.executor_memory) for c in spec.configs}) == 1
    assert all(c.rate_mbit is None for c in spec.configs)
    settings = [c.as_dict() for c in spec.configs]
    for a in settings:
        for b in settings:
            if a is not b:
                assert _comparable(a, b) and wk.pair_kind(a, b) == wk.WORKERS
    # Held out, and recorded as `perfmodel cluster record` records.
    assert load_split(DEFAULT_SPLIT).role(spec.workload) == HELD_OUT, spec.workload
    assert spec.record.jvm_sampler == "plugin" and spec.record.interval_ms == 50


def test_the_scaleout_study_has_a_wide_shuffle_and_a_python_job() -> None:
    workloads = {load_spec(p).workload for p in SCALEOUT_SPECS}
    assert {"wide-shuffle", "pandas-groups"} <= workloads and len(workloads) == len(SCALEOUT_SPECS)


def test_no_workload_is_in_two_held_out_scaleout_studies() -> None:
    """A study's figure is held out only for workloads whose scale-out what-if no earlier
    study had read."""
    workloads = [load_spec(p).workload for p in HELD_OUT_SCALEOUT_SPECS]
    assert len(set(workloads)) == len(workloads) == 9
