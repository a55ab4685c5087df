"""How much a join that changes strategy shuffles, on a plan Spark wrote
(tests/data/settings/plans.zstd: a broadcast join, a sort-merge join, file scans and
shuffles over generated rows; see its MANIFEST.json)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.spark.join_plan import _shuffled_bytes, plan_join_switches, shuffle_encoding
from perfmodel.spark.load import build_profile
from perfmodel.spark.partitioning import Partitioning, derive_partitioning
from perfmodel.spark.settings import parse_settings

LOG = Path(__file__).resolve().parents[1] / "data" / "settings" / "plans.zstd"


@pytest.fixture(scope="module")
def plans() -> tuple[ApplicationProfile, Partitioning]:
    profile = build_profile(LOG).profile
    return profile, derive_partitioning(profile)


def _sums(profile: ApplicationProfile, key: StageKey, *cols: str) -> list[float]:
    t = profile.stages[key].table
    return [float(t.col(c)[t.ended].sum()) for c in cols]


def test_a_shuffle_read_is_shuffled_as_it_was_and_files_by_their_own_ratio(plans) -> None:
    profile, _ = plans
    encoding = shuffle_encoding(profile)
    assert encoding is not None
    files_only = []
    for key in profile.stages:
        read, shuffle_read, written = _sums(
            profile, key, "input_bytes", "shuffle_read_bytes", "shuffle_write_bytes"
        )
        if written > 0 and read > 0 and shuffle_read == 0:
            files_only.append((read, written))
        if shuffle_read > 0 and read == 0:
            # A shuffle it read is already in the shuffle's encoding: as many bytes again.
            assert _shuffled_bytes(profile, key, encoding) == pytest.approx(shuffle_read)
    # The files' ratio is the file-reading map stages' own (the map stages over generated
    # rows read no bytes for their records, and the shuffle readers are in shuffle bytes).
    assert files_only
    ratio = sum(w for _, w in files_only) / sum(r for r, _ in files_only)
    assert encoding.bytes_per_byte_read == pytest.approx(ratio)


def test_a_broadcast_join_stays_under_a_threshold_as_high_as_the_runs(plans) -> None:
    """The planner broadcast the join under the run's 10 MB on its own estimate of the build
    side, which the log does not hold; the bytes taken for it can be larger. Made larger here
    (2M rows, ~32 MB), a threshold as high as the run's still keeps the broadcast, and one
    below the run's turns it into a sort-merge join."""
    profile, part = plans
    (join,) = [j for j in part.joins if j.strategy == "broadcast-hash"]
    assert not join.adaptive
    big = replace(join, broadcast_rows=2_000_000)
    bigger = replace(part, joins=[big if j is join else j for j in part.joins])
    settings = bigger.settings_for(bigger.stages[join.stages[0]])
    assert settings.get("spark.sql.autoBroadcastJoinThreshold") == 10 << 20

    def switched(threshold: str) -> list[int]:
        changes, _ = parse_settings({"spark.sql.autoBroadcastJoinThreshold": threshold})
        joins, _ = plan_join_switches(profile, bigger, changes)
        return [j.query_id for j in joins if j.before == "broadcast-hash"]

    assert switched(str(10 << 20)) == []
    assert switched(str(20 << 20)) == []
    assert switched(str(1 << 20)) == [join.query_id]
    assert switched("-1") == [join.query_id]
