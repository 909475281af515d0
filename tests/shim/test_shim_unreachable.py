"""Every way the daemon cannot be reached answers -32603 with ``data: {retryable, socket, log}`` and a message
naming the cause and the fix (docs/mcp.md), through a real MCP client talking to ``hallouminate serve``.

Before: an unusable socket path gave a bare ``FileExistsError`` with ``data: null`` (or, with the warm shim
host, killed ``serve`` before MCP started), and an existing file at the socket path was deleted by the
daemon that replaced it.
"""

from __future__ import annotations

import os
import socket as socketlib
import time
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import INTERNAL_ERROR

from hallouminate.testing_hooks import WRITE_FAULTS as FAULTS_ENV
from support.sandbox import Sandbox, daemons_serving, mcp_session, pid_alive


def _daemon_log(sandbox: Sandbox) -> str:
    return str(Path(sandbox.env["XDG_STATE_HOME"]) / "hallouminate" / "daemon.log")


def _use_socket(sandbox: Sandbox, path: Path) -> None:
    # Teardown stops whatever was started for the sandbox's socket: point it at the one under test.
    sandbox.socket = path
    sandbox.env["HALLOUMINATE_SOCKET"] = str(path)


async def _unreachable(sandbox: Sandbox, cwd: Path) -> MCPError:
    async with mcp_session(sandbox) as session:
        with pytest.raises(MCPError) as info:
            await session.call_tool("list_corpora", {"cwd": str(cwd)})
    return info.value


def _check(error: MCPError, sandbox: Sandbox, *fragments: str) -> None:
    assert error.code == INTERNAL_ERROR
    assert error.data == {"retryable": True, "socket": str(sandbox.socket), "log": _daemon_log(sandbox)}
    # The message alone is enough for a user: the cause, the fix, where the socket and the log are.
    for fragment in (*fragments, str(sandbox.socket), _daemon_log(sandbox)):
        assert fragment in error.message, error.message
    assert "Traceback" not in error.message and "Errno" not in error.message


async def test_a_socket_path_under_a_file(sandbox: Sandbox) -> None:
    a_file = sandbox.root / "not-a-dir"
    a_file.write_text("mine\n")
    _use_socket(sandbox, a_file / "d.sock")
    error = await _unreachable(sandbox, sandbox.root)
    _check(error, sandbox, f"{a_file} is not a directory", "set HALLOUMINATE_SOCKET")
    assert a_file.read_text() == "mine\n"


async def test_a_socket_path_that_is_an_existing_file_is_refused_and_the_file_kept(sandbox: Sandbox) -> None:
    directory = sandbox.root / "run"
    directory.mkdir(mode=0o700)
    existing = directory / "notes.txt"
    existing.write_text("precious\n")
    _use_socket(sandbox, existing)
    error = await _unreachable(sandbox, sandbox.root)
    _check(error, sandbox, "exists and is not a socket", "move it away", "set HALLOUMINATE_SOCKET")
    assert existing.read_text() == "precious\n"
    assert daemons_serving(sandbox) == []


async def test_a_socket_path_too_long_for_af_unix(sandbox: Sandbox) -> None:
    long_dir = sandbox.root / ("x" * 120)
    _use_socket(sandbox, long_dir / "d.sock")
    error = await _unreachable(sandbox, sandbox.root)
    size = len(os.fsencode(sandbox.socket))
    _check(error, sandbox, f"is {size} bytes long", "a shorter path")
    assert daemons_serving(sandbox) == []


async def test_connection_refused_and_a_daemon_that_cannot_start(sandbox: Sandbox) -> None:
    # A dead daemon's socket (bound, nobody listening) in a shared directory, where a new daemon refuses
    # to put its socket: the connection is refused and the spawned daemon exits.
    shared = sandbox.root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    stale = shared / "d.sock"
    with socketlib.socket(socketlib.AF_UNIX) as dead:
        dead.bind(str(stale))
    with socketlib.socket(socketlib.AF_UNIX) as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(str(stale))
    _use_socket(sandbox, stale)
    error = await _unreachable(sandbox, sandbox.root)
    _check(error, sandbox, "could not start the daemon", "is shared", "HALLOUMINATE_SOCKET")


async def test_a_daemon_dying_mid_call(sandbox: Sandbox) -> None:
    faults = sandbox.root / "faults"
    faults.mkdir()
    sandbox.env[FAULTS_ENV] = str(faults)
    repo = sandbox.make_repo("dies", wiki=None)
    page = {"cwd": str(repo), "corpus": "repo:dies:wiki", "path": "page.md", "content": "# Page\n\nText.\n"}
    async with mcp_session(sandbox) as session:
        await session.call_tool("list_corpora", {"cwd": str(repo)})  # the daemon runs, the shim is connected
        pid = sandbox.daemon_pid()
        assert pid is not None and pid_alive(pid)
        # The daemon SIGKILLs itself once the write has checked its path: add_markdown is not idempotent,
        # so the shim does not resend it, and the client sees the loss.
        (faults / "after-check.kill").touch()
        with pytest.raises(MCPError) as info:
            await session.call_tool("add_markdown", page)
        deadline = time.monotonic() + 10
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not pid_alive(pid) and not (faults / "after-check.kill").exists(), "the daemon died mid-call"
        _check(info.value, sandbox, "the daemon went away before answering", "send the request again")
        # Retryable indeed: the next call starts a new daemon.
        again = await session.call_tool("add_markdown", page)
        assert again.structured_content["action"] == "created"
    assert sandbox.daemon_pid() not in (None, pid)
