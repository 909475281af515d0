"""Find the daemon, start one when none answers, and replace one of another version.

The daemon is started in its own session so that an MCP host killing the shim's process group does not
take the daemon with it. Two clients spawning at once is harmless: the daemon's lock lets one win and the
other exits, and both clients then connect to the winner.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hallouminate import __version__, xdg
from hallouminate.client.connection import DaemonConnection, DaemonUnavailable, unavailable
from hallouminate.errors import HallouminateError
from hallouminate.protocol import PROTOCOL_VERSION
from hallouminate.socket_guard import directory_problem

SPAWN_TIMEOUT = 60.0
_POLL = 0.05
# The longest path a Unix socket can be bound to (sun_path, its terminating NUL excluded).
SOCKET_PATH_MAX_BYTES = 107 if sys.platform.startswith("linux") else 103
_ELSEWHERE = "set HALLOUMINATE_SOCKET to a path in a private directory of yours"


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


def socket_problem(socket: Path) -> str | None:
    """Why no daemon could ever listen on ``socket`` (cause and fix), or None when nothing stops one.

    Checked before spawning, when nothing answered: a daemon started on such a path could only fail, and
    the failure read as a bare OSError.
    """
    size = len(os.fsencode(socket))
    if size > SOCKET_PATH_MAX_BYTES:
        return (
            f"the daemon socket path {socket} is {size} bytes long, more than the "
            f"{SOCKET_PATH_MAX_BYTES} a Unix socket path may have; set HALLOUMINATE_SOCKET to a shorter path"
        )
    try:
        info = os.lstat(socket)
    except FileNotFoundError:
        info = None
    except OSError as exc:  # ENOTDIR: a parent is a file; EACCES: a parent we may not search
        return (
            _parent_problem(socket)
            or f"the daemon socket path {socket} cannot be used: {exc.strerror}; {_ELSEWHERE}"
        )
    if info is not None and not stat.S_ISSOCK(info.st_mode):
        return (
            f"{socket} exists and is not a socket, so no daemon can listen there (hallouminate replaces only "
            f"a socket left by a dead daemon, never another file); move it away or {_ELSEWHERE}"
        )
    return _parent_problem(socket)


def _parent_problem(socket: Path) -> str | None:
    # The nearest existing ancestor must be a directory: the daemon creates the rest.
    for parent in socket.parents:
        try:
            info = os.stat(parent)
        except (FileNotFoundError, NotADirectoryError):  # missing, or below the file found further up
            continue
        except OSError as exc:
            return f"the daemon socket directory {parent} cannot be used: {exc.strerror}; {_ELSEWHERE}"
        if not stat.S_ISDIR(info.st_mode):
            return (
                f"{parent} is not a directory, so the daemon socket {socket} cannot be created under it; "
                f"{_ELSEWHERE}"
            )
        # Refused here, before spawning: a daemon would refuse it too, after its spawn log was left there.
        if parent == socket.parent and (problem := directory_problem(parent)) is not None:
            return f"could not start the daemon on {socket}: {problem}"
        return None
    return None


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
    """A connection to a daemon of our own version, starting one if needed.

    Every way of failing raises ``DaemonUnavailable`` (retryable; ``data`` names the socket and the log).
    """
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
            raise unavailable(
                path,
                f"a daemon of version {info.get('version')!r} on {path} did not stop; "
                f"stop it with `hallouminate daemon stop` and retry",
            )
    problem = socket_problem(path)
    if problem is not None:
        raise unavailable(path, problem)
    if not spawn:
        raise unavailable(path, f"no daemon is running on {path}; start one with `hallouminate daemon run`")
    try:
        proc = spawn_daemon(path)
    except OSError as exc:  # the directory or the spawn log cannot be created, the interpreter is gone
        raise unavailable(
            path, f"could not start the daemon on {path}: {exc}; fix that, or {_ELSEWHERE}"
        ) from None
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
    raise unavailable(
        path,
        f"could not start the daemon on {path}"
        + (f": {detail}" if detail else "")
        + f"; fix what its early output ({spawn_log_for(path)}) or its log says, and retry",
    )
