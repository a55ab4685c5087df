"""Options the CLI declares without importing the library: their help must say what the
library does when they are left out."""

from __future__ import annotations

from typing import get_args

from perfmodel.analysis import DEFAULT_MAX_DECOMPRESSED
from perfmodel.cli.options import MaxDecompressed


def test_the_decompression_cap_the_help_names_is_the_librarys() -> None:
    option = get_args(MaxDecompressed)[1]
    assert f"default {DEFAULT_MAX_DECOMPRESSED / 1024**3:g} GiB" in option.help
