"""Shared helpers of the fault, bounds and read-path-attack tests: a private world whose daemon is started the
way a test needs it (inside its own mount namespace, with extra environment), and MCP calls that return the
structured result or the error.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, MCPError

from support.sandbox import Sandbox, pid_alive, private_world, wait_for_socket

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@dataclass
class World:
    box: Sandbox

    @property
    def store(self) -> Path:
        return Path(self.box.env["XDG_DATA_HOME"]) / "hallouminate" / "lancedb"

    @property
    def log(self) -> Path:
        return self.box.daemon_log

    @property
    def pid(self) -> int:
        pid = self.box.daemon_pid()
        assert pid is not None and pid_alive(pid), "the daemon is not running"
        return pid

    def start(
        self, *, wrapper: tuple[str, ...] = (), preexec_fn: Callable[[], None] | None = None
    ) -> subprocess.Popen[bytes]:
        """The daemon, its output in a file: a pipe nobody reads would block it once full (and a fault
        test makes it print tracebacks)."""
        with open(self.box.root / "daemon.out", "ab") as out:
            proc = subprocess.Popen(
                [*wrapper, sys.executable, "-m", "hallouminate", "daemon", "run"],
                env=self.box.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec_fn,
            )
        self.box.procs.append(proc)
        wait_for_socket(self.box.socket, proc)
        return proc

    def in_daemon_mounts(self, *command: str) -> None:
        """Run ``command`` inside the daemon's private mount namespace (see ``PRIVATE_MOUNTS``)."""
        subprocess.run(
            ["nsenter", "-t", str(self.pid), "-m", "--", *command], check=True, capture_output=True
        )


# The daemon in a mount namespace of its own: a mount made there (a read-only bind over the store) is seen by
# the daemon alone and disappears with it, so a test never leaves a mount behind on the machine.
PRIVATE_MOUNTS = ("unshare", "--mount", "--propagation", "private")


@contextlib.contextmanager
def world(model_cache: Path, *, config: str = "") -> Iterator[World]:
    """A module's private world (XDG dirs, socket, baseline config), also set in-process for direct clients."""
    with private_world(model_cache, prefix="hmf-", baseline_extra=config, stop_signal=signal.SIGKILL) as box:
        yield World(box)


def write_pages(wiki: Path, pages: dict[str, str]) -> None:
    for rel, text in pages.items():
        (wiki / rel).parent.mkdir(parents=True, exist_ok=True)
        (wiki / rel).write_text(text)


async def ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call's structured result; an error answer fails the test with its message."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as exc:
        raise AssertionError(f"{tool} failed: {exc.code} {exc.message}") from None
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def fails(session: ClientSession, tool: str, code: int, **arguments: Any) -> MCPError:
    """The MCP error a tool call must answer with (``code``: -32602 or -32603)."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as exc:
        assert exc.code == code, (tool, exc.code, exc.message)
        return exc
    raise AssertionError(f"{tool} did not fail: {str(result.structured_content)[:300]}")


def paths_of(found: dict[str, Any]) -> list[str]:
    return sorted(doc["path"] for doc in found["docs"])


async def until(predicate: Callable[[], Any], timeout: float = 30, what: str = "condition") -> None:
    import asyncio

    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)
