"""The daemon's TCP listener: uvicorn serving ``http.app`` on the daemon's own event loop, and the
endpoint file (``<socket>.endpoint``: the base URL, for scripts) written while it listens."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
from dataclasses import replace
from pathlib import Path

import uvicorn

from hallouminate.config.types import HttpSettings
from hallouminate.errors import Conflict, FilesystemFault
from hallouminate.http.app import build_app
from hallouminate.http.context import HttpContext
from hallouminate.http.endpoint import endpoint_file_for
from hallouminate.http.local import Dispatcher

log = logging.getLogger("hallouminate.http")


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
        # What it serves (the port it bound filled in), and from which root, while it listens.
        self.settings: HttpSettings | None = None
        self.root: Path | None = None

    def serves(self, settings: HttpSettings, root: Path) -> bool:
        """Whether it listens with ``settings`` already (no port asked for: the one it has will do)."""
        if self.settings is None or self.root != root:
            return False
        return replace(settings, port=settings.port or self.settings.port) == self.settings

    async def start(self, settings: HttpSettings, root: Path) -> str:
        sock = _bound_socket(settings)
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
        self.settings, self.root = replace(settings, port=port), root
        tmp = self._endpoint.with_name(self._endpoint.name + ".tmp")
        tmp.write_text(self.url + "\n")
        os.replace(tmp, self._endpoint)
        log.info("HTTP listening on %s", self.url)
        return self.url

    async def stop(self) -> None:
        # Only its own URL: a listener started in its place (`port set`) may have written the file already.
        with contextlib.suppress(OSError):
            if self._endpoint.read_text().strip() == self.url:
                self._endpoint.unlink()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await self._task
        self._server = self._task = None
        if self.url is not None:
            log.info("HTTP listener on %s stopped", self.url)
        self.url = None
        self.settings = self.root = None


def _bound_socket(settings: HttpSettings) -> socket.socket:
    """A listening socket on ``settings``' address; a port in use or an address not on this machine is
    an error saying which and what to do."""
    port = settings.port or 0
    sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((settings.host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        where = f"{settings.host} port {port}"
        if exc.errno == errno.EADDRINUSE:
            raise Conflict(
                f"cannot listen on {where}: the port is already in use by another program; choose another "
                "with `hallouminate port set N`, or `hallouminate port clear` for a random free port",
                {"host": settings.host, "port": port, "problem": "port_in_use"},
            ) from exc
        if exc.errno == errno.EACCES:
            raise Conflict(
                f"cannot listen on {where}: permission denied (ports below 1024 need privileges); choose a "
                "port from 1024 with `hallouminate port set N`",
                {"host": settings.host, "port": port, "problem": "port_forbidden"},
            ) from exc
        raise FilesystemFault(
            f"cannot listen on {where}: {exc.strerror or exc}; check [http] host (an address of this "
            "machine) in the baseline config",
            {"host": settings.host, "port": port},
        ) from exc
    return sock
