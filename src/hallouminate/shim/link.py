"""How a face's MCP server reaches the daemon: the protocols both transports implement."""

from __future__ import annotations

from typing import Any, Protocol

from hallouminate.client.connection import ProgressCallback


class Calls(Protocol):
    """One way of sending daemon operations: a socket connection (``client.DaemonConnection``), or the
    daemon's own dispatcher when the server runs inside it (``http/local.py``, the HTTP transport)."""

    async def call(
        self,
        op: str,
        cwd: str | None = None,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        kb: bool = False,
    ) -> Any: ...


class Link(Protocol):
    """What a face's server needs of the daemon: the stdio shim's ``DaemonLink`` (a socket, the daemon
    respawned on demand), or ``http.local.LocalLink`` inside the daemon. One server definition serves both
    transports (docs/adr/0046)."""

    async def connection(self) -> Calls: ...

    async def call_op(
        self,
        op: str,
        cwd: str,
        args: dict[str, Any],
        *,
        idempotent: bool,
        kb: bool = False,
        session: Any = None,
    ) -> Any: ...

    async def close(self) -> None: ...
