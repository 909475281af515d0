"""docs/cli.md's command table against the commands themselves: every command has a row, and each row
names exactly the command's options (with the choices of a choice option) and its arguments.

The commands are read from the click tree `hallouminate` runs (``cli.main.cli``), the same objects that
print `hallouminate COMMAND --help`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from hallouminate.cli.main import cli

CLI_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
# `--format text\|json`, `--corpus C`, `[--force]`: a flag and the token after it, if it is its value.
_FLAG = re.compile(r"(--[a-z][a-z-]*)(?: ([^\s\[\]]+))?")


def leaf_commands(
    group: click.Command = cli, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    if isinstance(group, click.Group):
        for name, sub in sorted(group.commands.items()):
            yield from leaf_commands(sub, (*path, name))
    else:
        yield " ".join(path), group


def documented() -> dict[str, str]:
    """``{"config show": "[--format text\\|json]", ...}``: each row's usage after the command's words."""
    rows: dict[str, str] = {}
    for usage in re.findall(r"^\| `hallouminate ([^`]+)` \|", CLI_PAGE.read_text(), re.M):
        words = usage.split(" ")
        command = []
        while words and re.fullmatch(r"[a-z][a-z-]*", words[0]):
            command.append(words.pop(0))
        rows[" ".join(command)] = " ".join(words)
    return rows


COMMANDS = dict(leaf_commands())


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    assert sorted(documented()) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_row_names_the_options_choices_and_arguments_of_its_command(name: str) -> None:
    command = COMMANDS[name]
    usage = documented().get(name, "")
    flags = {flag: value for flag, value in _FLAG.findall(usage)}
    options = {
        opt: param
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in [*param.opts, *param.secondary_opts]  # a --x/--no-x switch: both named
        if opt.startswith("--")
    }
    assert sorted(flags) == sorted(options), f"docs/cli.md's row for `{name}` vs its options"
    for flag, param in options.items():
        if isinstance(param.type, click.Choice):
            shown = flags[flag].split("\\|")
            assert sorted(shown) == sorted(map(str, param.type.choices)), f"`{name} {flag}` choices"
    arguments = re.findall(r"\b[A-Z][A-Z_]*\b", _FLAG.sub("", usage))
    # An argument with a metavar ("[CORPUS] PAGE") is documented as the words of its metavar.
    expected = [
        word
        for param in command.params
        if isinstance(param, click.Argument)
        for word in (re.findall(r"\b[A-Z][A-Z_]*\b", param.metavar) if param.metavar else [param.name])
    ]
    assert len(arguments) == len(expected), f"`{name}`: documented {arguments}, takes {expected}"
