"""Start the MCP shim fast: hand this process's stdio to a warm shim host when one runs.

Importing the MCP SDK costs ~1.5 s of CPU on a small machine, paid again by every `hallouminate serve` an
MCP host launches. A warm host (`hallouminate.shim.host`) has paid it once; it forks a shim per launch
and that shim speaks MCP on our own stdin/stdout, passed over a Unix socket (SCM_RIGHTS). This module is
the launching side: stdlib only, so it starts in a few tens of milliseconds. See docs/adr/0014.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from hallouminate import __version__, testing_hooks, xdg
from hallouminate.socket_guard import directory_problem

# 2: the hello names the face the shim serves (serve --dialect, --kb-path).
HOST_PROTOCOL = 2
MAX_HELLO = 1 << 20
HOST_START_TIMEOUT = 20.0
_POLL = 0.02
# The source files whose code a shim runs: a host started from other code must not serve this launch.
_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def host_socket_for(daemon_socket: Path) -> Path:
    return daemon_socket.with_name(daemon_socket.name + ".shim")


def fingerprint() -> str:
    """Who may serve whom: same version, interpreter, package location and source files."""
    newest = 0
    count = 0
    for dirpath, _dirs, files in os.walk(_SOURCE_ROOT):
        for name in files:
            if name.endswith(".py"):
                count += 1
                with contextlib.suppress(OSError):
                    newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
    test_salt = testing_hooks.shim_fingerprint_salt()
    return f"{__version__}|{sys.executable}|{_SOURCE_ROOT}|{count}|{newest}|{test_salt}"


def warm_start_disabled() -> bool:
    return os.environ.get("HALLOUMINATE_SHIM_HOST", "1").strip().lower() in {"0", "false", "no", "off"}


def _recv_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(256)
        if not chunk:
            break
        data += chunk
    return data


def hand_off(host_socket: Path, face: dict[str, str] | None = None) -> int | None:
    """Give our stdio to the host's shim and wait for it; its exit code, or None if no host took it.

    ``face``: which face the shim serves (``dialect``: hallouminate, grooveseek or kuradb, and ``kb_path``
    for GrooveSeek's), as ``serve``'s flags said; absent: ours."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(host_socket))
    except OSError:
        conn.close()
        return None
    hello = json.dumps(
        {
            "protocol": HOST_PROTOCOL,
            "fingerprint": fingerprint(),
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "face": face or {},
        }
    ).encode()
    try:
        socket.send_fds(conn, [struct.pack(">I", len(hello)) + hello], [0, 1, 2])
        reply = _recv_line(conn)
    except OSError:
        conn.close()
        return None
    if not reply.startswith(b"ok "):
        conn.close()  # refused (another version's host): it exits, and we start a fresh one
        return None
    # The shim now runs in the host's child on our stdio. We only wait for it; when we are killed our
    # end of this socket closes and the child stops too, so the MCP host still controls its lifetime.
    status = _recv_line(conn)
    conn.close()
    if status.startswith(b"exit "):
        with contextlib.suppress(ValueError):
            return int(status.split()[1])
    return 1


def _lock_is_free(host_socket: Path) -> bool:
    try:
        fd = os.open(host_socket.with_name(host_socket.name + ".lock"), os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def spawn_host(daemon_socket: Path) -> subprocess.Popen[bytes]:
    daemon_socket.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ)
    env["HALLOUMINATE_SOCKET"] = str(daemon_socket)
    log = daemon_socket.with_name(daemon_socket.name + ".shim.log")
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hallouminate.shim.host"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


def launch(daemon_socket: Path | None = None, face: dict[str, str] | None = None) -> int | None:
    """Run this launch in a warm shim host, starting one if needed; None means: run the shim here.

    ``face``: ``{"dialect": ..., "kb_path": ...}`` for the forked shim (see ``hand_off``)."""
    if warm_start_disabled():
        return None
    path = host_socket_for(daemon_socket or xdg.socket_path())
    code = hand_off(path, face)
    if code is not None:
        return code
    if directory_problem(path.parent) is not None:
        # No host could listen there, and its log would be left in a directory that is not ours: the
        # shim runs here and answers each call with the cause.
        return None
    try:
        proc = spawn_host(daemon_socket or xdg.socket_path())
    except OSError:
        # An unusable socket path (its parent a file, no permission): the shim runs here and answers each
        # call with the cause (-32603, retryable) instead of `serve` dying before MCP starts.
        return None
    deadline = time.monotonic() + HOST_START_TIMEOUT
    while time.monotonic() < deadline:
        code = hand_off(path, face)
        if code is not None:
            return code
        # Our host exiting is fine when another launcher's host won the lock (it answers soon); with
        # the lock free nobody is coming (it failed to start: see <socket>.shim.log), so run here.
        if proc.poll() is not None and _lock_is_free(path):
            return None
        time.sleep(_POLL)
    return None
