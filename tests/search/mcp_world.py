"""One sandbox, one real daemon and one real MCP stdio session shared by every test of a module.

Indexing a corpus through the real model costs seconds; a module builds its corpora once and each test
then costs one ``tools/call`` (a few milliseconds) instead of a shim start-up and an index run.

The MCP session lives in a background thread with its own event loop, entered and left by one task
(anyio requires it), and tests call it synchronously.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import conftest
from conftest import Sandbox, kill_daemon_of, mcp_session

CallResult = Any  # mcp.types.CallToolResult


class McpClient:
    """A ``hallouminate serve`` subprocess driven by the SDK's stdio client, callable from sync code."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], Future[CallResult]] | None] | None = None
        ready: Future[None] = Future()
        self._session = asyncio.run_coroutine_threadsafe(self._serve(sandbox, ready), self._loop)
        ready.result(timeout=60)

    async def _serve(self, sandbox: Sandbox, ready: Future[None]) -> None:
        self._queue = asyncio.Queue()
        try:
            async with mcp_session(sandbox) as session:
                ready.set_result(None)
                while (item := await self._queue.get()) is not None:
                    tool, arguments, answer = item
                    try:
                        answer.set_result(await session.call_tool(tool, arguments))
                    except Exception as exc:  # MCPError and friends go back to the calling test
                        answer.set_exception(exc)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def call(self, tool: str, arguments: dict[str, Any], timeout: float = 120) -> CallResult:
        answer: Future[CallResult] = Future()
        assert self._queue is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (tool, arguments, answer))
        return answer.result(timeout=timeout)

    def close(self) -> None:
        if self._queue is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        with contextlib.suppress(Exception):
            self._session.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


@contextlib.contextmanager
def module_sandbox(model_cache: Path, baseline_extra: str = "") -> Iterator[Sandbox]:
    """conftest's ``sandbox``, for a whole module: nothing of the test process's environment changes
    (every process of ours gets ``sandbox.env``)."""
    root = Path(tempfile.mkdtemp(prefix="hm-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HALLOUMINATE_"))}
    env.update(
        {
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data"),
            "HALLOUMINATE_SOCKET": str(root / "run" / "d.sock"),
        }
    )
    box = Sandbox(
        root=root,
        env=env,
        socket=root / "run" / "d.sock",
        config_file=root / "config" / "hallouminate" / "config.toml",
    )
    box.write_config(f'[embeddings]\ncache_dir = "{model_cache}"\n{baseline_extra}')
    try:
        yield box
    finally:
        kill_daemon_of(box)
        # A pre-warmed shim host, where the shim has one (conftest knows how to find it).
        stop_host = getattr(conftest, "kill_shim_host_of", None)
        if stop_host is not None:
            stop_host(box)
        for proc in box.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def make_repo(sandbox: Sandbox, name: str, layer_extra: str = "") -> Path:
    """A repository with an empty wiki; ``layer_extra`` is appended to its config layer."""
    repo = sandbox.root / name
    (repo / ".hallouminate" / "wiki").mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text(
        f'[[repository]]\nname = "{name}"\npath = "."\n{layer_extra}'
    )
    return repo


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
