"""Pairs grouped by the what-if they test, and the network what-if of the cluster study."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from perfmodel.experiment import what_if_kind as wk
from perfmodel.experiment.accuracy import _comparable
from perfmodel.experiment.results import PairResult
from perfmodel.report.markdown import render_kinds
from perfmodel.simulate.config import DEFAULT_NET_BW

BASE = {"master": "cluster", "workers": 2, "rate_mbit": 100.0, "executor_memory": "512m"}


def _pair(kind: str, workload: str, predicted: float, measured: float) -> PairResult:
    return PairResult(
        experiment="e",
        workload=workload,
        baseline_run=1,
        baseline_config="a",
        target_config="b",
        target_runs=[2],
        measured_s=measured,
        measured_sd_s=0.0,
        measured_wall_s=measured,
        predicted_s=predicted,
        error=abs(predicted - measured) / measured,
        slot_only_s=measured * 2,
        slot_only_error=1.0,
        bottleneck="cpu",
        baseline_observed_s=10.0,
        baseline_model_error=0.0,
        kind=kind,
    )


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"rate_mbit": 1000.0}, wk.NETWORK),
        ({"executor_memory": "2g"}, wk.MEMORY),
        ({"executor_memory": "0.5g"}, wk.OTHER),  # the same heap: nothing changed
        ({"workers": 3}, wk.WORKERS),
        ({"workers": 3, "executor_memory": "2g"}, wk.COMBINED),
    ],
)
def test_cluster_pairs_are_named_by_the_one_resource_that_differs(
    change: dict[str, object], kind: str
) -> None:
    assert wk.pair_kind(BASE, BASE | change) == kind


def test_local_pairs_name_cores_and_the_driver_heap() -> None:
    a = {"master": "local[1]", "driver_memory": "2g", "executor_memory": None}
    assert wk.pair_kind(a, a | {"master": "local[2]"}) == wk.CORES
    assert wk.pair_kind(a, a | {"driver_memory": "512m"}) == wk.MEMORY
    # In local mode the executor setting runs no tasks: not a memory what-if.
    assert wk.changed_resources(a, a | {"executor_memory": "4g"}) == []


def test_link_rates_pair_up_and_are_read_as_bytes_per_second() -> None:
    assert _comparable(BASE, BASE | {"rate_mbit": 1000.0, "workers": 3})
    assert not _comparable(BASE, BASE | {"shuffle_partitions": 24})
    assert wk.link_bandwidth(BASE) == 12.5e6
    assert wk.link_bandwidth({"master": "local[2]"}) is None
    unlimited = BASE | {"rate_mbit": None}
    assert wk.target_link_bandwidth(BASE, unlimited) == DEFAULT_NET_BW  # not the base's rate
    assert wk.target_link_bandwidth(unlimited, unlimited) is None
    assert wk.target_link_bandwidth(unlimited, BASE) == 12.5e6


def test_summaries_per_kind_in_a_fixed_order_with_the_worst_pair() -> None:
    pairs = [
        _pair(wk.WORKERS, "sort", 11.0, 10.0),
        _pair(wk.NETWORK, "sort", 9.0, 10.0),
        _pair(wk.NETWORK, "join", 13.0, 10.0),
        _pair(wk.COMBINED, "join", 10.0, 10.0),
    ]
    kinds = wk.summarise_kinds(pairs)
    assert [k.kind for k in kinds] == [wk.NETWORK, wk.WORKERS, wk.COMBINED]
    network = kinds[0]
    assert network.pairs == 2 and network.workloads == ["join", "sort"]
    assert network.mean_error == pytest.approx(0.2)
    assert network.worst_error == pytest.approx(0.3) and network.worst_pair.endswith("+30.0%")
    assert math.isnan(network.bare_log_mean_error)  # no variants read
    table = "\n".join(render_kinds(kinds))
    assert "| network bandwidth | 2 | join, sort | **20.0%** | n/a | 100.0% |" in table
    # A local-mode study (cores only) gets no extra table.
    assert render_kinds(wk.summarise_kinds([_pair(wk.CORES, "sort", 1.0, 1.0)])) == []


def _with_intervals(
    pair: PairResult,
    bundle: tuple[float, float] | None,
    bare_log: tuple[float, float] | None = None,
) -> PairResult:
    if bundle is not None:
        pair.predicted_low_s, pair.predicted_high_s = bundle
    if bare_log is not None:
        pair.bare_log_low_s, pair.bare_log_high_s = bare_log
    return pair


def test_interval_coverage_is_reported_per_kind_for_bundles_and_bare_logs() -> None:
    """Each kind counts its own pairs inside their interval: bandwidth 1 of 2 (bundle) and
    2 of 2 (bare log), allocation 2 of 3 (bundle) and 0 of 1 where the bare log has an
    interval (the other two pairs had no bare-log reading), workers without intervals n/a."""
    alloc = wk.DYNAMIC_ALLOCATION
    pairs = [
        _with_intervals(_pair(wk.NETWORK, "sort", 10.0, 10.0), (9.0, 11.0), (9.5, 10.5)),
        _with_intervals(_pair(wk.NETWORK, "join", 10.0, 12.0), (9.0, 11.0), (8.0, 12.0)),
        _with_intervals(_pair(alloc, "sort", 10.0, 9.0), (9.0, 11.0), (9.5, 11.0)),
        _with_intervals(_pair(alloc, "sort", 10.0, 10.5), (9.0, 11.0)),
        _with_intervals(_pair(alloc, "join", 10.0, 20.0), (9.0, 11.0)),
        _pair(wk.WORKERS, "sort", 10.0, 10.0),
    ]
    kinds = {k.kind: k for k in wk.summarise_kinds(pairs)}
    assert kinds[wk.NETWORK].interval_coverage == pytest.approx(0.5)
    assert kinds[wk.NETWORK].bare_log_interval_coverage == pytest.approx(1.0)
    assert kinds[alloc].interval_coverage == pytest.approx(2 / 3)
    assert kinds[alloc].bare_log_interval_coverage == pytest.approx(0.0)
    assert math.isnan(kinds[wk.WORKERS].interval_coverage)
    assert math.isnan(kinds[wk.WORKERS].bare_log_interval_coverage)
    table = "\n".join(render_kinds(list(kinds.values())))
    assert "coverage, bundle | coverage, bare log |" in table
    network_row = next(line for line in table.splitlines() if line.startswith("| network"))
    assert network_row.endswith("| 50.0% | 100.0% |")
    workers_row = next(line for line in table.splitlines() if line.startswith("| worker"))
    assert workers_row.endswith("| n/a | n/a |")


def test_per_kind_coverage_is_in_the_json_report() -> None:
    import json

    from perfmodel.experiment.accuracy import _summarise
    from perfmodel.report.jsonrenderer import accuracy_json

    pairs = [
        _with_intervals(_pair(wk.MEMORY, "sort", 10.0, 10.0), (9.0, 11.0), (1.0, 2.0)),
        _with_intervals(_pair(wk.CORES, "sort", 10.0, 15.0), (9.0, 11.0), (9.0, 16.0)),
    ]
    report = _summarise(pairs, "v", 2, [], {})
    kinds = {k["kind"]: k for k in json.loads(accuracy_json(report))["kinds"]}
    assert kinds[wk.MEMORY]["interval_coverage"] == 1.0
    assert kinds[wk.MEMORY]["bare_log_interval_coverage"] == 0.0
    assert kinds[wk.CORES]["interval_coverage"] == 0.0
    assert kinds[wk.CORES]["bare_log_interval_coverage"] == 1.0


EVENTLOG = Path(__file__).parents[2] / ".." / "shared" / "data" / "eventlogs"


def test_a_slower_link_is_predicted_no_faster_from_a_real_cluster_log() -> None:
    from perfmodel.experiment.accuracy import load_baseline, predict

    log = EVENTLOG / "eventlog_4nodes_8cores_dynamic_alloc.zstd"
    if not log.exists():
        pytest.skip(f"real event logs not found at {EVENTLOG}")
    loaded = load_baseline(log, net_bw=125e6)
    assert loaded.baseline.net_bw == 125e6 and loaded.baseline.sources["net_bw"] == "given"
    cores, memory = loaded.baseline.slots, loaded.baseline.memory_bytes
    same = predict(loaded, cores, memory, 125e6).predicted_s
    slower = predict(loaded, cores, memory, 12.5e6).predicted_s
    assert slower >= same > 0


WORDCOUNT = Path(__file__).parents[1] / "data" / "eventlogs" / "wordcount.zstd"


def test_evaluate_pairs_link_rates_and_labels_every_pair(tmp_path: Path) -> None:
    """Three configurations of one experiment (a base, a faster link, a bigger heap), each
    "run" read from a real event log: every pair is predicted, labelled by what it changes,
    and summarised per kind; the faster link is given to the replay as its bandwidth."""
    from perfmodel.experiment.accuracy import evaluate
    from perfmodel.runs.rows import RunOutcome
    from perfmodel.runs.store import RunStore

    if not WORDCOUNT.exists():
        pytest.skip(f"{WORDCOUNT} not found")

    configs = {
        "base": BASE,
        "fast link": BASE | {"rate_mbit": 1000.0},
        "big heap": BASE | {"executor_memory": "2g"},
    }
    measured = {"base": 10.0, "fast link": 8.0, "big heap": 9.5}
    with RunStore(tmp_path / "runs.sqlite") as store:
        exp = store.add_experiment("e", "wc", "e.toml", "", {})
        for name, settings in configs.items():
            memory = 2 << 30 if settings["executor_memory"] == "2g" else 512 << 20
            cfg = store.add_config(exp, name, "cluster", 2, memory, {"name": name, **settings})
            run = store.start_run(exp, cfg, "wc", 0, False, ["x"], str(WORDCOUNT))
            store.finish_run(run, RunOutcome(status="ok", exit_code=0, app_s=measured[name]))
        report = evaluate(store, store.runs(), save=False)
    kinds = {(p.baseline_config, p.target_config): p.kind for p in report.pairs}
    assert len(kinds) == 6 and not report.skipped
    assert kinds["base", "fast link"] == kinds["fast link", "base"] == wk.NETWORK
    assert kinds["base", "big heap"] == wk.MEMORY
    assert kinds["fast link", "big heap"] == wk.COMBINED
    assert [k.kind for k in report.kinds] == [wk.NETWORK, wk.MEMORY, wk.COMBINED]
    assert [k.pairs for k in report.kinds] == [2, 2, 2]
    by_pair = {(p.baseline_config, p.target_config): p for p in report.pairs}
    # The same log, replayed from a 100 Mbit/s baseline onto 1000 Mbit/s and back: the
    # slower link can only make it slower.
    assert by_pair["fast link", "base"].predicted_s >= by_pair["base", "fast link"].predicted_s
