"""Joins whose strategy new broadcast thresholds change, and the data that moves with them.

A broadcast join whose build side is over the thresholds becomes a sort-merge join: its
stream side is shuffled and sorted. A sort-merge join whose smaller side is within the
static threshold becomes a broadcast join: its larger side is no longer shuffled. The sizes
are what the sides' stages read (the planner's estimates are not in the log); how many
bytes a side becomes once shuffled follows this run's own shuffles (`shuffle_encoding`).
What that costs in time is the replay's to say (`perfmodel.simulate.join_switch`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from perfmodel.dag.model import ApplicationProfile, StageKey
from perfmodel.dag.partition_change import JoinChange
from perfmodel.spark.partitioning import Partitioning, shuffle_write_bytes, target_settings
from perfmodel.spark.settings import SettingValue

JOIN_KEYS = (
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.autoBroadcastJoinThreshold",
)
"""Settings that choose a join's strategy (with ``spark.sql.adaptive.enabled``)."""


@dataclass(frozen=True, slots=True)
class ShuffleEncoding:
    """How many bytes this run's shuffles wrote for what their map stages read."""

    bytes_per_byte_read: float
    """Shuffle bytes written per byte of files a map stage read (the files' encoding, as
    shuffled), over the map stages that read files only."""
    bytes_per_record: float
    """Shuffle bytes written per record written (sizes a side whose stage reads no bytes:
    generated data; and bounds one that reads files)."""


def shuffle_encoding(profile: ApplicationProfile) -> ShuffleEncoding | None:
    """This run's shuffle bytes per byte of files and per record its map stages read (None
    where it wrote no shuffle to measure them on). The byte ratio comes from map stages that
    read files only: a shuffle read is already in the shuffle's encoding."""
    written = 0.0
    file_written = 0.0
    file_read = 0.0
    records = 0.0
    for stage in profile.stages.values():
        if not len(stage.table):
            continue
        t = stage.table
        shuffle_written = t.total("shuffle_write_bytes")
        if shuffle_written <= 0:
            continue
        written += shuffle_written
        records += t.total("shuffle_write_records")
        read = t.total("input_bytes")
        if read > 0 and t.total("shuffle_read_bytes") == 0:
            file_written += shuffle_written
            file_read += read
    if written <= 0:
        return None
    return ShuffleEncoding(
        bytes_per_byte_read=file_written / file_read if file_read > 0 else 1.0,
        bytes_per_record=written / records if records > 0 else 0.0,
    )


def _read_of(profile: ApplicationProfile, keys: list[StageKey]) -> float:
    return profile.ended_total(keys, "input_bytes", "shuffle_read_bytes")


def plan_join_switches(
    profile: ApplicationProfile,
    partitioning: Partitioning,
    changes: Mapping[str, SettingValue],
) -> tuple[list[JoinChange], list[str]]:
    """Joins whose strategy the new broadcast thresholds change.

    A broadcast join under a static threshold lower than the run's, whose build side (the
    bytes its stages read: the planner's estimate is not in the log) is over both thresholds,
    becomes a sort-merge join: its stream side is shuffled and sorted. A sort-merge join
    whose smaller side's input is within the static threshold becomes a broadcast join: its
    larger side is no longer shuffled (its map stage loses its shuffle write, the join stage
    the larger side's share of its reading). A join AQE would turn into a broadcast at run
    time, after both shuffles ran, is said and left as it ran.
    """
    if not any(k in changes for k in (*JOIN_KEYS, "spark.sql.adaptive.enabled")):
        return [], []
    out: list[JoinChange] = []
    notes: list[str] = []
    encoding = shuffle_encoding(profile)
    for join in partitioning.joins:
        if not join.stages or join.stages[0] not in partitioning.stages:
            continue
        part = partitioning.stages[join.stages[0]]
        before = partitioning.settings_for(part)
        target, _ = target_settings(partitioning, part, changes)
        static = int(target.get("spark.sql.autoBroadcastJoinThreshold") or 0)
        adaptive_on = bool(target.get("spark.sql.adaptive.enabled"))
        runtime = int(target.get("spark.sql.adaptive.autoBroadcastJoinThreshold") or 0)
        if join.strategy == "broadcast-hash" and not join.adaptive:
            # The planner broadcast it under the run's own threshold, on its own estimate of
            # the build side (not in the log; the bytes its stages read can be larger): a
            # threshold at least as high keeps it.
            was = int(before.get("spark.sql.autoBroadcastJoinThreshold") or 0)
            if was > 0 and static >= was:
                continue
            build = _read_of(profile, join.build_stages) or float((join.broadcast_rows or 0) * 16)
            keeps = (static > 0 and build <= static) or (
                adaptive_on and runtime > 0 and build <= runtime
            )
            if keeps:
                continue
            if encoding is None:
                notes.append(
                    f"query {join.query_id}'s broadcast join would become a sort-merge join, "
                    "but the run wrote no shuffle to measure a shuffle's size on: not predicted"
                )
                continue
            shuffled = {key: _shuffled_bytes(profile, key, encoding) for key in join.stages}
            out.append(
                JoinChange(
                    join.query_id,
                    join.strategy,
                    "sort-merge",
                    shuffled,
                    {},
                    f"query {join.query_id}: its broadcast join ({build / 1e6:.1f} MB build side) "
                    f"becomes a sort-merge join (thresholds {static} and {runtime} bytes): its "
                    "stream side is shuffled and sorted",
                )
            )
        elif join.strategy == "sort-merge" and all(join.side_stages):
            was = int(before.get("spark.sql.autoBroadcastJoinThreshold") or 0)
            sizes = [_read_of(profile, side) for side in join.side_stages]
            written = [shuffle_write_bytes(profile, side) for side in join.side_stages]
            small = int(np.argmin(written))
            if static > 0 and sizes[small] <= static and not (was > 0 and sizes[small] <= was):
                big_side = join.side_stages[1 - small]
                big_share = written[1 - small] / max(sum(written), 1.0)
                out.append(
                    JoinChange(
                        join.query_id,
                        join.strategy,
                        "broadcast-hash",
                        {},
                        {
                            **dict.fromkeys(big_side, -1.0),
                            **dict.fromkeys(join.stages, 1.0 - big_share),
                        },
                        f"query {join.query_id}: its sort-merge join becomes a broadcast join "
                        f"(smaller side {sizes[small] / 1e6:.1f} MB read, threshold {static} "
                        "bytes): its larger side is no longer shuffled",
                    )
                )
            elif adaptive_on and runtime > 0 and written[small] <= runtime:
                notes.append(
                    f"query {join.query_id}: AQE would turn its sort-merge join into a "
                    "broadcast join at run time (after both shuffles); not modelled: the "
                    "prediction keeps the sort-merge join"
                )
    return out, notes


def _shuffled_bytes(profile: ApplicationProfile, key: StageKey, encoding: ShuffleEncoding) -> float:
    """Bytes a stage's input would be as a shuffle: a shuffle it read, as it was (already in
    the shuffle's encoding); files it read, encoded as this run's shuffles encode files, but
    at most its records at the run's bytes per shuffled record; generated rows (no bytes
    read), by their records.

    Why the bound: files compress by very different ratios (a window workload's map stage
    read 11 KB of files for 107 MB of shuffle), and a stream side priced at such a ratio,
    or a shuffle read priced at it (before this rule: 1.2 MB as 95 MB), outweighs the
    whole run."""
    stage = profile.stages.get(key)
    if stage is None or not len(stage.table):
        return 0.0
    t = stage.table
    shuffled = t.total("shuffle_read_bytes")
    read = t.total("input_bytes")
    by_records = t.total("input_records") * encoding.bytes_per_record
    if read <= 0:
        return shuffled + by_records
    by_bytes = read * encoding.bytes_per_byte_read
    return shuffled + (min(by_bytes, by_records) if by_records > 0 else by_bytes)
