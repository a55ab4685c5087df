"""Spark settings as values of the one what-if grammar: read by Spark's table wherever a
change is written (``--conf``, a ``--sweep`` axis, a fleet scenario), refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.analysis import CONF, SettingError, SettingNotPredictedError
from perfmodel.errors import PerfmodelError
from perfmodel.simulate.config import ClusterConfig, ConfigError
from perfmodel.simulate.whatif import (
    change_of,
    conf_pairs,
    is_axis_spec,
    is_change_spec,
    parse_axes,
    parse_change,
    parse_changes,
    parse_value,
    sweep_points,
)

SHUFFLE = "spark.sql.shuffle.partitions"


def test_a_spark_setting_is_a_value_of_the_grammar() -> None:
    change = parse_change(f"{SHUFFLE}=64,cores=2x,spark.sql.adaptive.enabled=false", CONF)
    assert change.conf == {SHUFFLE: 64, "spark.sql.adaptive.enabled": False}
    assert change.conf_text == {SHUFFLE: "64", "spark.sql.adaptive.enabled": "false"}
    assert change.label == f"{SHUFFLE}=64,cores=2x,spark.sql.adaptive.enabled=false"
    assert change.resources.label == "cores=2x"
    # The resource part resolves as before; the settings are the facade's to resolve.
    assert change.resources.conf == {}
    sizes = parse_change("spark.sql.files.maxPartitionBytes=64m", CONF)
    assert sizes.conf == {"spark.sql.files.maxPartitionBytes": 64 << 20}


def test_the_same_keys_read_in_every_place_a_change_is_written() -> None:
    option = change_of({"cores": "4", SHUFFLE: "64"}, conf=CONF)
    scenario = parse_change(f"cores=4,{SHUFFLE}=64", CONF)
    assert option.conf == scenario.conf == {SHUFFLE: 64}
    (axis,) = parse_axes([f"{SHUFFLE}=16,64,200"], CONF)
    points = sweep_points([axis], parse_change("cores=2", CONF), CONF)
    assert [p.conf[SHUFFLE] for _, p in points] == [16, 64, 200]
    assert all(p.resources.label == "cores=2" for _, p in points)
    assert is_axis_spec(f"{SHUFFLE}=16,64", CONF) and is_change_spec(f"{SHUFFLE}=8", CONF)
    # Without the table a Spark key is not the grammar's: a path, or an unknown setting.
    assert not is_change_spec(f"{SHUFFLE}=8")
    with pytest.raises(ConfigError, match="unknown setting"):
        parse_value(SHUFFLE, "8")


@pytest.mark.parametrize(
    ("text", "error", "named"),
    [
        ("spark.sql.shufle.partitions=64", SettingError, "did you mean spark.sql.shuffle"),
        (f"{SHUFFLE}=0", SettingError, SHUFFLE),
        (f"{SHUFFLE}=many", SettingError, SHUFFLE),
        ("spark.sql.files.maxPartitionBytes=1.5m", SettingError, "maxPartitionBytes"),
        ("spark.memory.fraction=1.5", SettingError, "spark.memory.fraction"),
        ("spark.executor.memoryOverhead=2g", SettingNotPredictedError, "memoryOverhead"),
        ("spark.serializer=kryo", SettingNotPredictedError, "spark.serializer"),
    ],
)
def test_a_bad_key_or_value_is_one_error_naming_the_key(text: str, error: type, named: str) -> None:
    for read in (
        lambda: parse_change(text, CONF),
        lambda: parse_axes([text], CONF),
        lambda: change_of(dict([text.split("=", 1)]), conf=CONF),
        lambda: parse_changes([text], CONF),
    ):
        with pytest.raises(error, match=named.replace(".", r"\.")):
            read()


def test_conf_options_are_key_value_each_key_once() -> None:
    assert conf_pairs([f"{SHUFFLE}=64", "spark.sql.adaptive.enabled = false"]) == {
        SHUFFLE: "64",
        "spark.sql.adaptive.enabled": "false",
    }
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        conf_pairs(["spark.sql.adaptive.enabled"])
    with pytest.raises(ConfigError, match="twice"):
        conf_pairs([f"{SHUFFLE}=64", f"{SHUFFLE}=8"])
    with pytest.raises(ConfigError, match="twice"):
        parse_change(f"{SHUFFLE}=64,{SHUFFLE}=8", CONF)


def test_a_resource_in_conf_is_refused_naming_its_own_option() -> None:
    """``--conf cores=4`` would silently win over ``--cores 1``: a resource has its option."""
    with pytest.raises(ConfigError, match="give --cores 4"):
        conf_pairs(["cores=4"], conf=CONF)
    with pytest.raises(ConfigError, match="give --mem 4g"):
        conf_pairs(["mem=4g"], conf=CONF)
    assert conf_pairs(["spark.executor.cores=4"], conf=CONF) == {"spark.executor.cores": "4"}
    assert conf_pairs(["cores=4"]) == {"cores": "4"}  # without a table: any KEY=VALUE


def test_a_sweep_axis_may_not_set_what_a_fixed_value_sets() -> None:
    """An axis over what an option also gives would drop the option without a word."""
    for axis, fixed in (
        ("cores=1,2", "cores=4"),
        (f"{SHUFFLE}=4,8", f"{SHUFFLE}=16"),
    ):
        with pytest.raises(ConfigError, match="set the same thing"):
            sweep_points(parse_axes([axis], CONF), parse_change(fixed, CONF), CONF)
    points = sweep_points(parse_axes(["cores=1,2"], CONF), parse_change("mem=2g", CONF), CONF)
    assert [c.settings for _, c in points] == [
        {"mem": "2g", "cores": "1"},
        {"mem": "2g", "cores": "2"},
    ]


@given(st.integers(-(10**6), 10**6))
def test_a_partition_count_is_read_or_refused_by_its_range(n: int) -> None:
    if 1 <= n <= 100_000:
        assert parse_value(SHUFFLE, str(n), conf=CONF).conf == n
    else:
        with pytest.raises(SettingError, match=SHUFFLE):
            parse_value(SHUFFLE, str(n), conf=CONF)


@given(st.text(max_size=30))
def test_any_text_is_read_or_refused_with_a_perfmodel_error(text: str) -> None:
    for key in (SHUFFLE, "spark.sql.adaptive.enabled", "spark.sql.files.maxPartitionBytes"):
        try:
            value = parse_value(key, text, conf=CONF)
        except PerfmodelError:
            continue
        assert value.conf is not None and value.is_conf


def test_a_factor_that_gives_no_whole_count_says_how_it_was_taken() -> None:
    """``cores=1.25x`` of 4 cores is 5, whole; of 2 cores it is 2.5, replayed as 2: said."""
    base = ClusterConfig(
        executors=2,
        executor_cores=2,
        memory_bytes=2**30,
        hosts=1,
        host_cores=4,
        host_cores_assumed=False,
    )
    assert parse_change("cores=2x,mem=0.5x", CONF).rounded(base) == []
    assert parse_change("cores=1.25x", CONF).rounded(base) == []  # 5 cores: whole
    assert parse_change("executors=1.25x,host-cores=0.1x", CONF).rounded(base) == [
        "executors=1.25x of 2 is 2.5: replayed as 2",
        "host-cores=0.1x of 4 is 0.4: replayed as 1",
    ]
