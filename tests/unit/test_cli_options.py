"""Options the CLI declares without importing the library: their help must say what the
library does when they are left out."""

from __future__ import annotations

from typing import get_args

import pytest

from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED
from perfmodel.cli.options import MaxDecompressed, TimeoutS, source_options
from perfmodel.errors import PerfmodelError
from perfmodel.profile.sources.stores import DEFAULT_REQUEST_TIMEOUT_S


def test_the_decompression_cap_the_help_names_is_the_librarys() -> None:
    option = get_args(MaxDecompressed)[1]
    assert f"default {DEFAULT_MAX_DECOMPRESSED / 1024**3:g} GiB" in option.help


def test_the_request_timeout_the_help_names_is_the_librarys() -> None:
    option = get_args(TimeoutS)[1]
    assert f"default {DEFAULT_REQUEST_TIMEOUT_S:g})" in option.help


def test_source_options_carry_what_was_given_and_the_environments_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    given = source_options(None, "ca.pem", 5.0)
    assert (given.endpoint_url, given.ca_bundle, given.request_timeout_s) == (
        "http://127.0.0.1:9",
        "ca.pem",
        5.0,
    )
    assert source_options("http://minio:9000", None, None).endpoint_url == "http://minio:9000"
    assert source_options(None, None, None).request_timeout_s == DEFAULT_REQUEST_TIMEOUT_S
    with pytest.raises(PerfmodelError, match="--timeout-s must be positive"):
        source_options(None, None, 0.0)
