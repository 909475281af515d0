"""One sandbox, one real daemon and one real MCP stdio session shared by every test of a module.

Indexing a corpus through the real model costs seconds; a module builds its corpora once and each test
then costs one ``tools/call`` (a few milliseconds) instead of a shim start-up and an index run.

The MCP session lives in a background thread with its own event loop, entered and left by one task
(anyio requires it), and tests call it synchronously.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from support.sandbox import Sandbox, mcp_session, private_world

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
    """The ``sandbox`` fixture's world, for a whole module: nothing of the test process's environment changes
    (every process of ours gets ``sandbox.env``)."""
    with private_world(model_cache, baseline_extra=baseline_extra, in_process=False) as box:
        yield box


def make_repo(sandbox: Sandbox, name: str, layer_extra: str = "") -> Path:
    """A repository with an empty wiki; ``layer_extra`` is appended to its config layer."""
    repo = sandbox.root / name
    (repo / ".hallouminate" / "wiki").mkdir(parents=True)
    (repo / ".hallouminate" / "config.toml").write_text(
        f'[[repository]]\nname = "{name}"\npath = "."\n{layer_extra}'
    )
    return repo
