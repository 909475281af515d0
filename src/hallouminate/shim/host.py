"""The warm shim host: it imports the MCP SDK once, then forks one shim per `hallouminate serve` launch.

The launcher (`hallouminate.shim.launcher`) passes its stdin, stdout and stderr over the host's socket;
the forked child adopts them, the launcher's working directory and environment, and runs the ordinary
stdio shim. The host itself stays single-threaded (fork is only safe that way), owns no state beyond its
socket, and exits after the daemon's idle time with no shim running. See docs/adr/0014.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from hallouminate import xdg
from hallouminate.errors import HallouminateError
from hallouminate.shim.launcher import HOST_PROTOCOL, MAX_HELLO, fingerprint, host_socket_for
from hallouminate.socket_guard import SocketGuard, lock_path_for

log = logging.getLogger("hallouminate.shim.host")
DEFAULT_IDLE_SECS = 900.0
HELLO_TIMEOUT = 2.0  # same-uid peers only; a slow one holds up other launches this long


def _idle_secs() -> float:
    try:
        from hallouminate.config import load_baseline

        return float(load_baseline().settings.idle_exit_secs)
    except (HallouminateError, OSError, ValueError):
        return DEFAULT_IDLE_SECS


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]  # (pid, uid, gid)
    return uid


def _read_hello(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    conn.settimeout(HELLO_TIMEOUT)
    data, fds, _flags, _addr = socket.recv_fds(conn, MAX_HELLO + 4, 3)
    try:
        if len(fds) != 3 or len(data) < 4:
            raise ValueError("expected a length-prefixed hello with three descriptors")
        (size,) = struct.unpack(">I", data[:4])
        if size > MAX_HELLO:
            raise ValueError("hello too large")
        body = data[4:]
        while len(body) < size:
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise ValueError("hello truncated")
            body += chunk
        hello = json.loads(body)
        if not isinstance(hello, dict):
            raise ValueError("hello is not an object")
        return hello, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _run_child(conn: socket.socket, hello: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become the launcher's shim. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in hello.get("env", {}).items()})
        with contextlib.suppress(OSError):
            os.chdir(str(hello.get("cwd", "/")))
        conn.settimeout(None)
        conn.sendall(f"ok {os.getpid()}\n".encode())

        def watch_launcher() -> None:
            # The launcher is what the MCP host controls: when it dies, this shim must go too.
            with contextlib.suppress(OSError):
                conn.recv(1)
            os._exit(0)

        threading.Thread(target=watch_launcher, daemon=True).start()
        from hallouminate.shim.server import serve

        face = hello.get("face") or {}
        kb_path = face.get("kb_path")
        code = anyio.run(
            serve, None, str(face.get("dialect") or "hallouminate"), Path(kb_path) if kb_path else None
        )
    except BaseException:
        log.exception("shim failed")
    finally:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
            conn.sendall(f"exit {code}\n".encode())
        os._exit(code)


async def _rehearse() -> None:
    """One in-memory MCP session (initialize, tools/list) so first-use work happens before any fork."""
    from mcp import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    from hallouminate.protocol.validation import validate_args
    from hallouminate.shim.server import DIALECTS, FACES, build_server

    # Every face (the knowledge base path only names GrooveSeek's scope: nothing is called).
    built = [build_server(dialect=dialect, kb_path=Path("/")) for dialect in DIALECTS]
    for server, link in built:
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(server.run, *server_streams, server.create_initialization_options())
            async with ClientSession(*client_streams) as session:
                await session.initialize()
                await session.list_tools()
            tg.cancel_scope.cancel()
        await link.close()
    schemas = [(tool.name, tool.input_schema) for face in FACES.values() for tool in face.tools.values()]
    for name, schema in schemas:  # compile every argument validator once
        with contextlib.suppress(HallouminateError):
            validate_args(schema, {}, name)


class DaemonWatch:
    """Whether the daemon this host serves is alive, from the pid in its lock file (no connection: one
    would keep it from idling out, and no lock probe: one could make a starting daemon think it is not
    alone). The host lives with the daemon: it exits once a daemon it saw has stopped, unless shims still
    run (they start a new daemon on their next call), and says so in its log."""

    def __init__(self, daemon_socket: Path) -> None:
        self.socket = daemon_socket
        self.lock = lock_path_for(daemon_socket)
        self.seen: int | None = None  # the pid of the last daemon seen alive
        self.waiting_for_shims = False

    def _alive_pid(self) -> int | None:
        try:
            pid = int(self.lock.read_text().strip())
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(") ", 1)[1][0] == "Z":
                    return None
        except (OSError, ValueError, IndexError):
            return None
        return pid

    def should_exit(self, shims: set[int]) -> bool:
        pid = self._alive_pid()
        if pid is not None:
            self.seen = pid
            self.waiting_for_shims = False
            return False
        if self.seen is None:
            return False  # no daemon started yet (an MCP `initialize` alone starts none)
        if not shims:
            log.info("the daemon (pid %d) on %s has stopped: exiting with it", self.seen, self.socket)
            return True
        if not self.waiting_for_shims:
            log.info(
                "the daemon (pid %d) on %s has stopped, but %d shim(s) still run (pids %s): staying until "
                "they end (each starts a new daemon on its next call)",
                self.seen,
                self.socket,
                len(shims),
                ", ".join(str(pid) for pid in sorted(shims)),
            )
            self.waiting_for_shims = True
        return False


def run(daemon_socket: Path | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    daemon_socket = daemon_socket or xdg.socket_path()
    path = host_socket_for(daemon_socket)
    guard = SocketGuard(path, role="shim host")
    try:
        listener = guard.acquire()
    except HallouminateError as exc:
        log.info("not starting: %s", exc.message)
        return 0
    try:
        return _serve(guard, listener, path, DaemonWatch(daemon_socket))
    except Exception:
        # Launchers waiting on us see the lock freed and run their shim themselves.
        log.exception("shim host failed")
        return 1
    finally:
        guard.release()


def _serve(guard: SocketGuard, listener: socket.socket, path: Path, daemon: DaemonWatch) -> int:
    mine = fingerprint()
    # A plain SIGTERM unwinds through `finally`, so the socket file goes with us.
    signal.signal(signal.SIGTERM, lambda _sig, _frame: sys.exit(0))
    # Warm up: everything a shim imports and builds on first use, paid once here, not once per launch.
    anyio.run(_rehearse)
    if threading.active_count() != 1:
        log.warning("threads alive before forking shims: %s", threading.enumerate())
    idle_secs = _idle_secs()
    listener.setblocking(True)
    children: set[int] = set()
    last_busy = time.monotonic()
    log.info("shim host on %s (pid %d), idle exit after %g s", path, os.getpid(), idle_secs)
    while True:
        while children:
            pid, _status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            children.discard(pid)
        if children:
            last_busy = time.monotonic()
        elif time.monotonic() - last_busy > idle_secs:
            log.info("idle for %g s: exiting", idle_secs)
            return 0
        if daemon.should_exit(children):
            return 0
        ready, _, _ = select.select([listener], [], [], 0.5)
        if not ready:
            continue
        conn, _addr = listener.accept()
        try:
            if _peer_uid(conn) != os.getuid():
                conn.close()
                continue
            hello, fds = _read_hello(conn)
        except (OSError, ValueError) as exc:
            log.info("dropped a launch: %s", exc)
            conn.close()
            continue
        if hello.get("protocol") != HOST_PROTOCOL or hello.get("fingerprint") != mine:
            # Code changed under us (an upgrade, an edit): step aside first so the launcher's fresh
            # host can take the lock at once, then say no.
            guard.release()
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                conn.sendall(b"no stale\n")
            conn.close()
            log.info("a launch of other code arrived: exiting")
            return 0
        pid = os.fork()
        if pid == 0:
            # Our copy of the lock must not outlive the host, or no new host could start.
            guard.forget()
            _run_child(conn, hello, fds)
        for fd in fds:
            os.close(fd)
        conn.close()
        children.add(pid)
        last_busy = time.monotonic()


if __name__ == "__main__":
    sys.exit(run())
