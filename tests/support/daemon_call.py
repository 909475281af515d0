"""One request to a sandbox's daemon over its socket, and the shape of a ``ground`` answer the read-only
and team-store tests compare (each doc's path and chunks' first lines; the scores)."""

from __future__ import annotations

import asyncio
from typing import Any

from hallouminate.client.connection import DaemonConnection
from support.sandbox import Sandbox

# Bounds a hang only: never a speed figure.
DEADLINE_SECS = 120.0


async def _call(box: Sandbox, op: str, cwd: str | None = None, args: dict[str, Any] | None = None) -> Any:
    async with await DaemonConnection.open(box.socket) as conn:
        return await conn.call(op, cwd, args or {}, timeout=DEADLINE_SECS)


def call(box: Sandbox, op: str, cwd: str | None = None, args: dict[str, Any] | None = None) -> Any:
    return asyncio.run(_call(box, op, cwd, args))


def ranked(result: dict[str, Any]) -> list[tuple[str, list[int]]]:
    """Each doc's path and its chunks' first lines, best first."""
    return [(doc["path"], [c["line_start"] for c in doc["chunks"]]) for doc in result["docs"]]


def scores(result: dict[str, Any]) -> list[float]:
    return [c["score"] for doc in result["docs"] for c in doc["chunks"]]
