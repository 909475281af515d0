"""One private world per test module for the write tools: XDG dirs, repositories, one daemon shared by the
module's tests (each test opens its own MCP session on it), and the daemon's write fault points armed
through files (``hallouminate.testing_hooks.write_fault_point``).
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession, MCPError

from support.sandbox import Sandbox, private_world

FAULTS_ENV = "HALLOUMINATE_TEST_WRITE_FAULTS"


@dataclass
class World:
    box: Sandbox
    faults: Path  # where the tests arm fault points

    @property
    def state(self) -> Path:
        return Path(self.box.env["XDG_STATE_HOME"]) / "hallouminate"

    def arm(self, point: str, action: str) -> None:
        """Arm one fault (``kill`` or ``pause``) at ``point`` for the next write that reaches it."""
        (self.faults / f"{point}.{action}").touch()

    def disarm(self) -> None:
        for marker in self.faults.iterdir():
            marker.unlink()

    async def reached(self, point: str, timeout: float = 20) -> None:
        marker = self.faults / f"{point}.reached"
        deadline = time.monotonic() + timeout
        while not marker.exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"the write never reached fault point {point!r}")
            await asyncio.sleep(0.01)
        marker.unlink()

    def release(self, point: str) -> None:
        (self.faults / f"{point}.go").touch()


@contextmanager
def world(model_cache: Path, *, start_daemon: bool = True) -> Iterator[World]:
    """The module's world (the environment is also set in-process, for direct daemon clients)."""
    with private_world(
        model_cache,
        prefix="hmw-",
        extra_env=lambda root: {FAULTS_ENV: str(root / "faults")},
        stop_signal=signal.SIGKILL,
    ) as box:
        faults = box.root / "faults"
        faults.mkdir()
        if start_daemon:
            box.start_daemon()
        yield World(box, faults)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call's structured result (its text content must not be empty)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result
    assert result.content and result.content[0].text  # type: ignore[union-attr]
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: Any) -> MCPError:
    """The -32602 a tool call must fail with."""
    try:
        await session.call_tool(tool, arguments)
    except MCPError as exc:
        assert exc.code == -32602, (tool, arguments.get("path"), exc.code, exc.message)
        return exc
    raise AssertionError(f"{tool} accepted {arguments.get('path')!r}")


def problem(error: MCPError) -> str | None:
    data = error.data if isinstance(error.data, dict) else {}
    return data.get("problem")


def temp_files(root: Path) -> list[Path]:
    """Our temp files anywhere under ``root`` (none may survive a write, refused or not)."""
    return [p for p in root.rglob(".hallouminate-write.*")]
