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
    """One of our errors, printed plainly; the exit code is its family's (2 caller mistake, 1 fault)."""

    def __init__(self, error: HallouminateError) -> None:
        super().__init__(error.message)
        self.error = error

    @property  # click reads ``exit_code`` from the instance; its class default is 1
    def exit_code(self) -> int:  # type: ignore[override]
        return self.error.family.exit_code


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
