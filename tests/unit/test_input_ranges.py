"""Numbers and manifests are checked where they enter, against physical ranges and types;
the message names the field and what is allowed."""

from __future__ import annotations

import math

import pytest

from perfmodel.profile.bundle import BundleError, BundleManifest
from perfmodel.simulate.config import RANGES, BaselineOverrides, ConfigError, WhatIf
from perfmodel.simulate.units import UnitError, parse_bandwidth, parse_factor, parse_size


@pytest.mark.parametrize("name", sorted(RANGES))
@pytest.mark.parametrize("bad", ["low", "high", "nan", "inf", "bool"])
def test_every_what_if_setting_has_a_range(name: str, bad: str) -> None:
    allowed = RANGES[name]
    value = {
        "low": allowed.low - 1 if allowed.kind is int else allowed.low / 2,
        "high": allowed.high + 1 if allowed.kind is int else allowed.high * 2,
        "nan": math.nan,
        "inf": math.inf,
        "bool": True,
    }[bad]
    if allowed.kind is int and bad in ("low", "high"):
        value = int(value)
    with pytest.raises(ConfigError) as info:
        WhatIf(**{name: value})
    message = str(info.value)
    # Named as the user writes it: the option, not the field behind it (disk_factor).
    assert message.startswith(f"{allowed.option} must be {allowed.describe()}; got ")


@pytest.mark.parametrize("name", sorted(RANGES))
def test_the_ends_of_every_range_are_allowed(name: str) -> None:
    allowed = RANGES[name]
    for value in (allowed.low, allowed.high):
        WhatIf(**{name: allowed.kind(value)})


def test_baseline_overrides_are_checked_and_named_as_baseline_options() -> None:
    with pytest.raises(ConfigError, match="--baseline-net-bw"):
        BaselineOverrides(net_bw=-1.0)
    with pytest.raises(ConfigError, match="^--host-cores must be"):
        BaselineOverrides(host_cores=10**9)
    assert BaselineOverrides(host_cores=8, disk_bw=5e8).host_cores == 8


@pytest.mark.parametrize(
    "parse", [lambda: parse_size("9" * 400 + "g"), lambda: parse_bandwidth("9" * 400 + "GB/s")]
)
def test_parsers_refuse_numbers_that_overflow(parse) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnitError):
        parse()


def test_a_factor_that_overflows_is_refused() -> None:
    with pytest.raises(UnitError, match="finite"):
        parse_factor("9" * 400 + "x")


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"event_logs": 5}, "field event_logs: expected array, got int"),
        ({"recordings": [{"path": 3, "source": "jfr"}]}, "field recordings[0].path"),
        ({"recordings": [{"source": "jfr"}]}, "recordings[0]"),
        ({"host_cores": 10**12}, "field host_cores"),
        ({"sampling": []}, "field sampling: expected object"),
        ({"exit_code": "zero"}, "field exit_code"),
    ],
)
def test_a_manifest_with_a_wrong_type_names_the_field(data: dict, named: str) -> None:
    with pytest.raises(BundleError) as info:
        BundleManifest.from_dict({"format": "perfmodel-bundle", **data}, "b/manifest.json")
    assert named in str(info.value) and "b/manifest.json is damaged" in str(info.value)
