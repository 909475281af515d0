"""Find the daemon, start one when none answers, and replace one of another version.

The daemon is started in its own session so that an MCP host killing the shim's process group does not
take the daemon with it. Two clients spawning at once is harmless: the daemon's lock lets one win and the
other exits, and both clients then connect to the winner.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hallouminate import __version__, xdg
from hallouminate.client.connection import DaemonConnection, DaemonUnavailable
from hallouminate.errors import HallouminateError, Internal
from hallouminate.protocol import PROTOCOL_VERSION

SPAWN_TIMEOUT = 60.0
_POLL = 0.05


def lock_path_for(socket: Path) -> Path:
    return socket.with_name(socket.name + ".lock")


def spawn_log_for(socket: Path) -> Path:
    return socket.with_name(socket.name + ".spawn.log")


def is_current(info: Any) -> bool:
    return (
        isinstance(info, dict)
        and info.get("version") == __version__
        and info.get("protocol") == PROTOCOL_VERSION
    )


async def _try_connect(socket: Path) -> tuple[DaemonConnection, dict[str, Any]] | None:
    try:
        conn = await DaemonConnection.open(socket)
    except DaemonUnavailable:
        return None
    try:
        info = await conn.call("ping", timeout=10.0)
    except HallouminateError:
        await conn.close()
        return None
    return conn, info if isinstance(info, dict) else {}


def lock_is_free(socket: Path) -> bool:
    """True when no daemon holds the socket's lock (probe by taking and dropping it)."""
    try:
        fd = os.open(lock_path_for(socket), os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing drops the probe's lock too
    return True


async def wait_for_exit(socket: Path, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_is_free(socket):
            return True
        await asyncio.sleep(_POLL)
    return False


async def stop_daemon(socket: Path | None = None, timeout: float = 15.0) -> bool:
    """Ask the daemon on ``socket`` to drain and exit; True if one was running and has stopped."""
    path = socket or xdg.socket_path()
    found = await _try_connect(path)
    if found is None:
        return False
    conn, _ = found
    try:
        await conn.call("shutdown", timeout=timeout)
    except HallouminateError:
        pass  # it may hang up before answering; the lock below is the real signal
    finally:
        await conn.close()
    return await wait_for_exit(path, timeout)


def spawn_daemon(socket: Path) -> subprocess.Popen[bytes]:
    socket.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ)
    env["HALLOUMINATE_SOCKET"] = str(socket)
    # Early start-up failures land here, before the daemon's own log is set up.
    with open(spawn_log_for(socket), "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "hallouminate", "daemon", "run"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


async def connect_or_spawn(
    socket: Path | None = None, *, spawn: bool = True, timeout: float = SPAWN_TIMEOUT
) -> DaemonConnection:
    """A connection to a daemon of our own version, starting one if needed."""
    path = socket or xdg.socket_path()
    found = await _try_connect(path)
    if found is not None:
        conn, info = found
        if is_current(info):
            return conn
        # A daemon of another version would answer with other semantics: replace it.
        try:
            await conn.call("shutdown", timeout=15.0)
        except HallouminateError:
            pass
        finally:
            await conn.close()
        if not await wait_for_exit(path):
            raise Internal(
                f"a daemon of version {info.get('version')!r} on {path} did not stop; "
                f"stop it with `hallouminate daemon stop` and retry",
                {"socket": str(path), "retryable": True},
            )
    if not spawn:
        raise DaemonUnavailable(
            f"no daemon is running on {path}; start one with `hallouminate daemon run`",
            {"socket": str(path), "retryable": True},
        )
    proc = spawn_daemon(path)
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    while time.monotonic() < deadline:
        found = await _try_connect(path)
        if found is not None:
            conn, info = found
            if is_current(info):
                return conn
            await conn.close()
        if proc.poll() is not None and exited_at is None:
            exited_at = time.monotonic()
        # Our child exiting is fine when another client's daemon won the lock; give that one time to bind.
        if exited_at is not None and lock_is_free(path) and time.monotonic() - exited_at > 2.0:
            break
        await asyncio.sleep(_POLL)
    detail = _tail(spawn_log_for(path))
    raise Internal(
        f"could not start the daemon on {path}"
        + (f": {detail}" if detail else "")
        + f"; see {spawn_log_for(path)} and {xdg.log_file()}",
        {"socket": str(path), "retryable": True},
    )
