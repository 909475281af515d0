"""A daemon with its HTTP listener enabled, over an indexed repository, and the clients that reach it.

``http_world`` starts the daemon with ``[http] enabled`` in the baseline config (``extra_http`` adds keys to
that table) and ``root`` = the sandbox root, so every face that takes no cwd sees the test's repository;
``mcp_http_session`` is the Python SDK's Streamable HTTP client.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from support.sandbox import SMALL_WIKI, Sandbox, hm, private_world

if TYPE_CHECKING:
    import httpx2
    from mcp import ClientSession


@dataclass
class HttpWorld:
    sandbox: Sandbox
    repo: Path
    base_url: str

    @property
    def endpoint_file(self) -> Path:
        return endpoint_file(self.sandbox)


def endpoint_file(sandbox: Sandbox) -> Path:
    """Where the daemon writes its base URL while it listens (KuraDB's ``endpoint`` file)."""
    return sandbox.socket.with_name(sandbox.socket.name + ".endpoint")


def wait_for_endpoint(sandbox: Sandbox, timeout: float = 60.0) -> str:
    """The base URL once the listener is up (the endpoint file is written after it listens)."""
    deadline = time.monotonic() + timeout
    path = endpoint_file(sandbox)
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            text = path.read_text().strip()
            if text:
                return text
        time.sleep(0.05)
    raise AssertionError(f"no {path} after {timeout} s; daemon log:\n{sandbox.daemon_log_text()[-3000:]}")


@contextlib.contextmanager
def http_world(
    model_cache: Path,
    *,
    pages: Sequence[str] | None = SMALL_WIKI,
    extra_http: str = "",
    index: bool = True,
    extra_env: dict[str, str] | None = None,
) -> Iterator[HttpWorld]:
    """A private world whose daemon listens on HTTP (a random loopback port), over one repository
    ``sample`` (``pages`` of the sample wiki), indexed unless ``index`` is false; ``extra_env`` reaches
    the daemon (test hooks)."""
    env = dict(extra_env or {})
    with private_world(model_cache, prefix="hm-http-", extra_env=lambda _root: env) as box:
        box.write_config(
            box.config_file.read_text() + f'\n[http]\nenabled = true\nroot = "{box.root}"\n{extra_http}'
        )
        repo = box.make_repo("sample", pages=pages)
        if index:
            done = hm(box, "index", cwd=repo)
            assert done.returncode == 0, done.stdout + done.stderr
        else:
            box.start_daemon()
        # `index` auto-spawned the daemon (or we started it): the listener comes up with it.
        yield HttpWorld(box, repo, wait_for_endpoint(box))


@contextlib.asynccontextmanager
async def mcp_http_session(
    url: str, *, http_client: httpx2.AsyncClient | None = None
) -> AsyncIterator[ClientSession]:
    """The Python SDK's Streamable HTTP client on ``url`` (a face's endpoint), initialized."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url, http_client=http_client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
