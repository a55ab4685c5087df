"""Dynamic allocation in the one what-if grammar (`perfmodel.simulate.whatif`): the
``dynamic-allocation`` switch and the ``min-``/``max-``/``initial-executors`` settings read
the same as predict's options, sweep axes and fleet scenarios, and a factor is of the
profiled run's own limit."""

from __future__ import annotations

import pytest

from perfmodel.analysis import CONF, analyse_profile
from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf, apply_what_if
from perfmodel.simulate.whatif import (
    SETTINGS,
    change_of,
    parse_axes,
    parse_change,
    parse_value,
    sweep_points,
)
from tests.unit.allocation_helpers import cluster_profile, compiled, equal_tasks

DYNAMIC = {"spark.dynamicAllocation.enabled": "true"}


def _base(properties: dict[str, str] | None = None) -> ClusterConfig:
    base, _ = compiled(cluster_profile([[equal_tasks(0, 8, 100.0)]], 2, properties))
    return base


def test_the_settings_are_named_as_predicts_options() -> None:
    for name in ("dynamic-allocation", "min-executors", "max-executors", "initial-executors"):
        assert SETTINGS[name].option == f"--{name}"


@pytest.mark.parametrize(
    ("text", "on"), [("on", True), ("ON", True), ("true", True), ("off", False), ("no", False)]
)
def test_the_switch_reads_on_and_off(text: str, on: bool) -> None:
    change = change_of({"dynamic-allocation": text})
    assert change.resolve(_base()) == WhatIf(dynamic_allocation=on)


@pytest.mark.parametrize("text", ["sometimes", "2x", "", "2"])
def test_the_switch_refuses_anything_else(text: str) -> None:
    with pytest.raises(ConfigError, match="--dynamic-allocation takes on or off"):
        parse_value("dynamic-allocation", text)
    with pytest.raises(ConfigError, match="what-if dynamic-allocation takes on or off"):
        parse_change(f"dynamic-allocation={text or 'x'}")


def test_absolute_limits() -> None:
    change = parse_change("dynamic-allocation=on,min-executors=1,max-executors=6")
    what_if = change.resolve(_base())
    assert what_if == WhatIf(dynamic_allocation=True, min_executors=1, max_executors=6)
    with pytest.raises(ConfigError, match="not a whole number"):
        parse_value("max-executors", "many")
    with pytest.raises(ConfigError, match=r"--max-executors must be"):
        change_of({"max-executors": "0"}).resolve(_base(DYNAMIC))


def test_a_factor_is_of_the_runs_own_limit() -> None:
    limited = _base(
        DYNAMIC
        | {
            "spark.dynamicAllocation.minExecutors": "2",
            "spark.dynamicAllocation.maxExecutors": "4",
            "spark.dynamicAllocation.initialExecutors": "3",
        }
    )
    change = parse_change("max-executors=2x,min-executors=0.5x,initial-executors=2x")
    assert change.resolve(limited) == WhatIf(min_executors=1, max_executors=8, initial_executors=6)
    target = apply_what_if(limited, change.resolve(limited))
    assert (target.allocation.min_executors, target.allocation.max_executors) == (1, 8)
    assert target.allocation.initial_executors == 6
    # No maxExecutors (Spark's default: unbounded), or a static run: a factor of the
    # executors the run had.
    unbounded = _base(DYNAMIC)
    assert not unbounded.allocation.bounded
    assert parse_change("max-executors=3x").resolve(unbounded).max_executors == 3
    static = _base()
    assert parse_change("max-executors=0.1x").resolve(static).max_executors == 1


def test_a_static_run_needs_the_switch_for_a_limit() -> None:
    static = _base()
    with pytest.raises(ConfigError, match="add --dynamic-allocation on"):
        apply_what_if(static, parse_change("max-executors=2").resolve(static))
    both = parse_change("dynamic-allocation=on,max-executors=2")
    target = apply_what_if(static, both.resolve(static))
    assert target.allocation.enabled and target.allocation.max_executors == 2


def test_sweep_axes_over_the_limits() -> None:
    axes = parse_axes(["max-executors=1,2,4", "dynamic-allocation=on"])
    points = sweep_points(axes)
    assert [p for p, _ in points] == [
        {"max-executors": m, "dynamic-allocation": "on"} for m in ("1", "2", "4")
    ]
    base = _base()
    assert [c.resolve(base).max_executors for _, c in points] == [1, 2, 4]
    with pytest.raises(ConfigError, match="takes on or off"):
        parse_axes(["dynamic-allocation=on,maybe"])


def test_the_facade_predicts_a_sweep_of_maxima() -> None:
    # 8 tasks of 1 s on one-core executors asked for by the policy: more executors
    # allowed is never slower.
    profile = cluster_profile([[equal_tasks(0, 8, 1000.0)]], 1, DYNAMIC)
    analysis = analyse_profile(profile)
    points = analysis.sweep(["max-executors=1,2,4,8"])
    seconds = [p.prediction.predicted_s for p in points]
    assert [p.prediction.config.allocation.max_executors for p in points] == [1, 2, 4, 8]
    assert all(b <= a + 1e-9 for a, b in zip(seconds, seconds[1:], strict=False))
    assert seconds[-1] < seconds[0]


def test_switching_it_on_beside_a_fixed_count_is_refused_however_written() -> None:
    """``--conf spark.dynamicAllocation.enabled=true`` on a run that had it on is still the
    user's word: with ``--executors 4`` beside it, the contradiction is refused as
    ``--dynamic-allocation on --executors 4`` is, not replayed as a static run."""
    analysis = analyse_profile(cluster_profile([[equal_tasks(0, 8, 1000.0)]], 1, DYNAMIC))
    for change in (
        change_of({"executors": "4", "dynamic-allocation": "on"}, conf=CONF),
        change_of({"executors": "4", "spark.dynamicAllocation.enabled": "true"}, conf=CONF),
    ):
        with pytest.raises(ConfigError, match="fix the executor count"):
            analysis.predict(change)
    on = analysis.predict(change_of({"spark.dynamicAllocation.enabled": "true"}, conf=CONF))
    assert on.config.allocation.enabled
