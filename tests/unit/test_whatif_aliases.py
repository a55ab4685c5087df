"""Dask's names for executors and their cores are aliases in the one what-if grammar, so
``--workers 2``, a ``workers=1,2`` sweep axis and a ``threads=2x`` fleet scenario mean what
``--executors``, ``executors=`` and ``executor-cores=`` mean."""

from __future__ import annotations

from typing import get_args

import pytest

from perfmodel.cli.options import ExecutorCores, Executors, Threads, Workers
from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf
from perfmodel.simulate.whatif import change_of, parse_axes, parse_change

BASE = ClusterConfig(
    executors=2,
    executor_cores=2,
    memory_bytes=2**30,
    hosts=1,
    host_cores=4,
    host_cores_assumed=False,
)


def test_aliases_resolve_as_their_settings() -> None:
    assert parse_change("workers=1,threads=2x").resolve(BASE) == WhatIf(
        executors=1, executor_cores=4
    )
    assert change_of({"workers": "3"}).label == "executors=3"
    assert [a.name for a in parse_axes(["threads=1,2"])] == ["executor-cores"]


def test_an_alias_and_its_setting_are_one_setting() -> None:
    with pytest.raises(ConfigError, match="sets executors twice"):
        parse_change("executors=2,workers=1")
    with pytest.raises(ConfigError, match="not a whole number"):
        parse_change("workers=two")


def test_the_cli_declares_the_aliases() -> None:
    """typer reads an annotated option's first name from its ``default``. Each alias is an
    option of its own, so a message names the option the user wrote."""
    for option, names in (
        (Executors, ("--executors",)),
        (ExecutorCores, ("--executor-cores",)),
        (Workers, ("--workers",)),
        (Threads, ("--threads",)),
    ):
        info = get_args(option)[1]
        assert (info.default, *info.param_decls) == names


def test_a_value_is_refused_under_the_name_written() -> None:
    with pytest.raises(ConfigError, match="^--threads must be a whole number"):
        change_of({"threads": "0"})
    with pytest.raises(ConfigError, match="^what-if workers must be"):
        parse_change("workers=0")
    with pytest.raises(ConfigError, match="--executors and --workers set the same thing"):
        change_of({"executors": "2", "workers": "1"})
