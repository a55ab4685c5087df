"""The recommend package's parts: catalog parsing, layouts, billing, bounds, history, JSON."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from perfmodel.recommend.api import RequestError, parse_duration, parse_money
from perfmodel.recommend.catalog import CatalogError, parse_catalog, parse_catalog_text
from perfmodel.recommend.history import HistoryError, calibrate
from perfmodel.recommend.layouts import (
    MIB,
    MIN_HEAP_BYTES,
    heap_for_container,
    layouts_for,
    overhead_for,
    spark_conf,
)
from perfmodel.recommend.pareto import Front, pareto_front
from perfmodel.recommend.pricing import billed_seconds, run_cost
from perfmodel.recommend.search import Request, candidate_points
from perfmodel.recommend.uncertainty import prediction_band
from perfmodel.runs.rows import RunOutcome
from perfmodel.runs.store import RunStore
from perfmodel.simulate.bounds import lower_bounds_s, prepare, refined_bound_s
from perfmodel.simulate.config import BaselineOverrides, WhatIf
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from tests.cli_runner import invoke_cli
from tests.recommend_helpers import HEADER, SyntheticAnalysis, catalog, row

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "catalogs" / "example-cloud.csv"
LOGS = REPO.parent / "shared" / "data" / "eventlogs"


# --- catalog -------------------------------------------------------------------------


def test_example_catalog_parses_with_two_providers_and_sources() -> None:
    machines = parse_catalog(EXAMPLE)
    assert len(machines) >= 12
    assert len({m.provider for m in machines}) >= 2
    assert all(m.source and m.as_of.year >= 2023 for m in machines)


GOOD = row("m1", 4, 16, 0.2)


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (GOOD.replace(",4,16,", ",0,16,"), "row 2, column vcpu"),
        (GOOD.replace(",0.2,", ",-0.2,"), "row 2, column price_per_hour"),
        (GOOD.replace("2026-01-01", "2026-13-01"), "row 2, column as_of"),
        (GOOD.replace(",16,", ",lots,"), "row 2, column memory_gib"),
        (GOOD.replace("m1,", "m 1,"), "row 2, column vm_type"),
        (GOOD.replace(",1,0,nowhere", ",0,0,nowhere"), "row 2, column billing_granularity_s"),
        (GOOD + ",extra", "row 2: 14 cells"),
    ],
)
def test_bad_rows_are_refused_naming_row_and_column(bad: str, where: str) -> None:
    with pytest.raises(CatalogError, match=where):
        parse_catalog_text(f"{HEADER}\n{bad}", "cat.csv")


def test_header_duplicates_and_empty_are_refused() -> None:
    with pytest.raises(CatalogError, match="missing column.*price_per_hour"):
        parse_catalog_text(HEADER.replace(",price_per_hour", "") + "\n", "cat.csv")
    with pytest.raises(CatalogError, match="unknown column.*colour"):
        parse_catalog_text(HEADER + ",colour\n", "cat.csv")
    with pytest.raises(CatalogError, match="row 3, column vm_type.*row 2"):
        parse_catalog_text(f"{HEADER}\n{GOOD}\n{GOOD}", "cat.csv")
    with pytest.raises(CatalogError, match="no machine rows"):
        parse_catalog_text(HEADER, "cat.csv")
    with pytest.raises(CatalogError, match="no such catalog"):
        parse_catalog(REPO / "no-such.csv")


# --- layouts, billing, band, front ---------------------------------------------------


def test_layouts_follow_sparks_overhead_rule() -> None:
    for m in parse_catalog(EXAMPLE):
        for lay in layouts_for(m):
            assert lay.overhead_bytes == max(384 * MIB, -(-lay.heap_bytes // 10 // MIB) * MIB)
            used = lay.executors_per_node * (lay.heap_bytes + lay.overhead_bytes)
            assert used <= m.memory_bytes - max(1 << 30, int(0.1 * m.memory_bytes))
            assert lay.cores_per_node <= (m.vcpu - 1 if m.vcpu >= 4 else m.vcpu)
            assert lay.heap_bytes >= MIN_HEAP_BYTES
    assert heap_for_container(4 << 30) + overhead_for(heap_for_container(4 << 30)) <= 4 << 30
    assert heap_for_container(600 * MIB) == 216 * MIB  # 600 − 384
    assert layouts_for(catalog(row("tiny", 1, 1, 0.01))[0]) == []


def test_spark_conf_is_the_layout_and_the_predicted_settings() -> None:
    lay = layouts_for(catalog(row("m", 8, 32, 0.4))[0])[0]  # 1 × 7 cores
    conf = spark_conf(lay, 2)
    assert conf["spark.executor.instances"] == "2"
    # No setting beyond the executors unless the search predicted it.
    assert "spark.sql.shuffle.partitions" not in conf
    tuned = spark_conf(lay, 2, {"spark.sql.shuffle.partitions": "42"})
    assert tuned["spark.sql.shuffle.partitions"] == "42"
    assert tuned["spark.executor.cores"] == conf["spark.executor.cores"]


def test_billing_rounds_up_to_granularity_and_minimum() -> None:
    hourly, minute = catalog(
        row("h", 2, 8, 1.0, granularity=3600, minimum=3600),
        row("s", 2, 8, 1.0, granularity=1, minimum=60),
    )
    assert billed_seconds(1, hourly) == 3600
    assert billed_seconds(3601, hourly) == 7200
    assert billed_seconds(10, minute) == 60
    assert billed_seconds(61.2, minute) == 62
    assert run_cost(1800, hourly, 3) == pytest.approx(3.0)


def test_band_takes_the_largest_known_error() -> None:
    assert prediction_band(0.05).relative == 0.15
    assert prediction_band(-0.3).relative == pytest.approx(0.3)
    assert prediction_band(0.05, loo_error=0.4).relative == pytest.approx(0.4)
    assert prediction_band(0.0).upper(100.0) == pytest.approx(115.0)


def test_incremental_front_matches_the_batch_front() -> None:
    rng = random.Random(7)
    pairs = [(rng.uniform(1, 100), rng.uniform(1, 100)) for _ in range(300)]
    front = Front()
    for t, c in pairs:
        front.add(t, c)
    batch = pareto_front(pairs, lambda p: p[0], lambda p: p[1])
    assert list(zip(front.times, front.costs, strict=True)) == batch
    for t, c in pairs:
        assert front.dominates(t, c)


def test_durations_and_money() -> None:
    assert parse_duration("20m") == 1200
    assert parse_duration("1h30m") == 5400
    assert parse_duration("90s") == 90
    assert parse_duration("2min") == 120
    assert parse_money("5usd") == 5 and parse_money("$0.5") == 0.5
    for bad in ("soon", "", "-5m", "0"):
        with pytest.raises(RequestError):
            parse_duration(bad)
    with pytest.raises(RequestError):
        parse_money("five")
    # A readable value out of range says so, rather than that it cannot be read.
    with pytest.raises(RequestError, match="must be more than zero"):
        parse_duration("0m")
    with pytest.raises(RequestError, match="must be more than zero"):
        parse_money("0usd")


def test_a_driver_node_in_local_mode_is_refused() -> None:
    """In local mode the one machine is the driver: a driver node would be paid twice."""
    from perfmodel.recommend.api import recommend

    with pytest.raises(RequestError, match="--driver-node with --local"):
        recommend("unused.log", "unused.csv", Request(local=True, driver_node=True))


# --- bounds ---------------------------------------------------------------------------


def _mixed_profile() -> SyntheticAnalysis:
    rng = random.Random(3)
    cpu = [TaskSpec(rng.uniform(500, 3000), cpu_ms=rng.uniform(300, 500)) for _ in range(40)]
    io = [
        TaskSpec(2000, cpu_ms=200, shuffle_write_ms=rng.uniform(100, 1500), gc_ms=100)
        for _ in range(30)
    ]
    spill = [
        TaskSpec(1500, cpu_ms=300, peak_memory=10**8, memory_spill=10**9, disk_spill=4 * 10**8)
        for _ in range(12)
    ]
    jobs = [[StageSpec(0, cpu), StageSpec(1, io, [0])], [StageSpec(2, spill)]]
    profile = build_synthetic(jobs, 3, driver_gap_ms=400)
    return SyntheticAnalysis(profile, BaselineOverrides(host_cores=4))


def test_lower_bound_never_exceeds_the_replay() -> None:
    analysis = _mixed_profile()
    machines = catalog(
        row("a", 2, 4, 0.1, cpu_speed=0.7, disk_mbps=50),
        row("b", 8, 64, 0.5, cpu_speed=1.6, disk_mbps=2000, network_gbps=50),
        row("c", 16, 32, 0.7, cpu_speed=1.0),
    )
    points = candidate_points(analysis.baseline, machines, Request(max_nodes=6))
    bounds = prepare(analysis.workload, analysis.baseline)
    lbs = lower_bounds_s(bounds, [p.config for p in points])
    for p, lb in zip(points, lbs, strict=True):
        replayed = analysis.predict(p.config).predicted_s
        assert 0 < lb <= replayed
        assert lb * 0.999 <= refined_bound_s(bounds, p.config) <= replayed


@pytest.mark.skipif(not LOGS.is_dir(), reason="shared event logs absent (../shared/data)")
def test_lower_bound_on_a_real_cluster_log() -> None:
    from perfmodel.analysis import load

    analysis = load(LOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd")
    machines = parse_catalog(EXAMPLE)
    points = candidate_points(analysis.baseline, machines, Request(max_nodes=3))
    points += candidate_points(analysis.baseline, machines[:3], Request(local=True))
    bounds = prepare(analysis.workload, analysis.baseline)
    lbs = lower_bounds_s(bounds, [p.config for p in points])
    for p, lb in zip(points[::5], lbs[::5], strict=True):
        replayed = analysis.predict(p.config).predicted_s
        assert lb <= replayed
        assert refined_bound_s(bounds, p.config) <= replayed


# --- history --------------------------------------------------------------------------


def _store_with_runs(path: Path, analysis: SyntheticAnalysis, slowdown: float) -> None:
    """Runs 'measured' at `slowdown` × what the model predicts, on three configurations."""
    with RunStore(path) as store:
        exp = store.add_experiment("app", "app", "spec.toml", "", {"size_mb": "10"})
        for cores, mem in ((1, 1 << 30), (2, 1 << 30), (2, 2 << 30)):
            predicted = analysis.predict(WhatIf(cores=cores, memory_bytes=mem)).predicted_s
            cfg = store.add_config(exp, f"local[{cores}] {mem}", f"local[{cores}]", cores, mem, {})
            run = store.start_run(exp, cfg, "app", 0, False, ["x"], None)
            store.finish_run(run, RunOutcome(status="ok", app_s=predicted * slowdown))
            # A noisy repetition on the same configuration.
            run = store.start_run(exp, cfg, "app", 1, False, ["x"], None)
            store.finish_run(run, RunOutcome(status="ok", app_s=predicted * slowdown * 1.1))


def test_history_fits_the_applications_factor(tmp_path: Path) -> None:
    analysis = _mixed_profile()
    _store_with_runs(tmp_path / "runs.sqlite", analysis, slowdown=1.5)
    cal = calibrate(analysis, tmp_path / "runs.sqlite", "app")  # type: ignore[arg-type]
    assert len(cal.runs) == 6
    assert cal.factor == pytest.approx(1.5 * 1.1**0.5, rel=1e-6)
    assert cal.mean_error > 0.3  # |1 − 1/1.5| and |1 − 1/1.65|
    assert cal.mean_loo_error < 0.1
    with pytest.raises(HistoryError, match="no finished run"):
        calibrate(analysis, tmp_path / "runs.sqlite", "other")  # type: ignore[arg-type]


# --- the command and its JSON ---------------------------------------------------------


@pytest.mark.parametrize("broken", ["log-missing", "log-garbage", "catalog-garbage"])
def test_cli_bad_input_is_one_error_line(broken: str, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(bytes(range(256)) * 16)
    log = LOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd"
    target = {"log-missing": tmp_path / "nope", "log-garbage": garbage}.get(broken, log)
    catalog = garbage if broken == "catalog-garbage" else EXAMPLE
    result = invoke_cli(["recommend", str(target), "--catalog", str(catalog)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1].startswith("error: ")
