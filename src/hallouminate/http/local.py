"""The daemon's own dispatcher as a ``shim.server.Link``: MCP served inside the daemon (the HTTP
transport) sends each call through the same envelope, argument checks and error mapping as a socket
request, without a socket."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any, Protocol

from hallouminate.client.connection import ProgressCallback
from hallouminate.errors import from_wire
from hallouminate.protocol import request_message
from hallouminate.protocol.messages import Answer
from hallouminate.protocol.results import ProgressEvent


class Dispatcher(Protocol):
    """What the HTTP transport needs of the daemon: ``daemon.dispatch.Dispatcher.handle`` (declared here so
    that the daemon, which starts the listener, is not imported back)."""

    async def handle(self, message: Any, emit: Callable[[str, ProgressEvent], None]) -> Answer: ...


class LocalConnection:
    """``DaemonConnection.call`` answered by ``dispatcher`` in this process."""

    closed = False

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._ids = itertools.count(1)

    async def call(
        self,
        op: str,
        cwd: str | None = None,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        kb: bool = False,
    ) -> Any:
        loop = asyncio.get_running_loop()
        message = request_message(next(self._ids), op, cwd, args, stream=on_progress is not None, kb=kb)

        def emit(event: str, data: ProgressEvent) -> None:
            # Called from worker threads, as the socket server's emit is.
            if on_progress is not None:
                loop.call_soon_threadsafe(on_progress, data)

        answer = await asyncio.wait_for(self._dispatcher.handle(message, emit), timeout)
        if answer.get("ok"):
            return answer.get("result")
        error = answer.get("error")
        raise from_wire(error if isinstance(error, dict) else {})


class LocalLink:
    """``shim.server.DaemonLink``'s interface over ``LocalConnection``: nothing to reconnect or respawn."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._conn = LocalConnection(dispatcher)

    async def connection(self) -> LocalConnection:
        return self._conn

    async def call_op(
        self,
        op: str,
        cwd: str,
        args: dict[str, Any],
        *,
        idempotent: bool,
        kb: bool = False,
        session: Any = None,
    ) -> Any:
        if op == "index" and session is not None:
            from hallouminate.shim.server import McpProgress

            async with McpProgress(session) as progress:
                return await self._conn.call(op, cwd, args, on_progress=progress, kb=kb)
        return await self._conn.call(op, cwd, args, kb=kb)

    async def close(self) -> None:
        return None
