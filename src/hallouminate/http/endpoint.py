"""The endpoint file (``<socket>.endpoint``): the listener's base URL while it listens, for scripts.

Stdlib only: every daemon start clears a stale one, and must not pay for importing the HTTP stack (the MCP
SDK, Starlette, uvicorn: ~2 s of CPU) unless ``[http] enabled``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def endpoint_file_for(daemon_socket: Path) -> Path:
    return daemon_socket.with_name(daemon_socket.name + ".endpoint")


def remove_stale_endpoint(daemon_socket: Path) -> None:
    """At the daemon's start (it holds the socket's lock, so no other daemon listens): an endpoint file
    left by a daemon that was killed names a dead URL."""
    with contextlib.suppress(FileNotFoundError):
        endpoint_file_for(daemon_socket).unlink()
