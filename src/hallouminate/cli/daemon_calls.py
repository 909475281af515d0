"""Run one daemon operation from a synchronous CLI command, with errors turned into exit codes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from hallouminate.errors import HallouminateError
from hallouminate.protocol.cwd import canonical_cwd

if TYPE_CHECKING:
    from hallouminate.protocol.results import ProgressEvent


class CliFailure(click.ClickException):
    """An error from the daemon, printed plainly; exit 2 for caller mistakes, 1 for faults."""

    def __init__(self, error: HallouminateError) -> None:
        super().__init__(error.message)
        # click declares exit_code a class variable: this instance's own value shadows it.
        vars(self)["exit_code"] = 2 if error.kind == "invalid_params" else 1


def call_daemon(
    op: str,
    args: dict[str, Any] | None = None,
    *,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    cwd: str | None = None,
    spawn: bool = True,
) -> Any:
    """The operation's result as the daemon sent it: annotate the variable it goes to with its type
    from ``protocol/results.py``."""
    from hallouminate.client import connect_or_spawn

    async def run() -> Any:
        where = str(canonical_cwd(cwd or os.getcwd()))
        conn = await connect_or_spawn(spawn=spawn)
        try:
            return await conn.call(op, where, args or {}, on_progress=on_progress)
        finally:
            await conn.close()

    try:
        return asyncio.run(run())
    except HallouminateError as exc:
        raise CliFailure(exc) from None
    except KeyboardInterrupt:
        sys.exit(130)
