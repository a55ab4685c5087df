"""The CLI builds only the module of the command it runs (`perfmodel.cli.COMMAND_GROUPS`): the
table must name every command, and building for one command must give that command with the
same parameters as the full CLI."""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from perfmodel.cli import COMMAND_GROUPS, GROUPS, build_app, command_named


def _commands(command: str | None = None) -> TyperGroup:
    group = typer.main.get_command(build_app(command))
    assert isinstance(group, TyperGroup)
    return group


def test_every_command_is_in_the_table_and_every_module_in_the_order() -> None:
    assert set(_commands().commands) == set(COMMAND_GROUPS)
    assert set(COMMAND_GROUPS.values()) == set(GROUPS)


def test_building_for_one_command_builds_its_module_only_and_the_same_command() -> None:
    full = _commands()
    for name, group in COMMAND_GROUPS.items():
        built = _commands(name).commands
        assert set(built) == {n for n, g in COMMAND_GROUPS.items() if g == group}
        assert [p.name for p in built[name].params] == [p.name for p in full.commands[name].params]


def test_anything_but_a_command_builds_them_all() -> None:
    for argv in ([], ["--help"], ["--version"], ["diagnos", "x.zstd"]):
        assert set(_commands(command_named(argv)).commands) == set(COMMAND_GROUPS)
    assert command_named(["watch", "--json", "log"]) == "watch"
