"""Shared by the fleet tests: a generated fleet made of the real shared logs."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from perfmodel.fleet.run import FleetOptions, FleetResult, run_fleet
from perfmodel.fleet.synth import SynthFleet, generate_fleet
from perfmodel.report import render_to_file, renderer
from perfmodel.simulate.whatif import parse_changes

SOURCES = [
    "application_1489705648216_1600",  # first: the slowed-down series is made of it
    "app-20161115172038-0000",
    "application_1506645932520_24630151",
    "application_1538416563558_0014",
    "application_1628109047826_1317105",
    "eventlog_4nodes_8cores_dynamic_alloc.zstd",
    "eventlog_v2_spark-cc4d115f011443d787f03a71a476a745",
    "example_spark_event_log.txt",
    "local-1422981780767",
    "local-1776286786993.zstd",
    "spark2-eventlog.zstd",
    "spark_event_log_example",
]
"""Real logs the generated fleet copies (the two slowest to analyse are left out, to keep
the suite quick; they are in the fleet through the shared directory itself)."""
TABLES = ["apps", "stages", "findings", "predictions", "errors", "regressions"]
WHAT_IFS = ["cores=2x", "mem=0.5x"]


def make_fleet(shared: Path, directory: Path, copies: int = 200) -> SynthFleet:
    return generate_fleet(directory, [shared / n for n in SOURCES], copies=copies, seed=7)


def run(inputs: list[str], out: Path, **kwargs: object) -> FleetResult:
    """A fleet run as `perfmodel fleet` makes it: the tables, then summary.html beside them."""
    opts = FleetOptions(inputs=inputs, out=out, scenarios=parse_changes(WHAT_IFS))
    for key, value in kwargs.items():
        setattr(opts, key, value)
    result = run_fleet(opts)
    html = renderer("html")
    render_to_file(out / "summary.html", lambda f: html.fleet_summary(result.summary, f))
    return result


def read_tables(out: Path) -> dict[str, object]:
    return {name: pq.read_table(out / f"{name}.parquet") for name in TABLES}
