"""`perfmodel recommend` on a real cluster log (eventlog_4nodes_8cores_dynamic_alloc.zstd from
../shared) against the example catalog: the pruned search gives the exhaustive search's
answers figure for figure, and the command's JSON and text answers. Each loads and replays a
real application many times, so they run with the end-to-end tests; the same comparison on
hand-built and drawn profiles is in tests/unit/test_recommend_exact.py."""

from __future__ import annotations

import json

import pytest

from perfmodel.analysis import load
from perfmodel.recommend.catalog import parse_catalog
from perfmodel.recommend.search import Request, search
from tests.cli_runner import invoke_cli
from tests.conftest import REPO, SHARED_EVENTLOGS
from tests.recommend_helpers import assert_same_answers, requests_for

EXAMPLE = REPO / "catalogs" / "example-cloud.csv"
LOG = SHARED_EVENTLOGS / "eventlog_4nodes_8cores_dynamic_alloc.zstd"

pytestmark = pytest.mark.skipif(
    not LOG.is_file(), reason=f"shared event log not found at {LOG} (../shared is absent)"
)


def test_pruned_search_equals_exhaustive_on_a_real_cluster_log() -> None:
    analysis = load(LOG)
    machines = parse_catalog(EXAMPLE)
    full = search(analysis, machines, Request(max_nodes=5, exhaustive=True))
    for request in requests_for(full, 5)[:4]:
        assert_same_answers(analysis, machines, request)


def test_cli_json_schema() -> None:
    """The JSON answer's fields, the text answer, a deadline nobody meets and an unknown
    baseline machine, as a user runs the command."""
    args = ["recommend", str(LOG), "--catalog", str(EXAMPLE), "--max-nodes", "3"]
    result = invoke_cli([*args, "--deadline", "10m", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rec = data["recommended"]
    for key in (
        "vm_type",
        "nodes",
        "executors",
        "executor_cores",
        "executor_memory",
        "predicted_s",
        "cost",
        "meets_deadline",
        "spark_conf",
    ):
        assert key in rec
    assert rec["meets_deadline"] is True and rec["upper_s"] <= 600
    # The executors, and the Spark settings the recommended point was predicted with.
    assert set(rec["spark_conf"]) == {
        "spark.executor.instances",
        "spark.executor.cores",
        "spark.executor.memory",
        "spark.executor.memoryOverhead",
        *rec["spark_settings"],
    }
    assert isinstance(data["pareto"], list) and data["pareto"]
    assert all("predicted_s" in p and "cost" in p for p in data["points"])
    assert data["interval"]["bound_used_for_deadline"] == "upper"
    evaluated = [p for p in data["points"] if p["evaluated"]]
    assert min(p["cost"] for p in evaluated if p["meets_deadline"]) == rec["cost"]
    text = invoke_cli([*args, "--deadline", "10m"])
    assert text.exit_code == 0 and "Recommended:" in text.stdout
    impossible = invoke_cli([*args, "--deadline", "1s"])
    assert impossible.exit_code == 2
    assert "error: no configuration meets the deadline" in impossible.output
    bad = invoke_cli([*args, "--baseline-machine", "nope"])
    assert bad.exit_code == 2 and "not in the catalog" in bad.output
