"""Run one daemon operation from a synchronous CLI command, with errors turned into exit codes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from hallouminate.errors import HallouminateError
from hallouminate.protocol.cwd import canonical_cwd


class CliFailure(click.ClickException):
    """An error from the daemon, printed plainly; exit 2 for caller mistakes, 1 for faults."""

    def __init__(self, error: HallouminateError) -> None:
        super().__init__(error.message)
        self.exit_code = 2 if error.kind == "invalid_params" else 1


def call_daemon(
    op: str,
    args: dict[str, Any] | None = None,
    *,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    cwd: str | None = None,
    spawn: bool = True,
) -> Any:
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
