"""How every command reports an error: text on stderr, or with ``--format json`` one JSON document on
stdout, ``{"error": {"type", "message", "data"}}`` (docs/cli.md). The exit code is the same either way.

The root group (``JsonErrorGroup``) decides once, for every command, so no command has its own error
printer; it reads ``--format`` from the command line itself, because a bad option can be refused before
click has parsed ``--format`` (``--top-files 0 --format json``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from hallouminate.errors import HallouminateError, public_data
from hallouminate.render.problems import render_problem

# The ``type`` of an error that click itself raised (a bad option, a missing argument).
USAGE_TYPE = "usage"


def error_document(error: click.ClickException) -> dict[str, Any]:
    """``{"error": {"type", "message", "data"}}``: our errors keep their wire ``type`` and ``data``
    (docs/protocol.md); click's own are ``type: "usage"`` with the option's flag in ``data.param``."""
    cause = getattr(error, "error", None)
    if isinstance(cause, HallouminateError):
        return {"error": {"type": cause.wire_type, "message": cause.message, "data": public_data(cause)}}
    data: dict[str, Any] = {}
    param = getattr(error, "param", None)
    if isinstance(param, click.Parameter):
        data["param"] = _flag(param)
    return {"error": {"type": USAGE_TYPE, "message": error.format_message(), "data": data}}


def _flag(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        longest = max(param.opts, key=len)
        return longest
    return (param.human_readable_name or param.name or "").upper()


def json_requested(argv: Sequence[str]) -> bool:
    """Whether the command line asks for ``--format json`` (or ``--json``, its short form where a command
    offers it; options end at ``--``)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return False
        if arg in ("--format=json", "--json") or (
            arg == "--format" and i + 1 < len(argv) and argv[i + 1] == "json"
        ):
            return True
    return False


class JsonError(click.ClickException):
    """An error shown as the JSON document on stdout, with the original's exit code."""

    def __init__(self, original: click.ClickException) -> None:
        super().__init__(original.format_message())
        self.original = original

    @property  # click reads ``exit_code`` from the instance: the original's
    def exit_code(self) -> int:  # type: ignore[override]
        return self.original.exit_code

    def show(self, file: Any = None) -> None:
        click.echo(json.dumps(error_document(self.original), indent=2))


class JsonErrorGroup(click.Group):
    """The root group: an error of a command run with ``--format json`` is printed as JSON."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        argv = list(args)  # parsing consumes ``args``
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta["hallouminate.argv"] = argv
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except JsonError:
            raise
        except click.ClickException as exc:
            if json_requested(ctx.meta.get("hallouminate.argv", [])):
                raise JsonError(exc) from None
            raise


def render_status(status: Any) -> str:
    """``daemon status`` as text: one ``key: value`` line per field, lists and maps as indented lines
    (never a Python repr)."""
    lines = []
    for key, value in status.items():
        if key == "file_problems":  # named, not counted: each file, what is wrong, what the indexer did
            lines.append(f"{key}:" if value else f"{key}: none")
            for corpus, problems in value.items():
                lines.append(f"  {corpus}:")
                lines.extend(f"    {render_problem(problem)}" for problem in problems)
        elif isinstance(value, dict):
            lines.append(f"{key}:" if value else f"{key}: none")
            lines.extend(f"  {name}: {_scalar(item)}" for name, item in value.items())
        elif isinstance(value, list):
            lines.append(f"{key}:" if value else f"{key}: none")
            lines.extend(f"  {_scalar(item)}" for item in value)
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return "\n".join(lines)


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
