"""Every command's ``--help`` renders (a help text is read as rich markup: a ``[/x]`` in it
breaks the page, as ``owner/repo[/path]`` once broke ``skills install --help``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from skillweave.cli import app


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in sorted(group.commands.items()):
        yield (*path, name)
        if hasattr(command, "commands"):  # a group (typer's, whichever click it is built on)
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_the_walk_finds_the_commands_of_every_group() -> None:
    assert ("skills", "install") in COMMANDS
    assert ("registry", "build") in COMMANDS
    assert len(COMMANDS) > 30


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_renders(command: tuple[str, ...]) -> None:
    shown = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert shown.exit_code == 0, shown.output
    assert "Usage" in shown.output
