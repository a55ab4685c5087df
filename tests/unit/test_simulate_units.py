"""Sizes and bandwidths parse the way Spark users and vendors write them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.errors import PerfmodelError
from perfmodel.simulate.units import (
    UnitError,
    format_size,
    parse_bandwidth,
    parse_factor,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7g", 7 << 30),
        ("512m", 512 << 20),
        ("512M", 512 << 20),
        ("2048", 2048 << 20),  # a bare number is MiB, as in spark.executor.memory
        ("4gb", 4 << 30),
        ("4GiB", 4 << 30),
        ("1.5g", int(1.5 * (1 << 30))),
        ("64k", 64 << 10),
        ("1b", 1),  # a lone b is bytes, as Spark reads it, not MiB
        ("512B", 512),
        ("4 b", 4),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10Gbit/s", 1.25e9),
        ("10Gb/s", 1.25e9),
        ("1Gbps", 1.25e8),
        ("500MB/s", 5e8),
        ("500 MB/s", 5e8),
        ("200MiB/s", 200 * 2**20),
        ("1GB/s", 1e9),
        ("100Mbit/s", 12.5e6),
    ],
)
def test_parse_bandwidth(text: str, expected: float) -> None:
    assert parse_bandwidth(text) == pytest.approx(expected)


@given(st.integers(min_value=1, max_value=1 << 50), st.sampled_from(["b", "B", " b"]))
def test_a_b_suffix_is_bytes_and_a_bare_number_mib(n: int, b: str) -> None:
    assert parse_size(f"{n}{b}") == n
    mib = n >> 11  # a bare number is MiB: up to 2^39 MiB, below the 1024p limit
    if mib:
        assert parse_size(str(mib)) == mib << 20


@pytest.mark.parametrize("text", ["", "seven", "7q", "-1g", "0g", "0b", "0.5b", "1ib", "b"])
def test_bad_sizes_are_user_errors(text: str) -> None:
    with pytest.raises(PerfmodelError):
        parse_size(text)


@pytest.mark.parametrize("text", ["10", "fast", "10G", "0MB/s"])
def test_bandwidth_needs_a_unit(text: str) -> None:
    with pytest.raises(UnitError):
        parse_bandwidth(text)


def test_factor() -> None:
    assert parse_factor("2x") == 2.0
    assert parse_factor("0.5×") == 0.5
    assert parse_factor("500MB/s") is None


def test_format_size_round_trips() -> None:
    for text in ("7g", "512m", "1t"):
        assert format_size(parse_size(text)) == text
