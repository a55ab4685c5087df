"""`perfmodel recommend` end to end on real runs: recommend from one profiled run, and check
the decision against what the recommendation and its neighbours measured.

The "machines" are realised on this host as ``local[N]`` with a driver heap: a catalog of
two (1 or 2 cores with a 1g heap, priced per core and GiB), the suite's shared
`machine_runs` (the study's word count over 8 MB of text, each configuration run once). The
run on ``local[1]`` is the profiled one. The deadline lies halfway between the
predicted upper bounds of the 1-core and the 2-core machines, so only the 2-core machines can
meet it by the model, and the test reports whether the recommendation met the deadline and
was the cheapest measured point that did. The verdict is printed
(and written to ``$PERFMODEL_RECOMMEND_E2E`` when set), not asserted: on a shared 2-core
host a second core buys less than the model's catalog says (the machines differ in slots
and heap, not in CPU quota), which is exactly what this check is there to show.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import MachineRuns

_SOURCE = "made up for the end-to-end check: 0.04/core + 0.01/GiB"
CATALOG = "\n".join(
    [
        "vm_type,provider,vcpu,memory_gib,network_gbps,disk_mbps,cpu_speed,price_per_hour,"
        "billing_granularity_s,min_billing_s,region,source,as_of",
        *(
            f"{name},local,{vcpu},{gib},10,250,1.0,{price},1,0,this host,{_SOURCE},2026-11-25"
            for name, vcpu, gib, price in (
                ("loc-1c-1g", 1, 2, 0.06),
                ("loc-2c-1g", 2, 2, 0.10),
            )
        ),
    ]
)
MACHINES = {  # vm_type: (local[N], driver heap), as the --local layout rule gives them
    "loc-1c-1g": (1, "1g"),
    "loc-2c-1g": (2, "1g"),
}
MACHINE_OF_CONFIG = {f"local[{n}] driver={heap}": name for name, (n, heap) in MACHINES.items()}
"""The run configurations of `machine_runs`, by the catalog machine each realises."""


@pytest.mark.slow
def test_recommendation_checked_against_measured_runs(
    machine_runs: MachineRuns, tmp_path: Path
) -> None:
    from perfmodel.recommend.api import Recommendation, recommend
    from perfmodel.recommend.check import check_decision
    from perfmodel.recommend.search import RecommendError, Request
    from perfmodel.runs.store import RunStore

    store = machine_runs.store
    catalog = tmp_path / "local.csv"
    catalog.write_text(CATALOG)
    # Every machine of the catalog ran once; the run on the 1-core, 1g machine is also the
    # profiled one. The decision below reads the profiled run's bundle only; the other runs
    # are what it is checked on.
    runs = machine_runs.runs
    assert all(r["status"] == "ok" for r in runs)
    measured = {MACHINE_OF_CONFIG[r["config"]]: float(r["app_s"]) for r in runs}
    (profiled,) = [r for r in runs if MACHINE_OF_CONFIG[r["config"]] == "loc-1c-1g"]
    experiment = "wordcount-machines"

    # The deadline: halfway between the 1-core and the 2-core machines' upper bounds (by
    # the model), so that the recommendation has to buy the second core.
    free = recommend(
        profiled["bundle"],
        catalog,
        Request(local=True, exhaustive=True),
        baseline_machine="loc-1c-1g",
    )
    by_cores: dict[int, float] = {}
    for p in free.result.points:
        n = p.layout.executor_cores
        by_cores[n] = min(by_cores.get(n, float("inf")), p.upper_s)
    assert by_cores[2] < by_cores[1], by_cores  # the model says a second core helps
    deadline = (by_cores[1] + by_cores[2]) / 2

    # The layouts the --local rule gives must be the machines the runs realise.
    answer = recommend(
        profiled["bundle"],
        catalog,
        Request(deadline_s=deadline, local=True, exhaustive=True),
        baseline_machine="loc-1c-1g",
    )
    for p in answer.result.points:
        n, heap = MACHINES[p.machine.vm_type]
        conf = p.spark_conf()
        assert (conf["spark.master"], conf["spark.driver.memory"]) == (f"local[{n}]", heap)
    rec = answer.result.recommended
    assert rec.meets_deadline and rec.upper_s <= deadline

    check = check_decision(answer.result, measured)
    assert {p.vm_type for p in check.points} == set(MACHINES)
    for p in check.points:
        assert p.measured_cost > 0 and p.meets_deadline == (p.measured_s <= deadline)

    # History: the stored runs calibrate the same application's predictions.
    with RunStore(store) as db:
        assert len(db.runs(experiment=experiment)) == len(MACHINES)

    def calibrated_by_history(deadline_s: float | None) -> Recommendation:
        return recommend(
            profiled["bundle"],
            catalog,
            Request(deadline_s=deadline_s, local=True, exhaustive=True),
            baseline_machine="loc-1c-1g",
            history=experiment,
            store=store,
        )

    try:
        calibrated = calibrated_by_history(deadline)
        after = calibrated.result.recommended
    except RecommendError as exc:
        # Calibrated by runs measured on a busy machine, the band (their leave-one-out error)
        # may be so wide that no machine meets the deadline any more: that is an answer
        # (none, which the CLI prints as its error line), not a failure. The calibration is
        # then read from the same search without the deadline.
        assert "no configuration meets the deadline" in str(exc)
        calibrated, after = calibrated_by_history(None), None
    cal = calibrated.calibration
    assert cal is not None and len(cal.runs) == len(MACHINES)

    report = {
        "profiled_s": profiled["app_s"],
        "deadline_s": deadline,
        "recommended": rec.machine.vm_type,
        "predicted": {p.machine.vm_type: p.predicted_s for p in answer.result.points},
        "check": check.as_dict(),
        "calibration": cal.as_dict(),
        "calibrated_recommendation": after.machine.vm_type if after is not None else None,
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(report, indent=1))
    print(check.verdict())
    out = os.environ.get("PERFMODEL_RECOMMEND_E2E")
    if out:
        Path(out).write_text(json.dumps(report, indent=1))
