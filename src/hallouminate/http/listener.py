"""The daemon's TCP listener: uvicorn serving ``http.app`` on the daemon's own event loop, and the
endpoint file (``<socket>.endpoint``: the base URL, for scripts) written while it listens."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path

import uvicorn

from hallouminate.config.types import HttpSettings
from hallouminate.http.app import build_app
from hallouminate.http.context import HttpContext
from hallouminate.http.local import Dispatcher

log = logging.getLogger("hallouminate.http")


def endpoint_file_for(daemon_socket: Path) -> Path:
    return daemon_socket.with_name(daemon_socket.name + ".endpoint")


class _Server(uvicorn.Server):
    # The daemon owns SIGTERM/SIGINT (daemon/server.py); uvicorn must not take them over.
    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[no-untyped-def]
        yield


class HttpListener:
    """Start, stop and restart the listener; ``url`` is its base URL while it listens."""

    def __init__(self, dispatcher: Dispatcher, daemon_socket: Path) -> None:
        self._dispatcher = dispatcher
        self._endpoint = endpoint_file_for(daemon_socket)
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.url: str | None = None

    async def start(self, settings: HttpSettings, root: Path) -> str:
        sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((settings.host, settings.port or 0))
        sock.listen(128)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        app = build_app(HttpContext(self._dispatcher, settings, root))
        from hallouminate.http.connection import GuardedH11Protocol

        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
            # Read deadlines and a connection cap (slowloris): http/connection.py.
            http=GuardedH11Protocol,
        )
        self._server = _Server(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises why it could not start
                raise RuntimeError("the HTTP listener stopped before it started")
            await asyncio.sleep(0.01)
        self.url = f"http://{host}:{port}"
        tmp = self._endpoint.with_name(self._endpoint.name + ".tmp")
        tmp.write_text(self.url + "\n")
        os.replace(tmp, self._endpoint)
        log.info("HTTP listening on %s", self.url)
        return self.url

    async def stop(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._endpoint.unlink()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await self._task
        self._server = self._task = None
        if self.url is not None:
            log.info("HTTP listener on %s stopped", self.url)
        self.url = None
