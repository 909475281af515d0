"""One private world per test module for the write tools: XDG dirs, repositories, one daemon shared by the
module's tests (each test opens its own MCP session on it), and the daemon's write fault points armed
through files (``hallouminate.wiki.faults``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, MCPError

from conftest import Sandbox, kill_daemon_of, kill_shim_host_of

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
    root = Path(tempfile.mkdtemp(prefix="hmw-", dir="/tmp"))  # short: socket paths are limited
    faults = root / "faults"
    faults.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data"),
            "HALLOUMINATE_SOCKET": str(root / "run" / "d.sock"),
            FAULTS_ENV: str(faults),
        }
    )
    box = Sandbox(
        root=root,
        env=env,
        socket=root / "run" / "d.sock",
        config_file=root / "config" / "hallouminate" / "config.toml",
    )
    box.write_config(f'[embeddings]\ncache_dir = "{model_cache}"\n')
    patch = pytest.MonkeyPatch()
    for key in list(os.environ):
        if key.startswith(("XDG_", "HALLOUMINATE_")):
            patch.delenv(key)
    for key, value in env.items():
        if key.startswith(("XDG_", "HALLOUMINATE_")) or key == "HOME":
            patch.setenv(key, value)
    try:
        if start_daemon:
            box.start_daemon()
        yield World(box, faults)
    finally:
        kill_daemon_of(box, signal.SIGKILL)
        kill_shim_host_of(box)  # the warm shim host the MCP sessions started
        for proc in box.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        patch.undo()
        shutil.rmtree(root, ignore_errors=True)


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
