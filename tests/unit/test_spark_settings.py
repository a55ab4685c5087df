"""Spark settings parse as Spark parses them; bad keys and values are refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.errors import PerfmodelError
from perfmodel.spark.settings import (
    KEYS,
    PREDICTED,
    SettingError,
    SettingNotPredictedError,
    effective_settings,
    parse_bytes,
    parse_settings,
    parse_value,
    spark_version,
)

UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20}
UNITS |= {"g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}


@given(st.integers(0, 1 << 20), st.sampled_from(sorted(UNITS)), st.booleans())
def test_sizes_round_trip_in_any_case(number: int, suffix: str, upper: bool) -> None:
    text = f"{number}{suffix.upper() if upper else suffix}"
    assert parse_bytes(text) == number * UNITS[suffix]


@given(st.integers(1, 1 << 30))
def test_a_bare_memory_size_is_mib(number: int) -> None:
    # spark.executor.memory=2048 is 2 GiB (ByteUnit.MiB); a SQL size's bare number is bytes.
    assert parse_bytes(str(number), 1 << 20) == number << 20
    assert parse_bytes(str(number)) == number


def test_negative_thresholds_and_refusals() -> None:
    assert parse_value("spark.sql.autoBroadcastJoinThreshold", "-1") == -1
    assert parse_value("spark.sql.autoBroadcastJoinThreshold", "10MB") == 10 << 20
    with pytest.raises(ValueError, match="fractional"):
        parse_bytes("1.5g")
    with pytest.raises(ValueError, match="suffix"):
        parse_bytes("10q")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.sql.shuffle.partitions", "0"),
        ("spark.sql.shuffle.partitions", "1000001"),
        ("spark.sql.shuffle.partitions", "ten"),
        ("spark.memory.fraction", "1.5"),
        ("spark.memory.fraction", "nan"),
        ("spark.sql.adaptive.enabled", "yes"),
        ("spark.executor.memory", "100m"),
        ("spark.sql.files.maxPartitionBytes", "0"),
        ("spark.executor.cores", "-2"),
    ],
)
def test_out_of_range_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(SettingError) as err:
        parse_value(key, value)
    assert key in str(err.value)
    assert isinstance(err.value, PerfmodelError)


def test_unknown_keys_are_refused_with_suggestions() -> None:
    with pytest.raises(SettingError, match="spark.sql.shufle.partitions") as err:
        parse_settings({"spark.sql.shufle.partitions": "64"})
    assert "did you mean spark.sql.shuffle.partitions" in str(err.value)


def test_known_keys_the_model_cannot_predict_say_so() -> None:
    with pytest.raises(SettingNotPredictedError, match="spark.executor.memoryOverhead"):
        parse_settings({"spark.executor.memoryOverhead": "2g"})
    values, skipped = parse_settings(
        {"spark.executor.memoryOverhead": "2g", "spark.sql.shuffle.partitions": "64"}, strict=False
    )
    assert values == {"spark.sql.shuffle.partitions": 64}
    assert "container" in skipped["spark.executor.memoryOverhead"]


@given(st.sampled_from(PREDICTED), st.text(max_size=40))
def test_any_text_parses_or_is_refused_by_name(key: str, text: str) -> None:
    try:
        parse_value(key, text)
    except SettingError as exc:
        assert key in str(exc)


@given(st.sampled_from([k for k in PREDICTED if KEYS[k].kind == "int"]), st.integers(1, 5000))
def test_whole_numbers_in_range_parse(key: str, number: int) -> None:
    spec = KEYS[key]
    if spec.low is not None and spec.low <= number <= (spec.high or number):
        assert parse_value(key, f" {number} ") == number


def test_defaults_follow_the_logs_spark_version() -> None:
    assert spark_version("3.5.1") == (3, 5)
    assert spark_version("4.0.0-preview2") == (4, 0)
    assert spark_version("") == (0, 0)
    old = effective_settings({}, "3.1.2")
    new = effective_settings({}, "3.2.0")
    assert old.get("spark.sql.adaptive.enabled") is False
    assert new.get("spark.sql.adaptive.enabled") is True
    assert old.get("spark.sql.adaptive.coalescePartitions.minPartitionSize") == 0
    assert new.get("spark.sql.adaptive.coalescePartitions.minPartitionSize") == 1 << 20
    assert new.get("spark.sql.shuffle.partitions") == 200
    assert new.get("spark.default.parallelism") is None


def test_fallbacks_and_what_the_log_set() -> None:
    s = effective_settings(
        {
            "spark.sql.adaptive.shuffle.targetPostShuffleInputSize": "32m",
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.shuffle.partitions": "not a number",
        },
        "3.3.0",
    )
    assert s.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") == 32 << 20
    assert s.get("spark.sql.adaptive.autoBroadcastJoinThreshold") == -1
    # A value Spark would not accept is read as unset (the run did not fail on it).
    assert s.get("spark.sql.shuffle.partitions") == 200
    changed = s.with_changes({"spark.sql.autoBroadcastJoinThreshold": 1 << 20})
    assert changed.get("spark.sql.adaptive.autoBroadcastJoinThreshold") == 1 << 20
