"""Spark's partitioning rules, on the examples Spark's own source documents and on cases
worked by hand from its code."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.spark import partition_rules as rules

MB = 1 << 20


def _settings(advisory: int, min_size: int = 0, minimum: int | None = 1) -> rules.CoalesceSettings:
    return rules.CoalesceSettings(
        advisory=advisory,
        min_partition_size=min_size,
        min_partition_num=minimum,
        parallelism_first=True,
        default_parallelism=2,
    )


def test_coalescing_the_example_in_sparks_source() -> None:
    # ShufflePartitionsUtil's doc: two shuffles read together, target 128 MiB → 4 partitions.
    left = np.array([100, 20, 100, 10, 30]) * MB
    right = np.array([10, 10, 70, 5, 5]) * MB
    ranges = rules.coalesce_partitions(left + right, _settings(128 * MB))
    assert ranges == [(0, 1), (1, 2), (2, 3), (3, 5)]


def test_a_run_below_the_minimum_size_is_merged_into_a_neighbour() -> None:
    # The doc's [64MB, 0.5MB, 64MB]: 0.5MB cannot join either side within the target, and
    # being below minPartitionSize it is merged into the one after it.
    sizes = np.array([64 * MB, MB // 2, 64 * MB])
    assert rules.coalesce_partitions(sizes, _settings(64 * MB, MB)) == [(0, 1), (1, 3)]
    # Before Spark 3.3 (no merging) it stays alone.
    old = rules.CoalesceSettings(64 * MB, MB, 1, True, 2, merge_small=False)
    assert rules.coalesce_partitions(sizes, old) == [(0, 1), (1, 2), (2, 3)]


def test_no_coalescing_keeps_every_partition_and_empty_ones_get_no_task() -> None:
    sizes = np.array([10, 10, 10, 10]) * MB
    assert rules.coalesce_partitions(sizes, _settings(5 * MB)) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    sizes = np.array([0, 0, 6, 0, 0, 6, 0]) * MB
    # Leading empty partitions join the first run; nothing runs for nothing.
    assert rules.coalesce_partitions(sizes, _settings(8 * MB)) == [(0, 5), (5, 7)]
    assert rules.coalesce_partitions(np.zeros(4, dtype=np.int64), _settings(MB)) == [(0, 4)]


def test_parallelism_first_caps_the_target_at_an_even_share() -> None:
    sizes = np.full(64, MB)
    # 64 MiB advisory would make one partition; the default parallelism (8) keeps eight.
    s = rules.CoalesceSettings(64 * MB, 0, None, True, 8)
    assert len(rules.coalesce_partitions(sizes, s)) == 8
    s = rules.CoalesceSettings(64 * MB, 0, None, False, 8)
    assert len(rules.coalesce_partitions(sizes, s)) == 1
    # ... but never below the minimum partition size.
    s = rules.CoalesceSettings(64 * MB, 16 * MB, None, True, 8)
    assert len(rules.coalesce_partitions(sizes, s)) == 4


@given(st.lists(st.integers(0, 1 << 30), min_size=1, max_size=200), st.integers(1, 1 << 31))
def test_coalesced_ranges_cover_every_partition_in_order(sizes: list[int], advisory: int) -> None:
    arr = np.array(sizes, dtype=np.int64)
    ranges = rules.coalesce_partitions(arr, _settings(advisory, min(advisory, MB)))
    assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    assert len(ranges) <= len(sizes)


def test_split_by_target_merges_small_pieces() -> None:
    assert rules.split_by_target([10] * 10, 25) == [0, 2, 4, 6, 8]
    # A last piece under 20% of the target goes into the one before it.
    assert rules.split_by_target([20, 20, 2], 25) == [0, 1]


def test_skew_detection_and_split() -> None:
    sizes = np.array([10, 12, 11, 9, 200], dtype=np.int64) * MB
    s = rules.SkewSettings(enabled=True, factor=5.0, threshold=64 * MB, advisory=16 * MB)
    assert rules.median_size(sizes) == 11 * MB
    assert rules.skew_threshold(sizes, s) == 64 * MB
    assert rules.skew_target(sizes, 64 * MB, 16 * MB) == 16 * MB
    maps = np.full(20, 1 / 20)
    left, right = rules.skew_join_pieces(sizes, sizes, s, True, False, maps, maps)
    # 200 MiB over 20 map blocks of 10 MiB, packed up to 16 MiB: no two blocks fit
    # together (20 MiB is over 1.2 x 16 MiB too), so each block is a piece.
    assert left.tolist() == [1, 1, 1, 1, 20]
    # Blocks of 5 MiB: three to a piece (15 MiB), and the 40th alone (5 MiB is over 20% of
    # the target, so it is not merged into the piece before).
    maps = np.full(40, 1 / 40)
    assert rules.skew_join_pieces(sizes, sizes, s, True, False, maps, maps)[0][4] == 14
    assert right.tolist() == [1, 1, 1, 1, 1]
    # One map task cannot be split: no pieces.
    assert rules.skew_pieces(200 * MB, np.ones(1), 16 * MB) == 1
    off = rules.SkewSettings(enabled=False, factor=5.0, threshold=64 * MB, advisory=16 * MB)
    assert rules.skew_join_pieces(sizes, sizes, off, True, True, maps, maps)[0].max() == 1


@given(st.integers(2, 35_000_000_000))
def test_map_status_rounds_up_by_less_than_ten_percent(size: int) -> None:
    reported = float(rules.reported_block_sizes(np.array([float(size)]))[0])
    assert size * 0.999999 <= reported <= size * 1.1


def test_map_status_caps_at_its_largest_exponent() -> None:
    # A byte holds the exponent: 1.1^255 (~35.9 GB) is the most a block can report.
    reported = rules.reported_block_sizes(np.array([0.0, 1.0, 1e12]))
    assert reported[:2].tolist() == [0.0, 1.0]
    assert reported[2] == np.floor(1.1**255)


def test_file_splits_follow_max_split_bytes() -> None:
    sizes = np.full(6, 212_110, dtype=np.int64)
    s = rules.FileSplitSettings(max_partition_bytes=32 << 10, open_cost=4 * MB, min_partition_num=2)
    assert rules.max_split_bytes(sizes, s) == 32 << 10
    assert len(rules.file_partitions(sizes, s)) == 6 * 7  # each file in 7 pieces, each alone
    s = rules.FileSplitSettings(max_partition_bytes=128 * MB, open_cost=4 * MB, min_partition_num=2)
    # Split size = (files + 6 open costs) / 2; three files (each with its open cost) fill it.
    assert len(rules.file_partitions(sizes, s)) == 2
    parts = rules.file_partitions(sizes, s, splittable=False)
    assert int(parts.sum()) == int(sizes.sum())


@pytest.mark.parametrize("count", [1, 3, 50])
def test_file_partitions_hold_every_byte(count: int) -> None:
    sizes = np.arange(1, count + 1, dtype=np.int64) * 1_000_003
    s = rules.FileSplitSettings(max_partition_bytes=4 * MB, open_cost=MB, min_partition_num=4)
    assert int(rules.file_partitions(sizes, s).sum()) == int(sizes.sum())
